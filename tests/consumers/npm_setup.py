"""Install npm packages (speedscope and ajv, or those given) from the npm
registry into a cache directory (once); returns its node_modules, or skips
the test when npm cannot."""
import fcntl
import os
import shutil
import subprocess

from common import skip

PACKAGES = ["speedscope@1", "ajv@8"]


def node_modules(packages=None):
    packages = packages or PACKAGES
    cache = os.environ.get("NPM_CACHE_DIR")
    if not cache:
        skip("NPM_CACHE_DIR is not set")
    os.makedirs(cache, exist_ok=True)
    modules = os.path.join(cache, "node_modules")
    if not shutil.which("npm") or not shutil.which("node"):
        skip("node/npm not installed")
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # tests may run in parallel
        ready = all(os.path.isdir(os.path.join(modules, p.split("@")[0])) for p in packages)
        if not ready:
            r = subprocess.run(["npm", "install", "--prefix", cache, "--no-audit", "--no-fund",
                                "--silent", *packages], capture_output=True, text=True,
                               timeout=600)
            if r.returncode != 0:
                skip("npm install failed (no registry?): " + r.stderr[-500:])
    return modules
