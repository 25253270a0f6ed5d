#!/usr/bin/python3
"""`scopeprof flame`: well-formed SVG with one frame per distinct call path
(flame graph) or per call (chart), rendered by headless chromium to PNG."""
import os
import subprocess
import xml.etree.ElementTree as ET

from common import chromium, chromium_args, fail, make_input, scopeprof, workdir

NS = "{http://www.w3.org/2000/svg}"
d = workdir("flame")
h5, truth = make_input(d)


def frames(path):
    root = ET.parse(path).getroot()  # raises on malformed XML
    gs = [g for g in root.iter(NS + "g") if g.get("class") == "frame"]
    for g in gs:
        if g.find(NS + "rect") is None or g.find(NS + "title") is None:
            fail("frame without rect/title")
    return gs


svg = os.path.join(d, "flame.svg")
scopeprof("flame", h5, "-o", svg)
paths = {c["path"] for c in truth["calls"]}
gs = frames(svg)
if len(gs) != len(paths):
    fail(f"{len(gs)} frames for {len(paths)} distinct call paths")
titles = [g.find(NS + "title").text for g in gs]
if not any("solve  (solver.c:42)" in t for t in titles):
    fail("source file:line missing from titles")
# calls N in the title matches the number of calls on the path
rec = [t for t in titles if t.startswith("rec")]
if sorted(int(t.split("calls ")[1].split(",")[0]) for t in rec) != [1, 1, 1, 1]:
    fail(f"rec frames: {rec}")

scopeprof("flame", h5, "-o", os.path.join(d, "r1.svg"), "--ranks", "1")
paths1 = {c["path"] for c in truth["calls"] if c["rank"] == 1}
if len(frames(os.path.join(d, "r1.svg"))) != len(paths1):
    fail("--ranks 1 frame count")

chart = os.path.join(d, "chart.svg")
scopeprof("flame", h5, "--chart", "-o", chart)
if len(frames(chart)) != len(truth["calls"]):
    fail(f"chart: {len(frames(chart))} frames for {len(truth['calls'])} calls")

png = os.path.join(d, "flame.png")
subprocess.run([chromium(), *chromium_args(d), "--screenshot=" + png, "--window-size=1200,400",
                "file://" + svg], capture_output=True, timeout=180)
if not os.path.exists(png):
    fail("chromium did not render the SVG")
with open(png, "rb") as f:
    head = f.read(24)
if head[:8] != b"\x89PNG\r\n\x1a\n" or int.from_bytes(head[16:20], "big") != 1200:
    fail("not a 1200-px wide PNG")
print(f"ok: {len(gs)} frames, rendered to {png}")
