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


def frames(path, with_merged=False):
    """The frames of one call path (graph) or call (chart); with_merged also
    the grey "(n calls)" frames standing for those narrower than a pixel."""
    root = ET.parse(path).getroot()  # raises on malformed XML
    gs = [g for g in root.iter(NS + "g") if g.get("class") == "frame"]
    merged = [g for g in root.iter(NS + "g") if g.get("class") == "frame merged"]
    for g in gs + merged:
        if g.find(NS + "rect") is None or g.find(NS + "title") is None:
            fail("frame without rect/title")
    return (gs, merged) if with_merged else gs


def merged_count(merged, attr):
    return sum(int(g.get(attr)) for g in merged)


d = workdir("flame")
renders = []
for name, h5, truth in inputs(d):
    svg = os.path.join(d, name + "-flame.svg")
    scopeprof("flame", *h5, "-o", svg)
    paths = {c["path"] for c in truth["calls"]}
    gs, merged = frames(svg, with_merged=True)
    if len(gs) + merged_count(merged, "data-paths") != len(paths):
        fail(f"{name}: {len(gs)} frames + {merged_count(merged, 'data-paths')} merged paths "
             f"for {len(paths)} distinct call paths")
    if merged:
        # Paths narrower than a pixel are merged (with their subtrees, not
        # drawn): the drawn ones are the widest, checked by count above.
        print(f"note: {name}: {len(merged)} merged frame(s) stand for "
              f"{merged_count(merged, 'data-paths')} call path(s)")
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
    if not merged and set(got) != set(want):
        fail(f"{name}: frames for regions {sorted(got)}, expected {sorted(want)}")
    for region in want if not merged else []:
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
        g1, m1 = frames(one, with_merged=True)
        if len(g1) + merged_count(m1, "data-paths") != len(paths1):
            fail(f"{name}: --ranks {rank} frame count")

    chart = os.path.join(d, name + "-chart.svg")
    scopeprof("flame", *h5, "--chart", "-o", chart)
    cg, cm = frames(chart, with_merged=True)
    # A merged frame counts its calls and those nested inside them.
    if len(cg) + merged_count(cm, "data-calls") != len(truth["calls"]):
        fail(f"{name}: chart: {len(cg)} frames + {merged_count(cm, 'data-calls')} merged calls "
             f"for {len(truth['calls'])} calls")

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

# Size bound: a 2-million-call run as a chart and a graph stays small and
# valid XML (frames narrower than a pixel merged into "(n calls)").
big = os.path.join(d, "big.h5")
subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "make_big_profile.py"),
                big, "2000000", "2"], check=True, stdout=subprocess.DEVNULL)
for args, what in ((["--chart"], "chart"), ([], "graph")):
    out = os.path.join(d, f"big-{what}.svg")
    scopeprof("flame", big, *args, "-o", out)
    size = os.path.getsize(out)
    if size > 20 << 20:
        fail(f"2 M-call flame {what}: {size} bytes, above 20 MiB")
    gs, merged = frames(out, with_merged=True)
    if what == "chart" and len(gs) + merged_count(merged, "data-calls") != 2000000:
        fail(f"2 M-call chart: {len(gs)} frames + {merged_count(merged, 'data-calls')} merged "
             "calls, not 2000000")
    print(f"ok: 2 M-call flame {what}: {size} bytes, {len(gs)} frames, {len(merged)} merged")

# --from/--to: the chart is the window (frames inside the drawing), hover
# times count from the run start (the window starts 5 ms after it).
win = os.path.join(d, "big-window.svg")
scopeprof("flame", big, "--chart", "--from", "0.005", "--to", "0.0052", "-o", win)
gs, merged = frames(win, with_merged=True)
if len(gs) < 100:
    fail(f"window chart: only {len(gs)} frames drawn one by one")
starts = []
for g in gs:
    r = g.find(NS + "rect")
    x, w = float(r.get("x")), float(r.get("width"))
    if x < 10 - 1e-6 or x + w > 1190 + 0.01:
        fail(f"window chart: frame at x={x} w={w} outside the drawing")
    starts.append(float(g.find(NS + "title").text.split("start ")[1].split(" ms")[0]))
if min(starts) < 4.99 or max(starts) > 5.2:
    fail(f"window chart: hover starts {min(starts)}..{max(starts)} ms, not within 5..5.2 ms")
print(f"ok: window chart: {len(gs)} frames, starts {min(starts):.4f}..{max(starts):.4f} ms")
