"""Shared by the consumer checks: build the synthetic input, run scopeprof,
locate chromium, exit codes (77 = skipped, for meson)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCOPEPROF = os.environ["SCOPEPROF"]
SKIP = 77


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def skip(msg):
    print("SKIP: " + msg, file=sys.stderr)
    sys.exit(SKIP)


def workdir(name):
    base = os.environ.get("CONSUMER_WORK", tempfile.gettempdir())
    d = tempfile.mkdtemp(prefix=f"consumer-{name}-", dir=base)
    return d


def make_input(d):
    """Schema-3 file written by h5py (not by scopeprof) + its ground truth."""
    h5, truth = os.path.join(d, "run.h5"), os.path.join(d, "truth.json")
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_profile.py"), h5, truth],
                   check=True)
    with open(truth) as f:
        return h5, json.load(f)


def scopeprof(*args, expect=0):
    r = subprocess.run([SCOPEPROF, *args], capture_output=True, text=True)
    if r.returncode != expect:
        fail(f"scopeprof {' '.join(args)} exited {r.returncode}, expected {expect}:\n"
             f"{r.stdout}{r.stderr}")
    return r


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    skip("chromium is not installed (scripts/setup installs it)")


def chromium_args(d):
    return ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--user-data-dir=" + os.path.join(d, "chromium-profile")]
