#!/usr/bin/python3
"""`scopeprof flame --diff`: the differential flame graph of two runs of
tests/programs/compare_work under the shim (B: assemble does 5x the work,
smooth 1/10, a new region refine), rendered by headless chromium; the PNG
must show the red of the slower frame and the blue of the faster one, where
the SVG puts them."""
import os
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib

from common import chromium, chromium_args, fail, scopeprof, workdir

NS = "{http://www.w3.org/2000/svg}"


def run(d, name, env_extra):
    out = os.path.join(d, name)
    os.mkdir(out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    env["LD_PRELOAD"] = os.environ["SCOPEPROF_SHIM"]
    env.update(env_extra)
    program = os.path.join(os.environ["SCOPEPROF_PROGRAMS"], "compare_work")
    r = subprocess.run([program, "100"], cwd=out, env=env, capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        fail(f"compare_work: {r.stderr}")
    return out


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB/RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path} is not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if depth != 8 or colour not in (2, 6):
        fail(f"{path}: PNG depth {depth} colour type {colour} not handled")
    bpp = 3 if colour == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


d = workdir("diff-flame")
a = run(d, "a", {})
b = run(d, "b", {"SCOPEPROF_TEST_SLOWER": "assemble:400", "SCOPEPROF_TEST_FASTER": "smooth:90",
                 "SCOPEPROF_TEST_VARIANT": "new"})
svg = os.path.join(d, "diff.svg")
scopeprof("flame", "--diff", a, b, "-o", svg)
root = ET.parse(svg).getroot()
frames = {}
for g in root.iter(NS + "g"):
    if g.get("class") == "frame":
        rect = g.find(NS + "rect")
        frames[g.get("data-n")] = (float(rect.get("x")), float(rect.get("y")),
                                   float(rect.get("width")), rect.get("fill"))
if set(frames) != {"main", "setup", "solve", "assemble", "smooth", "refine"}:
    fail(f"frames {sorted(frames)}")
png = os.path.join(d, "diff.png")
height = int(float(root.get("height")))
subprocess.run([chromium(), *chromium_args(d), "--screenshot=" + png,
                f"--window-size=1200,{height + 300}", "file://" + svg],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180)
if not os.path.exists(png):
    fail("chromium did not render the SVG")
width, h, rows = png_pixels(png)
for name, want in (("assemble", "red"), ("smooth", "blue")):
    x, y, w, fill = frames[name]
    # The SVG's colour has the right hue (how strong depends on the frame's
    # share of the graph: below 1 % it is paler by design, and under load
    # smooth's share moves around 1 %, so a fixed margin of 60 once failed)
    fr, fg, fb = (int(v) for v in fill[fill.index("(") + 1:fill.index(")")].split(","))
    hue_ok = fr > fb if want == "red" else fb > fr
    if not hue_ok:
        fail(f"{name}: SVG fill {fill}, expected {want}")
    # ... and the browser draws that colour, just inside the top left
    # corner, away from the label text
    px, py = int(x + 2), int(y + 2)
    r, g, bl = rows[py][px]
    ok = max(abs(r - fr), abs(g - fg), abs(bl - fb)) <= 8 and (r > bl if want == "red" else bl > r)
    if not ok:
        fail(f"{name}: pixel ({px},{py}) is rgb({r},{g},{bl}), SVG fill {fill}, expected {want}")
    print(f"ok: {name} rendered {want}: rgb({r},{g},{bl}) at ({px},{py})")
print(f"ok: differential flame graph rendered to {png} ({width}x{h})")

# Runs with fork edges (OpenMP under the shim): the differential graph is
# grafted on the stream (docs/stream.md, "Ranks with fork edges"), the bytes
# of the in-memory path, no rank read whole for the graft.
omp_exe = os.path.join(os.environ["SCOPEPROF_PROGRAMS"], "omp_fork_gomp")
if os.access(omp_exe, os.X_OK):
    omp_files = []
    for name in ("omp-a", "omp-b"):
        out = os.path.join(d, name)
        os.mkdir(out)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
        env.update(LD_PRELOAD=os.environ["SCOPEPROF_SHIM"], OMP_NUM_THREADS="3",
                   SCOPE_PROFILER_OUTPUT=os.path.join(out, "omp"))
        subprocess.run([omp_exe, "nested"], cwd=out, env=dict(env, OMP_MAX_ACTIVE_LEVELS="2"),
                       check=True, capture_output=True, timeout=120)
        omp_files.append(os.path.join(out, "omp_rank00000.h5"))
    runs = {}
    for how, extra in (("streamed", {"SCOPEPROF_DIFF_TRACE": "1", "SCOPEPROF_REPORT_TRACE": "1"}),
                       ("in memory", {"SCOPEPROF_DIFF_IN_MEMORY": "1"})):
        runs[how] = subprocess.run([os.environ["SCOPEPROF"], "flame", "--diff", *omp_files,
                                    "-o", "-"], capture_output=True,
                                   env=dict(os.environ, **extra))
        if runs[how].returncode != 0:
            fail(f"flame --diff of the OpenMP runs ({how}): {runs[how].stderr.decode()}")
    err = runs["streamed"].stderr.decode()
    if err.count(": streamed\n") != 2 or "with fork edges in memory" in err:
        fail(f"flame --diff of the OpenMP runs did not stream:\n{err}")
    if runs["streamed"].stdout != runs["in memory"].stdout:
        fail("flame --diff of the OpenMP runs: the streamed SVG differs from the in-memory one")
    names = {g.get("data-n") for g in ET.fromstring(runs["streamed"].stdout).iter(NS + "g")
             if g.get("class") == "frame"}
    if "omp parallel" not in names:
        fail(f"flame --diff of the OpenMP runs: frames {sorted(names)}")
    print(f"ok: flame --diff of two OpenMP runs streamed, grafted, {len(names)} frames, "
          "the in-memory bytes")
else:
    print("note: omp_fork_gomp not built: the OpenMP part skipped")
