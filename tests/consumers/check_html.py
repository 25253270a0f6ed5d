#!/usr/bin/python3
"""`scopeprof report -o report.html` in a real browser: Debian's chromium
driven by playwright-core (npm; the system browser through executablePath,
no browser download) opens pages of

  - the synthetic file and files written by real programs under the shim
    (threads, basic, 2-rank Open MPI from common.inputs; a 3-rank Open MPI
    run, the OpenMP program and the 4-rank mpi_calls program of Open MPI and
    MPICH, whose files have MPI columns, when built), call paths and counts
    checked against h5py's reading of the files;
  - a large synthetic run (SCOPEPROF_HTML_BIG_CALLS calls, default 10^7;
    the page must stay under 25 MiB);
  - 1,024 ranks (heatmap binned, slowest rank kept);
  - two runs of the threads program compared (--compare, and told apart by
    their run ids);

and check_html.js checks each (errors, network, sections, numbers,
interactions, without JavaScript) and saves a screenshot next to the page,
in the build directory."""
import collections
import math
import json
import os
import subprocess

import common
from common import chromium, fail, inputs, scopeprof, workdir
from npm_setup import node_modules

HERE = os.path.dirname(os.path.abspath(__file__))
SECTIONS = ["Findings", "Hotspots", "Call tree", "Flame graph", "Timeline", "Load balance",
            "Threads"]
BIG_CALLS = int(os.environ.get("SCOPEPROF_HTML_BIG_CALLS", "10000000"))


TRACES = {}


def page(d, name, files, truth=None, extra=(), **expect):
    """The page, streamed (docs/stream.md); the in-memory path
    (SCOPEPROF_REPORT_IN_MEMORY=1) must write the same bytes."""
    html = os.path.join(d, name + ".html")
    r = subprocess.run([common.SCOPEPROF, "report", *files, *extra, "-o", html],
                       capture_output=True, text=True,
                       env=dict(os.environ, SCOPEPROF_REPORT_TRACE="1"))
    if r.returncode != 0:
        fail(f"scopeprof report {name} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    TRACES[name] = [line for line in r.stderr.splitlines()
                    if line.startswith("scopeprof report: html: ")]
    # a rank with fork edges (the OpenMP run) is grafted on the stream too
    TRACES[name] += [line for line in r.stderr.splitlines() if "with fork edges in memory" in line]
    in_memory = os.path.join(d, name + ".in-memory.html")
    scopeprof_env = dict(os.environ, SCOPEPROF_REPORT_IN_MEMORY="1")
    m = subprocess.run([common.SCOPEPROF, "report", *files, *extra, "-o", in_memory],
                       capture_output=True, text=True, env=scopeprof_env)
    if m.returncode != 0:
        fail(f"scopeprof report {name} (in memory) exited {m.returncode}:\n{m.stderr}")
    with open(html, "rb") as a, open(in_memory, "rb") as b:
        if a.read() != b.read():
            fail(f"{name}: the streamed page differs from the in-memory one ({html}, {in_memory})")
    os.unlink(in_memory)
    spec = {"name": name, "html": html, "screenshot": os.path.join(d, name + ".png"),
            "sections": SECTIONS + expect.pop("more_sections", []), "absent": ["MPI"]}
    if truth is not None:
        spec["paths"] = dict(collections.Counter(c["path"] for c in truth["calls"]))
        # min, max and p95 (nearest rank) of one call, per call path
        durs = collections.defaultdict(list)
        for c in truth["calls"]:
            durs[c["path"]].append(c["end"] - c["start"])
        spec["stats"] = {p: [min(v), max(v), sorted(v)[math.ceil(0.95 * len(v)) - 1]]
                         for p, v in durs.items()}
        spec["facts"] = {"ranks": str(len({c["rank"] for c in truth["calls"]})),
                         "calls": str(len(truth["calls"]))}
        # MPI programs run under the shim record their MPI calls as regions
        # (MPI_Barrier, ...): the page shows its MPI section for them.
        if any(c["region"].startswith("MPI_") for c in truth["calls"]):
            spec["sections"] = spec["sections"] + ["MPI"]
            spec["absent"] = []
    spec.update(expect)
    return spec


def big(d, name, calls, ranks, *flags):
    h5 = os.path.join(d, name + ".h5")
    r = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_big_profile.py"), h5,
                        str(calls), str(ranks), *flags], check=True, capture_output=True,
                       text=True)
    return h5, json.loads(r.stdout)


def main():
    browser = chromium()
    modules = node_modules(["playwright-core@1"])
    d = workdir("html", keep=True)
    pages = [page(d, name, files, truth) for name, files, truth in inputs(d)]

    import make_profile
    # mpi_calls: every MPI call the shim wraps, with the MPI columns
    # (events/mpi_*), under both MPIs; the page must stream (below).
    extra_programs = [("mpi3", ["mpi/mpi_regions_openmpi"], 3, "openmpi"),
                      ("openmp", ["omp_for"], 0, None),
                      ("mpi-calls-openmpi", ["mpi/mpi_calls_openmpi", "100"], 4, "openmpi"),
                      ("mpi-calls-mpich", ["mpi/mpi_calls_mpich", "100"], 4, "mpich")]
    mpi_columns = []
    for name, argv, ranks, mpi in extra_programs:
        exe = os.path.join(os.environ["SCOPEPROF_PROGRAMS"], argv[0])
        if not os.access(exe, os.X_OK):
            print(f"note: {name} skipped ({exe} not built)")
            continue
        files = common._run_real(d, name, argv, ranks, mpi=mpi)
        if not files:
            continue
        truth = make_profile.truth_from_h5(files)
        expect = {}
        if name.startswith("mpi-calls-"):
            mpi_columns.append(name)
            expect["mpi"] = {"MPI_Allreduce": sum(c["region"] == "MPI_Allreduce"
                                                  for c in truth["calls"])}
            if not expect["mpi"]["MPI_Allreduce"]:
                fail(f"{name}: h5py finds no MPI_Allreduce call in {files}")
        pages.append(page(d, name, files, truth, **expect))

    h5, info = big(d, "big", BIG_CALLS, 4)
    per_path = info["steps"] * info["ranks"] * info["lanes"]
    paths = ["step", "step > compute", "step > compute > kernel_a", "step > compute > kernel_b",
             "step > halo", "step > halo > pack", "step > halo > unpack", "step > reduce"]
    pages.append(page(d, "big", [h5], paths={p: per_path for p in paths},
                      facts={"ranks": "4", "calls": str(info["calls"])},
                      slowest={"compute": 3}))

    # 1,024 ranks, with MPI calls (MPI_Allreduce regions): the MPI section
    h5, info = big(d, "ranks1024", 8 * 2 * 1024 * 40, 1024, "mpi")
    pages.append(page(d, "ranks1024", [h5], heatmap={"bins": 64, "perBin": 16},
                      slowest={"compute": 1023}, facts={"ranks": "1024", "mpi": "7.9 %"},
                      more_sections=["MPI"], absent=[], mpi={"MPI_Allreduce": 40 * 2 * 1024}))

    runs = [common._run_real(d, f"threads-{k}", ["threads"], 0) for k in (1, 2)]
    pages.append(page(d, "compare", runs[0], extra=["--compare", *runs[1]],
                      more_sections=["Comparison"], compare=True))
    pages.append(page(d, "compare-run-ids", runs[0] + runs[1], more_sections=["Comparison"],
                      compare=True))

    # Every page streamed, runs with MPI columns included (docs/stream.md).
    for name in ("big", "compare", "compare-run-ids", "ranks1024", *mpi_columns):
        if not TRACES[name] or not all(t.endswith("streamed") for t in TRACES[name]):
            fail(f"{name}: not streamed: {TRACES[name]}")
    for name, traces in TRACES.items():
        if not all(t.endswith("streamed") for t in traces):
            fail(f"{name}: in memory: {traces}")

    spec_path = os.path.join(d, "spec.json")
    with open(spec_path, "w") as f:
        json.dump({"node_modules": modules, "chromium": browser, "pages": pages}, f)
    r = subprocess.run(["node", os.path.join(HERE, "check_html.js"), spec_path],
                       capture_output=True, text=True, timeout=1500)
    print(r.stdout, end="")
    if r.returncode != 0:
        fail("check_html.js:\n" + r.stderr[-4000:])
    for line in r.stdout.splitlines():
        res = json.loads(line)
        if res["page"] == "big" and res["bytes"] > 25 << 20:
            fail(f"{BIG_CALLS}-call report is {res['bytes']} bytes, above 25 MiB")
    for name in ("big", "ranks1024"):  # large inputs go; pages and screenshots stay
        os.unlink(os.path.join(d, name + ".h5"))
    print(f"ok: {len(pages)} pages in chromium; screenshots in {d}")


main()
