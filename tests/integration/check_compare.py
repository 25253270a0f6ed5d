#!/usr/bin/python3
"""Comparing runs end to end (`scopeprof diff`, `check`, `flame --diff`):
tests/programs/compare_work runs under the shim, some runs with one region
doing 4x the work (SCOPEPROF_TEST_SLOWER), and the commands are judged on
their exit status, their JSON and CSV (parsed) and the differential SVG
(parsed as XML); two OpenMP runs (fork edges, nested teams) are compared
too, grafted on the stream.

Usage: check_compare.py SCOPEPROF SHIM COMPARE_WORK [MPI_REGIONS_MPICH]

The gate is asked about the median call duration (--metric p50): on this
shared 2-core machine a region's total is dominated by preemption (a few
calls wait milliseconds for a core), which the gate rightly calls noise,
while the median of 1000 short calls doing fixed work moves only with the
work.
The default metric (total) is checked for the false-positive side only."""
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

scopeprof, shim, program = (os.path.abspath(p) for p in sys.argv[1:4])
mpi_regions = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
SLOW = "main > solve > assemble"
SAME_GATE = "50"
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


# assemble does 2 of every step's 40 units of work (a twentieth of main), so
# a planted change of assemble moves main and solve by a twentieth of it
SPLIT = ("1000", "0", "2")


def run_program(tmp, name, extra_env=None, args=SPLIT):
    """One run in its own directory; returns the directory."""
    d = os.path.join(tmp, name)
    os.mkdir(d)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SCOPE_PROFILER_") and not k.startswith("SCOPEPROF_TEST_")}
    first = os.environ.get("SCOPEPROF_TEST_PRELOAD_PREFIX", "")
    env["LD_PRELOAD"] = first + ":" + shim if first else shim
    if "SCOPEPROF_TEST_WRITER_NAMESPACE" in os.environ:
        env["SCOPE_PROFILER_WRITER_NAMESPACE"] = os.environ["SCOPEPROF_TEST_WRITER_NAMESPACE"]
    env.update(extra_env or {})
    out = subprocess.run([program, *args], cwd=d, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert os.path.exists(os.path.join(d, "compare_rank00000.h5")), os.listdir(d)
    return d


TRACE = "scopeprof {}: "
paths_taken = []


def run_sp(args, extra):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env["NO_COLOR"] = "1"
    env.update(extra)
    return subprocess.run([scopeprof, *args], capture_output=True, text=True, env=env)


def output_file(args):
    return args[args.index("-o") + 1] if "-o" in args else None


def sp(*args):
    """The comparing commands run twice, streamed (docs/stream.md) and in
    memory (SCOPEPROF_DIFF_IN_MEMORY=1): same status, output and files."""
    if args[0] not in ("diff", "check") and not (args[0] == "flame" and "--diff" in args):
        return run_sp(args, {})
    r = run_sp(args, {"SCOPEPROF_DIFF_TRACE": "1"})
    out = output_file(args)
    streamed_file = open(out, "rb").read() if out and os.path.exists(out) else None
    m = run_sp(args, {"SCOPEPROF_DIFF_IN_MEMORY": "1"})
    prefix = TRACE.format(args[0])
    traces = [line for line in r.stderr.splitlines(True) if line.startswith(prefix)
              and (": streamed" in line or ": in memory: " in line)]
    paths_taken.extend(traces)
    stderr = "".join(line for line in r.stderr.splitlines(True) if line not in traces)
    check(r.returncode == m.returncode and r.stdout == m.stdout and stderr == m.stderr,
          f"{args}: streamed and in memory differ\n{r.returncode} {m.returncode}\n"
          f"--- streamed\n{r.stdout}{r.stderr}--- in memory\n{m.stdout}{m.stderr}")
    if out:
        in_memory_file = open(out, "rb").read() if os.path.exists(out) else None
        check(streamed_file == in_memory_file, f"{args}: {out} differs streamed / in memory")
    r.stderr = stderr
    return r


def regression_lines(text):
    return [line for line in text.splitlines() if line.startswith("REGRESSION")]


with tempfile.TemporaryDirectory() as tmp:
    # Interleaved, so a change of the machine's load hits both sides alike.
    a, b = [], []
    for i in range(3):
        a.append(run_program(tmp, f"a{i}"))
        b.append(run_program(tmp, f"b{i}", {"SCOPEPROF_TEST_SLOWER": "assemble:300"}))

    # ---- the gate: assemble doing 4x the work (+300 %) is flagged, that
    # region only, at a 100 % gate.  assemble is a twentieth of main's time,
    # so main and solve move by a twentieth of as much (+15 %).  The margins are
    # wide on purpose: on CI's shared VM a whole run of the unchanged
    # program was once 1.3x slower than its neighbour (a 40 % change gated
    # at 25 % measured +28.6 %, 90 % interval +3.6 .. +53.7 %, and one run
    # against one run showed it under 10 % while the unchanged smooth moved
    # over 10 %), a shift of the whole run that one run's calls cannot show.
    # Every verdict here holds while a run is up to 1.5x slower or faster
    # than another; the gate's arithmetic is tested exactly in unit/diff.
    r = sp("check", "--baseline", *a, "--candidate", *b, "--max-regression", "100",
           "--metric", "p50")
    check(r.returncode == 1, f"check A1-3 vs B1-3 (p50): exit {r.returncode}\n{r.stdout}{r.stderr}")
    lines = regression_lines(r.stdout)
    check(len(lines) == 1 and lines[0].startswith(f"REGRESSION  {SLOW}:"),
          f"check names exactly {SLOW}: {lines}\n{r.stdout}")
    # one run per side: the median's interval comes from the calls alone
    r = sp("check", a[0], b[0], "--max-regression", "100", "--metric", "p50")
    check(r.returncode == 1, f"check A1 B1 (p50): exit {r.returncode}\n{r.stdout}{r.stderr}")
    lines = regression_lines(r.stdout)
    check(len(lines) == 1 and lines[0].startswith(f"REGRESSION  {SLOW}:"),
          f"check A1 B1 names exactly {SLOW}: {lines}\n{r.stdout}")
    # the JSON verdict says the same
    r = sp("check", "--baseline", *a, "--candidate", *b, "--max-regression", "100",
           "--metric", "p50", "--format", "json")
    doc = json.loads(r.stdout)
    flagged = [g["key"] for g in doc["regions"] if g["flagged"]]
    check(r.returncode == 1 and flagged == [SLOW] and doc["flagged"] == 1,
          f"check --format json: exit {r.returncode}, flagged {flagged}")
    check(doc["max_regression_pct"] == 100 and doc["scopeprof"] == "check",
          f"check json header: {doc.get('max_regression_pct')} {doc.get('scopeprof')}")
    slow = next(g for g in doc["regions"] if g["key"] == SLOW)
    check(slow["noise"] == "runs" and slow["pct_low"] > 100 and 150 < slow["pct"] < 600,
          f"slowed region: {slow}")

    # ---- three runs of the same program: nothing flagged at SAME_GATE %
    # (a whole run may be up to 1.5x slower than another here, see above)
    # (not p95: its tail moves a few % between runs with the machine's load
    # while each run's calls pin it down tightly - docs/compare.md measures
    # one false positive in 11 pairs; the gate documents p50 for such machines)
    for metric in ("total", "p50", "own", "mean"):
        r = sp("check", "--baseline", a[0], a[1], "--candidate", a[2],
               "--max-regression", SAME_GATE, "--metric", metric)
        check(r.returncode == 0 and not regression_lines(r.stdout),
              f"same program, --baseline A1 A2 --candidate A3, {metric}: exit {r.returncode}\n"
              f"{r.stdout}{r.stderr}")
        # Single runs against each other: the metrics docs/compare.md measures
        # and recommends for shared machines.  `own` and `mean` of one run
        # against one run moved by up to 32 % on this VM under load (a
        # region's exclusive time is what preemption hits first); with
        # repetitions (above) they are checked too.
        if metric not in ("total", "p50"):
            continue
        for x, y in ((0, 1), (0, 2), (1, 2)):
            r = sp("check", a[x], a[y], "--max-regression", SAME_GATE, "--metric", metric)
            check(r.returncode == 0 and not regression_lines(r.stdout),
                  f"same program, A{x + 1} vs A{y + 1}, {metric}: exit {r.returncode}\n"
                  f"{r.stdout}{r.stderr}")

    # ---- diff: JSON parsed and checked (calls are exact)
    r = sp("diff", a[0], b[0], "--metric", "calls", "--format", "json")
    check(r.returncode == 0, f"diff --format json: {r.stderr}")
    doc = json.loads(r.stdout)
    for key in ("scopeprof", "format_version", "metric", "unit", "match", "threshold_pct", "a",
                "b", "notes", "regions"):
        check(key in doc, f"diff json has {key}")
    check(doc["scopeprof"] == "diff" and doc["format_version"] == 1 and doc["metric"] == "calls"
          and doc["unit"] == "calls" and doc["match"] == "path", f"diff json header {doc}")
    check(doc["a"][0]["ranks"] == [0] and doc["b"][0]["ranks"] == [0]
          and doc["a"][0]["calls"] == 2004 and doc["a"][0]["wall_ns"] > 0
          and doc["a"][0]["files"] == 1, f"diff json runs {doc['a']} {doc['b']}")
    regions = {g["key"]: g for g in doc["regions"]}
    check(sorted(regions) == ["main", "main > finish", "main > setup", "main > solve",
                              SLOW, "main > solve > smooth"], f"diff json keys {sorted(regions)}")
    for key, calls in (("main", 1), (SLOW, 1000), ("main > solve > smooth", 1000)):
        g = regions[key]
        check(g["a"] == calls and g["b"] == calls and g["delta"] == 0 and g["pct"] == 0
              and g["status"] == "matched" and g["calls_a"] == calls,
              f"diff json {key}: {g}")
    check(regions[SLOW]["name"] == "assemble" and regions[SLOW]["depth"] == 2,
          f"name/depth {regions[SLOW]}")
    # by name: one key per region
    r = sp("diff", a[0], b[0], "--by-name", "--metric", "calls", "--format", "json")
    doc = json.loads(r.stdout)
    check(doc["match"] == "name" and sorted(g["key"] for g in doc["regions"]) ==
          ["assemble", "finish", "main", "setup", "smooth", "solve"], f"--by-name {doc['regions']}")
    # --include selects on both sides
    r = sp("diff", a[0], b[0], "--include", "^(main|smooth)$", "--metric", "calls",
           "--format", "json")
    doc = json.loads(r.stdout)
    check(sorted(g["key"] for g in doc["regions"]) == ["main", "main > smooth"],
          f"--include: {[g['key'] for g in doc['regions']]}")
    # CSV: the documented columns; --threshold hides small changes, --sort name
    r = sp("diff", a[0], b[0], "--metric", "p50", "--format", "csv", "--threshold", SAME_GATE,
           "--sort", "name")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    check(r.returncode == 0 and list(rows[0].keys()) ==
          ["key", "name", "depth", "status", "metric", "a", "b", "delta", "pct", "pct_low",
           "pct_high", "noise", "calls_a", "calls_b"], f"csv header {r.stdout[:200]}")
    check(SLOW in [x["key"] for x in rows] and "main > solve > smooth" not in
          [x["key"] for x in rows] and [x["key"] for x in rows] == sorted(x["key"] for x in rows),
          f"csv --threshold {SAME_GATE} --sort name: {[x['key'] for x in rows]}")
    # text: the header names both runs' wall time, ranks and threads
    r = sp("diff", a[0], b[0])
    check(r.returncode == 0 and r.stdout.count("ranks 1   threads 1   wall ") == 2
          and SLOW in r.stdout, f"diff text:\n{r.stdout}")

    # ---- new and removed regions
    n = run_program(tmp, "new", {"SCOPEPROF_TEST_VARIANT": "new"})
    r = sp("diff", a[0], n, "--metric", "calls", "--format", "json")
    regions = {g["key"]: g for g in json.loads(r.stdout)["regions"]}
    check(regions["main > solve > refine"]["status"] == "new"
          and regions["main > solve > refine"]["b"] == 1000
          and regions["main > solve > refine"]["pct"] is None, f"new: {regions}")
    check(regions["main > finish"]["status"] == "removed" and regions["main > finish"]["a"] == 1
          and regions["main > finish"]["b"] == 0, f"removed: {regions['main > finish']}")
    r = sp("diff", a[0], n, "--metric", "calls")
    check("new" in r.stdout and "removed" in r.stdout, f"diff text new/removed:\n{r.stdout}")
    r = sp("check", a[0], n, "--max-regression", "10", "--metric", "calls")
    check(r.returncode == 0 and "new region  main > solve > refine" in r.stdout,
          f"check without --fail-on-new: exit {r.returncode}\n{r.stdout}")
    r = sp("check", a[0], n, "--max-regression", "10", "--metric", "calls", "--fail-on-new")
    check(r.returncode == 1 and "NEW REGION  main > solve > refine" in r.stdout,
          f"check --fail-on-new: exit {r.returncode}\n{r.stdout}")

    # ---- differential flame graph: XML, colours by change of own time
    f = run_program(tmp, "flame", {"SCOPEPROF_TEST_SLOWER": "assemble:400",
                                   "SCOPEPROF_TEST_FASTER": "smooth:90",
                                   "SCOPEPROF_TEST_VARIANT": "new"})
    svg = os.path.join(tmp, "diff.svg")
    r = sp("flame", "--diff", a[0], f, "-o", svg)
    check(r.returncode == 0, f"flame --diff: {r.stderr}")
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    frames = {}
    for g in root.iter(ns + "g"):
        if g.get("class") == "frame":
            fill = g.find(ns + "rect").get("fill")
            rgb = tuple(int(v) for v in fill[4:-1].split(","))
            frames[g.get("data-n")] = (rgb, g.find(ns + "title").text, g.get("data-own-pct"))
    check(sorted(frames) == ["assemble", "main", "refine", "setup", "smooth", "solve"],
          f"svg frames {sorted(frames)} (finish is only in A)")
    red, blue = frames["assemble"][0], frames["smooth"][0]
    check(red[0] > red[2] + 60, f"assemble (5x the work) is red: {red}")
    check(blue[2] > blue[0] + 60, f"smooth (1/10 of the work) is blue: {blue}")
    # new: red, paler when delays elsewhere shrink its share under 1 %
    check(frames["refine"][2] == "new" and frames["refine"][0][0] > frames["refine"][0][2] + 20,
          f"refine (new) is red: {frames['refine']}")
    title = frames["assemble"][1]
    check("\nA: calls 1000" in title and "\nB: calls 1000" in title and "own time +" in title,
          f"tooltip has both runs: {title!r}")
    removed = [t for t in root.iter(ns + "text") if t.get("id") == "removed"]
    check(removed and "main > finish" in (removed[0].text or ""), "removed paths listed")

    # ---- different rank counts: matched by call path, ranks summed, said so
    if mpi_regions and os.path.exists(mpi_regions) and shutil.which("mpiexec.mpich"):
        dirs = []
        for ranks in (2, 4):
            d = os.path.join(tmp, f"mpi{ranks}")
            os.mkdir(d)
            env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
            env["LD_PRELOAD"] = shim
            out = subprocess.run(["mpiexec.mpich", "-n", str(ranks), mpi_regions], cwd=d, env=env,
                                 capture_output=True, text=True, timeout=120)
            assert out.returncode == 0, out.stderr
            dirs.append(d)
        r = sp("diff", dirs[0], dirs[1], "--metric", "calls", "--format", "json")
        doc = json.loads(r.stdout)
        regions = {g["key"]: g for g in doc["regions"]}
        # rank r runs outer r+1 times, 2 inner each
        check(regions["main > outer"]["a"] == 3 and regions["main > outer"]["b"] == 10
              and regions["main > outer > inner"]["a"] == 6
              and regions["main > outer > inner"]["b"] == 20 and regions["main"]["b"] == 4,
              f"ranks aggregated: {regions}")
        check(doc["a"][0]["ranks"] == [0, 1] and doc["b"][0]["ranks"] == [0, 1, 2, 3]
              and doc["a"][0]["files"] == 2 and doc["b"][0]["files"] == 4,
              f"rank lists {doc['a']} {doc['b']}")
        check(any("different rank counts (A 2, B 4)" in note for note in doc["notes"]),
              f"notes {doc['notes']}")
        r = sp("diff", dirs[0], dirs[1])
        check("note: the runs have different rank counts" in r.stdout, r.stdout)
        # a glob and a prefix name the same run as the directory
        r = sp("diff", os.path.join(dirs[0], "scope_profile_rank*.h5"),
               os.path.join(dirs[1], "scope_profile"), "--metric", "calls", "--format", "json")
        doc = json.loads(r.stdout)
        check(r.returncode == 0 and doc["b"][0]["files"] == 4 and doc["a"][0]["files"] == 2,
              f"glob and prefix: {r.stderr}")
    else:
        print("skipped: rank counts (no mpi_regions_mpich or mpiexec.mpich)")

    # ---- report --format json|csv: the tables for scripts
    h5 = os.path.join(a[0], "compare_rank00000.h5")
    r = sp("report", h5, "--format", "json")
    doc = json.loads(r.stdout)
    check(r.returncode == 0 and doc["scopeprof"] == "report" and doc["format_version"] == 1
          and doc["ranks"] == [0] and doc["calls"] == 2004 and doc["files"] == [h5],
          f"report json header: {r.stderr}")
    flat = {x["region"]: x for x in doc["flat"]}
    tree = {x["path"]: x for x in doc["tree"]}
    check(flat["assemble"]["calls"] == 1000 and flat["main"]["calls"] == 1
          and flat["assemble"]["total_ns"] == tree[SLOW]["inclusive_ns"], f"report flat {flat}")
    check(sorted(tree) == ["main", "main > finish", "main > setup", "main > solve", SLOW,
                           "main > solve > smooth"] and tree[SLOW]["parent"] == "main > solve"
          and tree[SLOW]["depth"] == 2 and doc["tree"][0]["path"] == "main",
          f"report tree {sorted(tree)}")
    check(doc["ranks_table"] == [] and len(doc["threads"]) == 1, "one rank: no ranks table")
    r = sp("report", h5, "--format", "csv", "--tree")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    check([x["path"] for x in rows] == [x["path"] for x in doc["tree"]]
          and rows[0].keys() >= {"path", "calls", "inclusive_ns", "exclusive_ns"},
          f"report csv --tree: {r.stdout[:300]}")
    r = sp("report", h5, "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    check({x["region"]: int(x["calls"]) for x in rows}["smooth"] == 1000, "report csv flat")
    r = sp("report", h5, "--format", "csv", "--tree", "--flat")
    check(r.returncode == 2, "report csv with two tables is a usage error")

    # ---- usage: check with one argument points to validate; bad values
    r = sp("check", os.path.join(a[0], "compare_rank00000.h5"))
    check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "validate" in r.stderr,
          f"check FILE: exit {r.returncode}: {r.stderr}")
    r = sp("check", a[0], b[0])
    check(r.returncode == 2 and "--max-regression" in r.stderr, f"check without PCT: {r.stderr}")
    r = sp("diff", a[0], b[0], "--metric", "nope")
    check(r.returncode == 2 and "--metric" in r.stderr, f"bad metric: {r.stderr}")
    r = sp("diff", a[0])
    check(r.returncode == 2, f"diff with one run: {r.returncode}")
    r = sp("diff", a[0], os.path.join(tmp, "missing"))
    check(r.returncode == 1 and len(r.stderr.splitlines()) == 1 and "missing" in r.stderr,
          f"missing run: {r.stderr}")
    r = sp("validate", os.path.join(a[0], "compare_rank00000.h5"))
    check(r.returncode == 0 and r.stdout.startswith("OK "), f"validate: {r.stdout}{r.stderr}")

    # ---- runs with fork edges (OpenMP under the shim, nested teams): the
    # ranks are grafted on the stream and the comparison gets the grafted
    # calls in the in-memory order (docs/stream.md): same bytes, no rank
    # read whole for the graft
    omp_program = os.path.join(os.path.dirname(program), "omp_fork_gomp")
    if os.access(omp_program, os.X_OK):
        omp = []
        for name in ("omp-a", "omp-b"):
            d = os.path.join(tmp, name)
            os.mkdir(d)
            env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
            first = os.environ.get("SCOPEPROF_TEST_PRELOAD_PREFIX", "")
            env.update(LD_PRELOAD=first + ":" + shim if first else shim, OMP_NUM_THREADS="3",
                       OMP_MAX_ACTIVE_LEVELS="2", SCOPE_PROFILER_OUTPUT=os.path.join(d, "omp"))
            if "SCOPEPROF_TEST_WRITER_NAMESPACE" in os.environ:
                env["SCOPE_PROFILER_WRITER_NAMESPACE"] = os.environ["SCOPEPROF_TEST_WRITER_NAMESPACE"]
            out = subprocess.run([omp_program, "nested"], cwd=d, env=env, capture_output=True,
                                 text=True)
            assert out.returncode == 0, out.stderr
            omp.append(os.path.join(d, "omp_rank00000.h5"))
        for args in (("diff", *omp, "--format", "json"), ("diff", *omp, "--metric", "own"),
                     ("check", *omp, "--max-regression", "100000"),
                     ("flame", "--diff", *omp, "-o", os.path.join(tmp, "omp-diff.svg"))):
            r = sp(*args)
            check(r.returncode == 0, f"{args}: exit {r.returncode}: {r.stderr}")
            t = run_sp(args, {"SCOPEPROF_DIFF_TRACE": "1", "SCOPEPROF_REPORT_TRACE": "1"})
            check("with fork edges in memory" not in t.stderr and
                  t.stderr.count(": streamed\n") == 2,
                  f"{args}: not grafted on the stream: {t.stderr}")
        r = sp("diff", *omp, "--format", "json")
        check("omp parallel" in r.stdout, f"OpenMP diff without its regions: {r.stdout[:400]}")
    else:
        print(f"note: {omp_program} not built: the OpenMP comparison skipped")

# Every run of compare_work is one rank file the stream reads; the MPI runs
# (MPI columns) go through the in-memory path, which says why.
streamed = [t for t in paths_taken if t.endswith(": streamed\n")]
check(len(streamed) > 20, f"runs streamed: {len(streamed)} of {len(paths_taken)}")
check(all(t.endswith(": streamed\n") or "MPI columns" in t for t in paths_taken),
      f"paths: {sorted(set(t.split(': ', 2)[-1] for t in paths_taken))}")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all comparisons as expected")
