#!/usr/bin/python3
"""`scopeprof export speedscope`: valid against speedscope's own file-format
schema (npm package, ajv), balanced non-decreasing events, and opened by
speedscope's web app in headless chromium showing the expected profiles."""
import base64
import json
import os
import subprocess

from common import chromium, chromium_args, fail, make_input, scopeprof, workdir
from npm_setup import node_modules

d = workdir("speedscope")
h5, truth = make_input(d)
out = os.path.join(d, "run.speedscope.json")
scopeprof("export", "speedscope", h5, "-o", out)
doc = json.load(open(out))

# Balanced, non-decreasing, frames by name; profile names from the lanes.
threads = {int(r): dict((i, n) for i, n in v) for r, v in truth["threads"].items()}
expected_names = sorted(f"rank {c['rank']} - {threads[c['rank']][c['thread']]}"
                        for c in {(c["rank"], c["thread"]): c for c in truth["calls"]}.values())
names = sorted(p["name"] for p in doc["profiles"])
if names != expected_names:
    fail(f"profile names {names} != {expected_names}")
frames = [f["name"] for f in doc["shared"]["frames"]]
if sorted(frames) != sorted({c["region"] for c in truth["calls"]}):
    fail(f"frames {frames}")
opened = 0
for p in doc["profiles"]:
    stack, last = [], float("-inf")
    for ev in p["events"]:
        if ev["at"] < last:
            fail(f"{p['name']}: time goes backwards at {ev}")
        last = ev["at"]
        if ev["type"] == "O":
            stack.append(ev["frame"])
            opened += 1
        elif not stack or stack.pop() != ev["frame"]:
            fail(f"{p['name']}: unbalanced close {ev}")
    if stack:
        fail(f"{p['name']}: {len(stack)} frames never closed")
if opened != len(truth["calls"]):
    fail(f"{opened} opened frames for {len(truth['calls'])} calls")

modules = node_modules()
r = subprocess.run(["node", os.path.join(os.path.dirname(__file__), "validate_speedscope.js"),
                    modules, out], capture_output=True, text=True)
if r.returncode != 0:
    fail("speedscope schema validation failed:\n" + r.stdout + r.stderr)
print(r.stdout.strip())

# The app loads a profile given as #localProfilePath=<js calling
# speedscope.loadFileFromBase64>, which is what its own CLI does.
loader = os.path.join(d, "load.js")
with open(loader, "w") as f:
    f.write("speedscope.loadFileFromBase64(%s, %s)" % (
        json.dumps(os.path.basename(out)), json.dumps(base64.b64encode(open(out, "rb").read()).decode())))
index = os.path.join(modules, "speedscope", "dist", "release", "index.html")
r = subprocess.run([chromium(), *chromium_args(d), "--allow-file-access-from-files",
                    "--virtual-time-budget=10000", "--dump-dom",
                    f"file://{index}#localProfilePath={loader}"],
                   capture_output=True, text=True, timeout=180)
dom = r.stdout
if "Something went wrong" in dom or "Unrecognized format" in dom:
    fail("speedscope reported an import error:\n" + dom[-2000:])
missing = [n for n in expected_names if n not in dom]
if missing:
    fail(f"speedscope's page does not show {missing}; DOM tail:\n{dom[-2000:]}")
print(f"ok: speedscope app shows {len(expected_names)} profiles")
