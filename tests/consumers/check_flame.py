#!/usr/bin/python3
"""`scopeprof flame`: well-formed SVG with one frame per distinct call path
(flame graph) or per call (chart), rendered by headless chromium to PNG.
Inputs: the synthetic file and files written by real programs under the shim
(common.inputs); chromium renders them all at once."""
import os
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict

from common import chromium, chromium_args, fail, inputs, scopeprof, workdir

NS = "{http://www.w3.org/2000/svg}"


def frames(path):
    root = ET.parse(path).getroot()  # raises on malformed XML
    gs = [g for g in root.iter(NS + "g") if g.get("class") == "frame"]
    for g in gs:
        if g.find(NS + "rect") is None or g.find(NS + "title") is None:
            fail("frame without rect/title")
    return gs


d = workdir("flame")
renders = []
for name, h5, truth in inputs(d):
    svg = os.path.join(d, name + "-flame.svg")
    scopeprof("flame", *h5, "-o", svg)
    paths = {c["path"] for c in truth["calls"]}
    gs = frames(svg)
    if len(gs) != len(paths):
        fail(f"{name}: {len(gs)} frames for {len(paths)} distinct call paths")
    titles = [g.find(NS + "title").text for g in gs]
    for region, (file, line) in truth["sources"].items():
        if not any(t.startswith(f"{region}  ({file}:{line})") for t in titles):
            fail(f"{name}: source {file}:{line} of {region} missing from titles")
    # "calls N" in the titles: per region, the calls of each of its call paths
    want, got = defaultdict(Counter), defaultdict(list)
    for c in truth["calls"]:
        want[c["region"]][c["path"]] += 1
    for t in titles:
        got[t.split("\n")[0].split("  (")[0]].append(int(t.split("calls ")[1].split(",")[0]))
    if set(got) != set(want):
        fail(f"{name}: frames for regions {sorted(got)}, expected {sorted(want)}")
    for region in want:
        if sorted(got[region]) != sorted(want[region].values()):
            fail(f"{name}: {region} frames call counts {sorted(got[region])}, "
                 f"expected {sorted(want[region].values())}")
    if name == "synthetic" and not any("solve  (solver.c:42)" in t for t in titles):
        fail("source file:line missing from titles")

    # Ranks past 0 alone (multi-rank inputs).
    for rank in sorted({c["rank"] for c in truth["calls"]} - {0}):
        one = os.path.join(d, f"{name}-r{rank}.svg")
        scopeprof("flame", *h5, "-o", one, "--ranks", str(rank))
        paths1 = {c["path"] for c in truth["calls"] if c["rank"] == rank}
        if len(frames(one)) != len(paths1):
            fail(f"{name}: --ranks {rank} frame count")

    chart = os.path.join(d, name + "-chart.svg")
    scopeprof("flame", *h5, "--chart", "-o", chart)
    if len(frames(chart)) != len(truth["calls"]):
        fail(f"{name}: chart: {len(frames(chart))} frames for {len(truth['calls'])} calls")

    png = os.path.join(d, name + "-flame.png")
    app = subprocess.Popen([chromium(), *chromium_args(os.path.join(d, name)),
                            "--screenshot=" + png, "--window-size=1200,400", "file://" + svg],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    renders.append((name, len(gs), png, app))

for name, count, png, app in renders:
    app.wait(timeout=180)
    if not os.path.exists(png):
        fail(f"{name}: chromium did not render the SVG")
    with open(png, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or int.from_bytes(head[16:20], "big") != 1200:
        fail(f"{name}: not a 1200-px wide PNG")
    print(f"ok: {name}: {count} frames, rendered to {png}")
