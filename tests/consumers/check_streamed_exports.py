#!/usr/bin/python3
"""chrome, speedscope, csv and json exports on the stream (docs/stream.md,
"Exports") give the bytes of the in-memory path (SCOPEPROF_EXPORT_IN_MEMORY=1)
for every input and selection, or the same failure; and they do stream (the
SCOPEPROF_EXPORT_TRACE line) for the inputs the stream takes, to a file and to
standard output.  Inputs: the synthetic h5py file (two ranks, two lanes, a
source-captured region), the real programs of common.py (threads, basic, a
2-rank MPI run when built), and more programs under the shim: tasks on
threads (threads_tasks), fibers (tasks on one thread), OpenMP fork edges
(omp_fork region and task), plus copies without row statistics or thread
ids, 300,000 calls (csv's spill file), and a rank too scattered to merge
(sorted on the stream, replayed from memory before: perfetto and folded
too)."""
import glob
import os
import shutil
import subprocess

from common import SCOPEPROF, fail, inputs, workdir

d = workdir("streamed")
FORMATS = ("chrome", "speedscope", "csv", "json")  # (and perfetto to stdout, at the end)
STREAMED = set()  # (format, input) that streamed with no selection


def run(fmt, files, out, options, **env):
    return subprocess.run([SCOPEPROF, "export", fmt, *files, "-o", out, *options],
                          capture_output=True, env=dict(os.environ, **env))


def compare(name, fmt, files, options=()):
    """Streamed (maybe) and in memory: the same bytes, or the same failure;
    whether it streamed."""
    options = list(options)
    out = os.path.join(d, f"{name}.{fmt}")
    memory = out + ".in-memory"
    r = run(fmt, files, out, options, SCOPEPROF_EXPORT_TRACE="1")
    m = run(fmt, files, memory, options, SCOPEPROF_EXPORT_IN_MEMORY="1")
    label = f"{name} {fmt} {' '.join(options)}"
    err, merr = r.stderr.decode(errors="replace"), m.stderr.decode(errors="replace")
    if r.returncode != m.returncode:
        fail(f"{label}: exited {r.returncode}, in memory {m.returncode}:\n{err}---\n{merr}")
    trace = [line for line in err.splitlines()
             if line.startswith(("scopeprof export: streamed", "scopeprof export: in memory"))]
    if r.returncode:
        if not err.endswith(merr):
            fail(f"{label}: messages differ:\n{err}---\n{merr}")
        print(f"ok: {label}: the same failure either way")
        return
    with open(out, "rb") as a, open(memory, "rb") as b:
        got, want = a.read(), b.read()
    if got != want:
        at = next(i for i in range(min(len(got), len(want)) + 1)
                  if i == min(len(got), len(want)) or got[i] != want[i])
        fail(f"{label}: differs from the in-memory export at byte {at} ({trace}):\n"
             f"streamed:  {got[max(0, at - 200):at + 200]!r}\n"
             f"in memory: {want[max(0, at - 200):at + 200]!r}")
    os.unlink(memory)
    streamed = trace == ["scopeprof export: streamed"]
    if streamed and not options:
        STREAMED.add((fmt, name))
    print(f"ok: {label}: the same {len(got)} bytes ({trace[0] if trace else 'no trace'})")
    return streamed


def to_stdout(name, fmt, files, options=()):
    """-o -: the bytes of the file export, on the stream."""
    r = subprocess.run([SCOPEPROF, "export", fmt, *files, "-o", "-", *options],
                       capture_output=True, env=dict(os.environ, SCOPEPROF_EXPORT_TRACE="1"))
    m = run(fmt, files, os.path.join(d, "stdout-ref"), list(options),
            SCOPEPROF_EXPORT_IN_MEMORY="1")
    if r.returncode or m.returncode:
        fail(f"{name} {fmt} -o -: exited {r.returncode} / {m.returncode}:\n"
             f"{r.stderr.decode()}{m.stderr.decode()}")
    with open(os.path.join(d, "stdout-ref"), "rb") as f:
        if r.stdout != f.read():
            fail(f"{name} {fmt} -o -: standard output differs from the in-memory file")
    if b"scopeprof export: streamed" not in r.stderr:
        fail(f"{name} {fmt} -o -: did not stream: {r.stderr.decode()}")
    print(f"ok: {name} {fmt} -o -: streamed, {len(r.stdout)} bytes as in memory")


def shim_run(name, argv):
    """A program of tests/programs under the shim; its rank files, or None."""
    exe = os.path.join(os.environ["SCOPEPROF_PROGRAMS"], argv[0])
    if not os.access(exe, os.X_OK):
        print(f"note: {name} skipped ({exe} not built)")
        return None
    where = os.path.join(d, "run-" + name)
    os.makedirs(where)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    env["LD_PRELOAD"] = os.environ["SCOPEPROF_SHIM"]
    env["OMP_NUM_THREADS"] = "4"
    r = subprocess.run([exe, *argv[1:]], cwd=where, env=env, capture_output=True, timeout=120)
    if r.returncode:
        fail(f"{name}: exited {r.returncode}: {r.stderr.decode()}")
    return sorted(glob.glob(os.path.join(where, "*_rank*.h5")))


def without_stats(files, tag, origin=True, stats=False):
    """Copies without row statistics (and without metadata start_time_ns:
    chrome's origin is then the run's earliest event, learnt by the passes;
    stats=True keeps the statistics)."""
    import h5py
    out = []
    for path in files:
        copy = os.path.join(d, f"nostats-{tag}-" + os.path.basename(path))
        shutil.copyfile(path, copy)
        with h5py.File(copy, "r+") as f:
            if not stats:
                del f["rank_region_index/summary_statistics"]
            if not origin:
                del f["metadata"].attrs["start_time_ns"]
        out.append(copy)
    return out


ALL = [(name, files) for name, files, _ in inputs(d)]
for name, argv in (("tasks", ["threads_tasks"]), ("fibers", ["fibers"]),
                   ("omp-region", ["omp_fork_gomp", "region"]),
                   ("omp-task", ["omp_fork_gomp", "task"])):
    files = shim_run(name, argv)
    if files:
        ALL.append((name, files))
synthetic = dict(ALL)["synthetic"]
ALL.append(("synthetic-nostats", without_stats(synthetic, "synthetic")))
ALL.append(("synthetic-noorigin", without_stats(synthetic, "noorigin", origin=False)))
ALL.append(("synthetic-stats-noorigin",
            without_stats(synthetic, "stats-noorigin", origin=False, stats=True)))


def without_threads(files, tag):
    """Copies without thread ids: one lane per rank."""
    import h5py
    out = []
    for path in files:
        copy = os.path.join(d, f"nothreads-{tag}-" + os.path.basename(path))
        shutil.copyfile(path, copy)
        with h5py.File(copy, "r+") as f:
            del f["events/thread_ids"]
        out.append(copy)
    return out


if "basic" in dict(ALL):  # one thread: still nested without the column
    ALL.append(("basic-nothreads", without_threads(dict(ALL)["basic"], "basic")))
# two runs' worth of files in one export: the rank files of basic and threads
# are each rank 0 of their own run, so they are refused alike both ways

# Large enough for csv's spill file to write windows out while calls are
# open (65,536 values a window): 300,000 calls of make_big_profile.py, 2 ranks.
big = os.path.join(d, "big.h5")
subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "make_big_profile.py"),
                big, "300000", "2"], check=True, stdout=subprocess.DEVNULL)
for fmt in FORMATS:
    if not compare("big", fmt, [big]):
        fail(f"big: export {fmt} did not stream")
compare("big", "csv", [big], ["--exclude", "step"])
for out in glob.glob(os.path.join(d, "big.*")):
    os.unlink(out)

# A rank too scattered to merge in windows (700,000 calls stored in reverse
# time order: a run each), which rank_stream.c sorts (before: replayed from
# memory with every exit after every enter, the closes had to come in
# place: speedscope, perfetto, csv's exclusive times).
def scattered(path, n):
    import make_profile as mp
    saved = mp.CALLS, mp.THREADS, mp.SOURCES
    mp.CALLS = [(0, 0, "main", 0, 2 * n + 1)] + [(0, 0, "tick", 2 * k + 1, 2 * k + 2)
                                                 for k in reversed(range(n))]
    mp.THREADS, mp.SOURCES = {0: [(0, "MainThread")]}, {}
    mp.write(path)
    mp.CALLS, mp.THREADS, mp.SOURCES = saved


scat = os.path.join(d, "scattered.h5")
scattered(scat, 700000)
for fmt in FORMATS + ("perfetto", "folded"):
    if not compare("scattered", fmt, [scat]):
        fail(f"scattered: export {fmt} did not stream")
    os.unlink(os.path.join(d, f"scattered.{fmt}"))
os.unlink(scat)

# Every lane of a rank in one writing pass (speedscope, perfetto: the lanes
# after the first set aside in blocks, full blocks in a temporary file,
# src/export/lane_spill.c), or one pass per lane when no temporary file can
# be made (TMPDIR a missing directory): both the in-memory bytes, 16 lanes
# x 12,500 calls (blocks go to the file and back).
lanes16 = os.path.join(d, "lanes16.h5")
subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "..", "..", "scripts",
                                                 "bench", "gen_lanes.py"), lanes16, "200000", "16"],
               check=True)
for fmt in ("speedscope", "perfetto"):
    if not compare("lanes16", fmt, [lanes16]):
        fail(f"lanes16: export {fmt} did not stream")
    out = os.path.join(d, f"lanes16.{fmt}")
    r = run(fmt, [lanes16], out + ".per-lane", [], TMPDIR=os.path.join(d, "no-such-dir"))
    with open(out, "rb") as a, open(out + ".per-lane", "rb") as b:
        if r.returncode or a.read() != b.read():
            fail(f"lanes16: export {fmt}, one pass per lane, differs: {r.stderr.decode()}")
    print(f"ok: lanes16 {fmt}: one writing pass and one pass per lane give the same bytes")
    # a spill file that cannot grow (a full disk; here a file size limit of
    # 300 KiB, the export to a pipe, which the limit does not bound): the
    # lanes whose blocks it cannot take are streamed once more on their
    # own, the others written from the spill: the same bytes
    r = subprocess.run(["/bin/sh", "-c", 'trap "" XFSZ; ulimit -f 600; exec "$0" "$@"', SCOPEPROF,
                        "export", fmt, lanes16, "-o", "-"], capture_output=True)
    with open(out, "rb") as a:
        if r.returncode or r.stdout != a.read():
            fail(f"lanes16: export {fmt} with a spill that cannot grow differs: "
                 f"{r.stderr.decode()}")
    print(f"ok: lanes16 {fmt}: a spill that cannot grow, the same bytes")
    os.unlink(out)
    os.unlink(out + ".per-lane")
os.unlink(lanes16)

SELECTIONS = (["--include", "solve|setup|inner|job|work"], ["--exclude", "main|outer|session"],
              ["--min-duration", "0.000000002"], ["--lanes=MainThread"], ["--ranks", "1"],
              ["--from", "0.00001", "--to", "0.05"])
for name, files in ALL:
    for fmt in FORMATS:
        compare(name, fmt, files)
        for options in SELECTIONS:
            if fmt == "json" and options[0] not in ("--include", "--exclude", "--ranks"):
                continue
            compare(name, fmt, files, options)
        if fmt == "chrome":
            compare(name, fmt, files, ["--call-args"])
            compare(name, fmt, files, ["--call-args", "--exclude", "main|outer|session"])
        if fmt in ("chrome", "speedscope"):
            compare(name, fmt, files, ["--label", "a run"])

# --from/--to without metadata start_time_ns: the origin is the run's first
# event, from the rows' statistics or one read of the starts: streamed
for name in ("synthetic-noorigin", "synthetic-stats-noorigin"):
    for fmt in ("chrome", "speedscope", "csv"):
        if not compare(name, fmt, dict(ALL)[name], ["--from", "0.00001", "--to", "0.05"]):
            fail(f"{name}: export {fmt} --from --to did not stream")

for fmt in FORMATS:
    # a run with MPI columns streams (speedscope, csv and json show none;
    # chrome's message flows are paired from the ends read first)
    # fork edges (omp-*) too: their fork parent ids are checked in windows
    # (src/stream/fork_ids_check.c), not by reading the file whole
    for name in ("synthetic", "threads", "basic", "tasks", "basic-nothreads",
                 "synthetic-noorigin", "mpi", "omp-region", "omp-task"):
        if name in dict(ALL) and (fmt, name) not in STREAMED:
            fail(f"{name}: export {fmt} did not stream (streamed: {sorted(STREAMED)})")
    to_stdout("synthetic", fmt, synthetic)
    if "threads" in dict(ALL):
        to_stdout("threads", fmt, dict(ALL)["threads"], ["--exclude", "inner"])
    if "omp-region" in dict(ALL):
        to_stdout("omp-region", fmt, dict(ALL)["omp-region"])
# chrome --call-args shows each call's MPI columns: read on the stream too
if "mpi" in dict(ALL) and not compare("mpi", "chrome", dict(ALL)["mpi"], ["--call-args"]):
    fail("mpi: export chrome --call-args did not stream")
# perfetto on standard output: every rank checked before the first byte
# (a pass learning the lanes, which runs without thread ids too)
for name in ("synthetic", "basic-nothreads", "threads", "basic", "omp-region", "omp-task"):
    if name in dict(ALL):
        to_stdout(name, "perfetto", dict(ALL)[name])
        if not name.startswith("omp-"):  # (omp-task has none of these)
            to_stdout(name, "perfetto", dict(ALL)[name], ["--include", "solve|inner|work"])
print(f"ok: streamed: {sorted(STREAMED)}")
