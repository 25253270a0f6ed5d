#!/usr/bin/python3
"""MPI message flows past the pairing budget (docs/stream.md, "MPI messages
and records"): with SCOPEPROF_FLOWS_BUDGET small enough, the streamed
`export chrome`, `export perfetto` and `export otf2` pair the message ends
through sorted runs in temporary files and read the flow ends back in
windows (4 ends at budget 1, 12 at 4K, 307 at 96K) in the order the writers
meet the calls; the bytes must be the in-memory path's
(SCOPEPROF_EXPORT_IN_MEMORY=1; OTF2: every file of the archive but the
anchor, which otf2-print must open), so an end the window misses fails, and
for otf2 a receive's length that is not its paired send's sent bytes (the
bytes the flow ends carry; gen_mpi_ranks.py's receives post other sizes).
Inputs: scripts/bench/gen_mpi_ranks.py's rank files (half the calls are
message ends), on one lane and on 3 lanes whose calls interleave, and
tests/programs/mpi/mpi_calls.c on 4 ranks under
the shim with each MPI built, with filters that drop ends (their messages
are left out), ranks and calls.  The trace lines say the external path was
taken and that the writers read the file forward (a lookup that seeks back
is one of calls starting together, taken longest first); no temporary file
is left in TMPDIR."""
import os
import re
import shutil
import subprocess

from common import MPI_LAUNCHERS, SCOPEPROF, archive_bytes, fail, mpi_calls_run, workdir

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "..", "scripts", "bench", "gen_mpi_ranks.py")
EXTERNAL = "scopeprof export: MPI message ends past the budget"

LAST = ""  # the stderr of the last streamed export
d = workdir("flows_budget")
tmp = os.path.join(d, "tmp")
os.makedirs(tmp)
FORMATS = ("chrome", "perfetto")
if os.environ.get("SCOPEPROF_HAVE_OTF2") == "1":
    OTF2_PRINT = shutil.which("otf2-print")
    if not OTF2_PRINT:
        fail("otf2-print not found (scripts/setup installs otf2-tools)")
    FORMATS += ("otf2",)
else:
    print("note: built without OTF2: export otf2 not checked")


def same_output(fmt, out, memory):
    """The same bytes; OTF2: every file but the anchor (its trace id is
    random), and otf2-print opens the streamed archive as the other."""
    if fmt != "otf2":
        with open(out, "rb") as a, open(memory, "rb") as b:
            return a.read() == b.read()
    shown = [subprocess.run([OTF2_PRINT, os.path.join(a, "traces.otf2")], capture_output=True,
                            check=True).stdout for a in (out, memory)]
    return shown[0] == shown[1] and archive_bytes(out) == archive_bytes(memory)


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def export(label, fmt, files, out, budget, *options, external=True):
    """Streamed with `budget`, in memory, and the same bytes."""
    def run(path, **env):
        return subprocess.run([SCOPEPROF, "export", fmt, *files, "-o", path, *options],
                              capture_output=True, text=True,
                              env=dict(os.environ, TMPDIR=tmp, **env))
    memory = out + ".in-memory"
    s = run(out, SCOPEPROF_EXPORT_TRACE="1", SCOPEPROF_FLOWS_BUDGET=budget)
    m = run(memory, SCOPEPROF_EXPORT_IN_MEMORY="1")
    global LAST
    LAST = s.stderr
    name = f"{label} {fmt} {' '.join(options)} (budget {budget})"
    if s.returncode or m.returncode:
        fail(f"{name}: exited {s.returncode}, in memory {m.returncode}:\n{s.stderr}{m.stderr}")
    if "scopeprof export: streamed\n" not in s.stderr:
        fail(f"{name}: not streamed:\n{s.stderr}")
    if (EXTERNAL in s.stderr) != external:
        fail(f"{name}: the external pairing was {'not ' if external else ''}taken:\n{s.stderr}")
    if not same_output(fmt, out, memory):
        fail(f"{name}: the streamed export differs from the in-memory one")
    if os.listdir(tmp):
        fail(f"{name}: left {os.listdir(tmp)} in TMPDIR")
    remove(out)
    remove(memory)
    print(f"ok: {name}: the in-memory bytes"
          f"{' through temporary files' if external else ', in memory'}")




def read_forward(name, ends, most_back):
    """The trace of the flow-end file: `ends` in it (None: some), read in
    windows, at most `most_back` lookups sought back."""
    m = re.search(r"flow ends: (\d+) in the file, (\d+) windows read, (\d+) lookups sought back",
                  LAST)
    if not m:
        fail(f"{name}: no flow-end file: {LAST}")
    n, reads, back = (int(g) for g in m.groups())
    if n != (ends if ends is not None else max(n, 1)) or back > most_back or reads < 2:
        fail(f"{name}: {n} flow ends (want {ends}), {reads} windows, {back} sought back: {LAST}")
    print(f"ok: {name}: {n} flow ends read forward in {reads} windows, {back} sought back")


# 3 ranks of 4,001 calls: 6,000 message ends; then 3 lanes per rank
for lanes in (1, 3):
    run = os.path.join(d, f"gen{lanes}")
    subprocess.run(["/usr/bin/python3", GEN, run, "3", "4001", str(lanes)], check=True,
                   capture_output=True)
    files = sorted(os.path.join(run, f) for f in os.listdir(run))
    ends = 6000 * lanes
    label = f"gen_mpi_ranks, {lanes} lane{'s' if lanes > 1 else ''}"
    for fmt in FORMATS:
        out = os.path.join(d, f"gen.{fmt}")
        # (sends and receives of 56 bytes, flow ends of 40) 1 lane: runs of
        # 36 ends, windows of 12 flow ends; runs of 877, windows of 307;
        # runs of 2,925 and the flow ends in memory; the default budget
        # takes no file.  otf2 looks up the receives only (its MPI_RECV
        # lengths), chrome and perfetto every kept call
        budgets = [("4096", 12), ("96K", 307), ("1", 4)] + ([("320K", 0)] if lanes == 1 else [])
        for budget, window in budgets:
            export(label, fmt, files, out, budget)
            where = f"read in windows of {window}" if window else "in memory"
            if f"flow ends {where}\n" not in LAST:
                fail(f"{label} {fmt} (budget {budget}): the flow ends were not {where}: {LAST}")
            if window:
                # 1 lane: no two calls of a rank start together; 3 lanes:
                # now and then (the stream takes the longer first): a
                # lookup in a hundred at most
                read_forward(f"{label} {fmt} (budget {budget})", ends,
                             0 if lanes == 1 else ends // 100)
        export(label, fmt, files, out, "64M", external=False)
        for options in (["--ranks", "0,2"], ["--exclude", "MPI_Recv"],
                        ["--min-duration", "0.00000002"], ["--include", "MPI_Send"]):
            export(label, fmt, files, out, "4K", *options)

# the shim's MPI program (wildcard receives, MPI_Sendrecv, sub-communicators)
ran = 0
for family in MPI_LAUNCHERS:
    files = mpi_calls_run(d, family)
    if files is None:
        continue
    for fmt in FORMATS:
        out = os.path.join(d, f"{family}.{fmt}")
        for options in ([], ["--exclude", "MPI_Send"], ["--ranks", "1,2"],
                        ["--min-duration", "0.000001"]):
            export(family, fmt, files, out, "1", *options)
            # every end through the file (windows of 4); calls that start
            # together are few
            read_forward(f"{family} {fmt} {' '.join(options)} (budget 1)", None, 8)
    ran += 1
if ran == 0:
    print("note: no MPI built: the shim's MPI program was not checked")

# a value that is not a size: one line, the default budget
bad = subprocess.run([SCOPEPROF, "export", "chrome", run, "-o", os.path.join(d, "bad.json")],
                     capture_output=True, text=True,
                     env=dict(os.environ, SCOPEPROF_FLOWS_BUDGET="lots"))
want = ("scopeprof: SCOPEPROF_FLOWS_BUDGET=lots is not a size (bytes, or a number with K, M "
        "or G): using 64M\n")
if bad.returncode or bad.stderr.count(want) != 1:
    fail(f"SCOPEPROF_FLOWS_BUDGET=lots: exited {bad.returncode}:\n{bad.stderr}")
print("ok: a budget that is not a size is named once, the default used")
