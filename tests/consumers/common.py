"""Shared by the consumer checks: the inputs (the synthetic file, and files
written by real programs under the shim), run scopeprof, locate chromium,
exit codes (77 = skipped, for meson)."""
import atexit
import collections
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCOPEPROF = os.environ["SCOPEPROF"]
SKIP = 77


_workdirs = []
_failed = False


def fail(msg):
    global _failed
    _failed = True
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def _note_exception(kind, value, tb):
    global _failed
    _failed = True
    sys.__excepthook__(kind, value, tb)


sys.excepthook = _note_exception


@atexit.register
def _remove_workdirs():
    """A check that passed leaves no files (hundreds of MiB over a day's
    runs in the build tree); a failed one keeps them to look at, and so
    does SCOPEPROF_KEEP_TEST_DIRS=1."""
    if _failed or os.environ.get("SCOPEPROF_KEEP_TEST_DIRS"):
        return
    for d in _workdirs:
        shutil.rmtree(d, ignore_errors=True)


def skip(msg):
    print("SKIP: " + msg, file=sys.stderr)
    sys.exit(SKIP)


def workdir(name, keep=False):
    """A fresh directory, removed when the check passes; keep=True keeps
    the last run's (pages and screenshots to look at), not older ones."""
    base = os.environ.get("CONSUMER_WORK", tempfile.gettempdir())
    if keep:
        for old in glob.glob(os.path.join(base, f"consumer-{name}-*")):
            shutil.rmtree(old, ignore_errors=True)
    d = tempfile.mkdtemp(prefix=f"consumer-{name}-", dir=base)
    if not keep:
        _workdirs.append(d)
    return d


def make_input(d):
    """Schema-3 file written by h5py (not by scopeprof) + its ground truth."""
    h5, truth = os.path.join(d, "run.h5"), os.path.join(d, "truth.json")
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_profile.py"), h5, truth],
                   check=True)
    with open(truth) as f:
        return h5, json.load(f)


def _fib_paths(n, depth=1, out=None):
    """Call paths of the recursive fib() of tests/programs/basic.c."""
    out = collections.Counter() if out is None else out
    out[" > ".join(["fib"] * depth)] += 1
    if n >= 2:
        _fib_paths(n - 1, depth + 1, out)
        _fib_paths(n - 2, depth + 1, out)
    return out


def _shape(rank, lane, paths):
    return {(rank, lane, p): n for p, n in paths.items()}


# Real programs of tests/programs run under the shim: (name, argv relative to
# the programs build dir, MPI ranks or 0, expected call tree as {(rank, lane
# name, call path): calls} - from the programs' source, to check the truth
# reader itself before it judges the exports).
TICKS = 300
REAL_PROGRAMS = [
    ("threads", ["threads"], 0, {
        **_shape(0, "MainThread", {"session": 1}),
        **{k: v for i in range(4)
           for k, v in _shape(0, f"solver{i}", {"outer": 3, "outer > inner": 3}).items()}}),
    ("basic", ["basic", str(TICKS)], 0, _shape(0, "MainThread", {
        "outer": 1, "outer > inner": 5, "tick": TICKS, **_fib_paths(10)})),
    ("mpi", ["mpi/mpi_regions_openmpi"], 2, {
        k: v for r in range(2) for k, v in _shape(r, "MainThread", {
            "main": 1, "main > outer": r + 1, "main > outer > inner": 2 * (r + 1),
            # the program's MPI_Barrier, recorded by the shim (docs/mpi.md)
            "main > MPI_Barrier": 1}).items()}),
]


def lane_names(truth):
    """{rank: {thread index: name}} of a truth."""
    return {int(r): dict((i, n) for i, n in v) for r, v in truth["threads"].items()}


def _run_real(d, name, argv, ranks, mpi="openmpi"):
    """Run one program under the shim in a fresh directory; its rank files,
    or None when it cannot run here (MPI not built/installed).  mpi: the
    launcher of a run with ranks, "openmpi" or "mpich"."""
    shim, programs = os.environ["SCOPEPROF_SHIM"], os.environ["SCOPEPROF_PROGRAMS"]
    exe = os.path.join(programs, argv[0])
    run = os.path.join(d, "run-" + name)
    os.makedirs(run)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    if ranks:
        launcher = "mpirun.openmpi" if mpi == "openmpi" else "mpiexec.mpich"
        mpirun = shutil.which(launcher)
        if not os.access(exe, os.X_OK) or not mpirun:
            print(f"note: {name} input skipped ({exe} not built or no {launcher})")
            return None
        if mpi == "openmpi":
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            cmd = [mpirun, "--oversubscribe", "-np", str(ranks), "-x", "LD_PRELOAD=" + shim,
                   exe, *argv[1:]]
        else:  # MPICH's hydra passes the environment on
            env["LD_PRELOAD"] = shim
            cmd = [mpirun, "-n", str(ranks), exe, *argv[1:]]
    else:
        env["LD_PRELOAD"] = shim
        cmd = [exe, *argv[1:]]
    r = subprocess.run(cmd, cwd=run, env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    files = sorted(glob.glob(os.path.join(run, "*_rank*.h5")))
    if len(files) != max(ranks, 1):
        fail(f"{name}: expected {max(ranks, 1)} rank files, got {files}")
    return files


def inputs(d):
    """Every input of a check: (name, [h5 files], truth) for the synthetic
    file, then for each real program run under the shim, whose truth is
    rebuilt from its files by h5py (make_profile.truth_from_h5), never by
    scopeprof."""
    import make_profile  # h5py: only under Debian's python3
    h5, truth = make_input(d)
    out = [("synthetic", [h5], truth)]
    for name, argv, ranks, shape in REAL_PROGRAMS:
        files = _run_real(d, name, argv, ranks)
        if files is None:
            continue
        truth = make_profile.truth_from_h5(files)
        lanes = lane_names(truth)
        got = collections.Counter((c["rank"], lanes[c["rank"]][c["thread"]], c["path"])
                                  for c in truth["calls"])
        if got != collections.Counter(shape):
            fail(f"{name}: h5py reading of {files} gives call tree {dict(got)}, "
                 f"the program makes {shape}")
        out.append((name, files, truth))
    return out


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


# ---- inputs of the streamed-export checks -----------------------------------

def omp_input(d):
    """An OpenMP run under the shim (fork edges), or None without the program."""
    exe = os.path.join(os.environ["SCOPEPROF_PROGRAMS"], "omp_fork_gomp")
    if not os.access(exe, os.X_OK):
        return None
    run = os.path.join(d, "run-omp")
    os.makedirs(run, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    env.update(LD_PRELOAD=os.environ["SCOPEPROF_SHIM"], OMP_NUM_THREADS="2",
               SCOPE_PROFILER_OUTPUT=os.path.join(run, "omp"))
    subprocess.run([exe], cwd=run, env=env, check=True, capture_output=True, timeout=120)
    return [os.path.join(run, "omp_rank00000.h5")]


def scattered_input(d):
    """A gen_calls.py file whose rows hold their calls in reverse time order:
    the stream sorts such a rank (docs/stream.md, "Scattered ranks"; it
    replayed it from memory before, every enter then every exit, which
    exports that need the calls nested had to notice)."""
    path = os.path.join(d, "scattered.h5")
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "..", "scripts", "bench",
                                                     "gen_calls.py"), path, "1200000",
                    "--scattered"], check=True)
    return [path]


def stream_inputs(d):
    """(name, files) of every input, the OpenMP run included when built;
    and that run's files (or None)."""
    found = [(name, files) for name, files, _ in inputs(d)]
    omp = omp_input(d)
    if omp:
        found.append(("omp", omp))
    return found, omp


# ---- the MPI program of the message checks ----------------------------------

MPI_CALLS_RANKS = 4
MPI_LAUNCHERS = {
    "openmpi": ["mpirun.openmpi", "--oversubscribe", "-np", str(MPI_CALLS_RANKS), "-x",
                "LD_PRELOAD=" + os.environ.get("SCOPEPROF_SHIM", "")],
    "mpich": ["mpiexec.mpich", "-np", str(MPI_CALLS_RANKS), "-genv", "LD_PRELOAD",
              os.environ.get("SCOPEPROF_SHIM", "")]}


def mpi_calls_run(d, family):
    """tests/programs/mpi/mpi_calls.c on 4 ranks under the shim with one MPI
    family (the messages of tests/integration/test_mpi_calls.c): its rank
    files, or None when that MPI is not built here."""
    launcher = MPI_LAUNCHERS[family]
    exe = os.path.join(os.environ["SCOPEPROF_PROGRAMS"], "mpi", "mpi_calls_" + family)
    if not os.access(exe, os.X_OK) or not shutil.which(launcher[0]):
        print(f"note: {family} run skipped ({exe} not built or no {launcher[0]})")
        return None
    run = os.path.join(d, "mpi-calls-" + family)
    os.makedirs(run)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run([*launcher, exe, "10"], cwd=run, env=env, capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        fail(f"{family}: mpi_calls exited {r.returncode}:\n{r.stdout}{r.stderr}")
    files = sorted(glob.glob(os.path.join(run, "*_rank*.h5")))
    if len(files) != MPI_CALLS_RANKS:
        fail(f"{family}: {len(files)} rank files")
    return files


def archive_bytes(archive):
    """Every file of an OTF2 archive but the anchor (its trace id is
    random), by path within the archive."""
    got = {}
    for root, _, names in os.walk(archive):
        for n in names:
            path = os.path.join(root, n)
            if os.path.relpath(path, archive) != "traces.otf2":
                with open(path, "rb") as f:
                    got[os.path.relpath(path, archive)] = f.read()
    return got
