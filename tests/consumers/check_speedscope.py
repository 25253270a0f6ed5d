#!/usr/bin/python3
"""`scopeprof export speedscope`: valid against speedscope's own file-format
schema (npm package, ajv), balanced non-decreasing events, and opened by
speedscope's web app in headless chromium showing the expected profiles.
Inputs: the synthetic file and files written by real programs under the shim
(common.inputs); the app opens them all at once, one chromium each."""
import base64
import json
import os
import subprocess
from collections import Counter

from common import chromium, chromium_args, fail, inputs, lane_names, scopeprof, workdir
from npm_setup import node_modules

# Profile names the real programs must show (their lanes, from their source).
PROFILES = {
    "threads": ["rank 0 - MainThread"] + [f"rank 0 - solver{i}" for i in range(4)],
    "basic": ["rank 0 - MainThread"],
    "mpi": ["rank 0 - MainThread", "rank 1 - MainThread"],
}

d = workdir("speedscope")
modules = node_modules()
index = os.path.join(modules, "speedscope", "dist", "release", "index.html")
apps = []
for name, h5, truth in inputs(d):
    out = os.path.join(d, name + ".speedscope.json")
    scopeprof("export", "speedscope", *h5, "-o", out)
    doc = json.load(open(out))

    # Balanced, non-decreasing, frames by name; profile names from the lanes.
    threads = lane_names(truth)
    lane_calls = Counter(f"rank {c['rank']} - {threads[c['rank']][c['thread']]}"
                         for c in truth["calls"])
    expected_names = sorted(lane_calls)
    names = sorted(p["name"] for p in doc["profiles"])
    if names != expected_names or sorted(PROFILES.get(name, names)) != names:
        fail(f"{name}: profile names {names} != {expected_names}")
    frames = [f["name"] for f in doc["shared"]["frames"]]
    if sorted(frames) != sorted({c["region"] for c in truth["calls"]}):
        fail(f"{name}: frames {frames}")
    for p in doc["profiles"]:
        stack, last, opened = [], float("-inf"), 0
        for ev in p["events"]:
            if ev["at"] < last:
                fail(f"{name}: {p['name']}: time goes backwards at {ev}")
            last = ev["at"]
            if ev["type"] == "O":
                stack.append(ev["frame"])
                opened += 1
            elif not stack or stack.pop() != ev["frame"]:
                fail(f"{name}: {p['name']}: unbalanced close {ev}")
        if stack:
            fail(f"{name}: {p['name']}: {len(stack)} frames never closed")
        if opened != lane_calls[p["name"]]:
            fail(f"{name}: {p['name']}: {opened} opened frames for {lane_calls[p['name']]} calls")

    r = subprocess.run(["node", os.path.join(os.path.dirname(__file__), "validate_speedscope.js"),
                        modules, out], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{name}: speedscope schema validation failed:\n" + r.stdout + r.stderr)
    print(f"{name}: {r.stdout.strip()}")

    # The app loads a profile given as #localProfilePath=<js calling
    # speedscope.loadFileFromBase64>, which is what its own CLI does.
    loader = os.path.join(d, name + "-load.js")
    with open(loader, "w") as f:
        f.write("speedscope.loadFileFromBase64(%s, %s)" % (
            json.dumps(os.path.basename(out)),
            json.dumps(base64.b64encode(open(out, "rb").read()).decode())))
    app = subprocess.Popen([chromium(), *chromium_args(os.path.join(d, name)),
                            "--allow-file-access-from-files", "--virtual-time-budget=10000",
                            "--dump-dom", f"file://{index}#localProfilePath={loader}"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    apps.append((name, expected_names, app))

for name, expected_names, app in apps:
    dom, _ = app.communicate(timeout=180)
    if "Something went wrong" in dom or "Unrecognized format" in dom:
        fail(f"{name}: speedscope reported an import error:\n" + dom[-2000:])
    missing = [n for n in expected_names if n not in dom]
    if missing:
        fail(f"{name}: speedscope's page does not show {missing}; DOM tail:\n{dom[-2000:]}")
    print(f"ok: {name}: speedscope app shows {len(expected_names)} profiles")
