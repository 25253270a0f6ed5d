#!/usr/bin/python3
"""`scopeprof export perfetto`: the file is Perfetto's protobuf trace.

Checked with the protobuf compiler, not with our own parser: `protoc
--decode_raw` must accept the wire format; `protoc --decode` against the
subset of Perfetto's protos we write (perfetto/perfetto_trace.proto, from
Perfetto's documentation) must leave no unknown field; then the packets are
read with Python's protobuf runtime, timestamps rebuilt the way Perfetto
defines them (sequence-scoped incremental clock anchored by a clock
snapshot, interned names, track defaults), and the slices compared with the
input calls (rank, lane name, region, start, duration, parent region).
Files of 1,000 calls or more must take at most 24 bytes per call.  Then the
MPI messages of a 4-rank program under Open MPI and MPICH: flows pairing
each send with its receive."""
import collections
import glob
import os
import shutil
import re
import subprocess
import sys

from common import (MPI_CALLS_RANKS, MPI_LAUNCHERS, SCOPEPROF, fail, inputs, lane_names,
                    mpi_calls_run, omp_input, scopeprof, workdir)

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "perfetto")

d = workdir("perfetto")
subprocess.run(["protoc", f"--proto_path={PROTO_DIR}", f"--python_out={d}",
                os.path.join(PROTO_DIR, "perfetto_trace.proto")], check=True)
sys.path.insert(0, d)
import perfetto_trace_pb2 as pb  # noqa: E402

BEGIN, END = pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END
STREAMED = []  # inputs the export streamed (docs/stream.md, "Exports")


def export(name, files, out, *options):
    """`export perfetto` on the stream when it takes the run, and the same
    bytes as the in-memory path (SCOPEPROF_EXPORT_IN_MEMORY=1) either way
    (or the same failure: a filter that keeps no call)."""
    def run(path, **env):
        return subprocess.run([SCOPEPROF, "export", "perfetto", *files, "-o", path, *options],
                              capture_output=True, text=True, env=dict(os.environ, **env))
    memory = out + ".in-memory"
    r = run(out, SCOPEPROF_EXPORT_TRACE="1")
    m = run(memory, SCOPEPROF_EXPORT_IN_MEMORY="1")
    label = f"{name} {' '.join(options)}"
    if r.returncode != m.returncode or (r.returncode and not options):
        fail(f"{label}: export perfetto exited {r.returncode}, in memory {m.returncode}:\n"
             f"{r.stderr}{m.stderr}")
    if r.returncode:
        if not r.stderr.endswith(m.stderr):
            fail(f"{label}: messages differ:\n{r.stderr}---\n{m.stderr}")
        print(f"ok: {label}: the same failure either way")
        return
    with open(out, "rb") as a, open(memory, "rb") as b:
        if a.read() != b.read():
            fail(f"{label}: the streamed trace differs from the in-memory one")
    os.unlink(memory)
    if "scopeprof export: streamed" in r.stderr:
        STREAMED.append(name)
    print(f"ok: {label}: the same bytes as the in-memory path "
          f"({r.stderr.strip().splitlines()[0]})")


def slices_of(trace):
    """[(pid, track name, name, start, dur, parent name)], the tracks, and
    the flows {id: {"send": [(pid, name, start)], "recv": [...]}}.

    Timestamps are rebuilt as Perfetto defines them: the packet's clock is
    the sequence default (incremental clock 64), each delta adds to the last
    value, a clock snapshot re-anchors it, and a value is converted to
    BOOTTIME through the latest snapshot at or before it on clock 64 (the
    trace processor's rule, which also refuses snapshots that move a clock
    backwards: checked here too)."""
    tracks, processes = {}, {}
    seq = {}   # sequence id -> state
    anchors = []  # (sequence, clock-64 value, BOOTTIME value) in file order
    pending = []  # (sequence, clock-64 value, event) converted at the end
    for p in trace.packet:
        which = p.WhichOneof("data")
        if which == "track_descriptor":
            t = p.track_descriptor
            if t.HasField("process"):
                processes[t.uuid] = t.process.pid
            else:
                if t.parent_uuid not in processes or not t.name:
                    fail(f"lane track {t.uuid} without a name or a known process")
                tracks[t.uuid] = (processes[t.parent_uuid], t.name)
            continue
        sid = p.trusted_packet_sequence_id
        if not sid:
            fail("packet without trusted_packet_sequence_id")
        if p.sequence_flags & 1:  # SEQ_INCREMENTAL_STATE_CLEARED
            seq[sid] = {"names": {}, "ts": None, "track": None, "clock": None}
        s = seq.get(sid)
        if s is None:
            fail(f"sequence {sid} used before its state was cleared")
        if p.HasField("trace_packet_defaults"):
            s["clock"] = p.trace_packet_defaults.timestamp_clock_id
            s["track"] = p.trace_packet_defaults.track_event_defaults.track_uuid
        for n in p.interned_data.event_names:
            s["names"][n.iid] = n.name
        if which == "clock_snapshot":
            clocks = {c.clock_id: c for c in p.clock_snapshot.clocks}
            if s["clock"] not in clocks or not clocks[s["clock"]].is_incremental:
                fail("the sequence clock is not an incremental clock of the snapshot")
            if 6 not in clocks:
                fail("the snapshot must anchor the sequence clock to BOOTTIME")
            v, boot = clocks[s["clock"]].timestamp, clocks[6].timestamp
            prev = [a for a in anchors if a[0] == sid]
            if prev and (v < prev[-1][1] or boot < prev[-1][2]):
                fail(f"clock snapshot going backwards on sequence {sid}: {prev[-1]} then {v, boot}")
            anchors.append((sid, v, boot))
            s["ts"] = v
            continue
        if which is None and p.HasField("trace_packet_defaults"):
            continue  # the next lane's track, on the same clock
        if which != "track_event":
            fail(f"unexpected packet {which}")
        if s["ts"] is None:
            fail("track event before the clock snapshot of its sequence")
        s["ts"] += p.timestamp
        e = p.track_event
        track = e.track_uuid if e.HasField("track_uuid") else s["track"]
        if track not in tracks:
            fail(f"event on an undescribed track {track}")
        name = None
        if e.type == BEGIN:
            if e.name_iid not in s["names"]:
                fail(f"name id {e.name_iid} not interned on sequence {sid}")
            name = s["names"][e.name_iid]
        elif e.type != END:
            fail(f"unexpected event type {e.type}")
        pending.append((sid, s["ts"], track, e.type, name, list(e.flow_ids),
                        list(e.terminating_flow_ids)))

    def boottime(sid, v):
        best = None
        for a in anchors:
            if a[0] == sid and a[1] <= v:
                best = a   # anchors of a sequence grow: the last one wins
        if best is None:
            fail(f"value {v} of clock 64 on sequence {sid} precedes every snapshot")
        return v - best[1] + best[2]

    out, stacks = [], {}
    flows = {}
    for sid, v, track, kind, name, starts, ends in pending:
        ts = boottime(sid, v)
        stack = stacks.setdefault(track, [])
        pid, lane = tracks[track]
        if kind == BEGIN:
            stack.append((name, ts))
            for f in starts:
                flows.setdefault(f, {"send": [], "recv": []})["send"].append((pid, name, ts))
        else:
            if not stack:
                fail("SLICE_END without a SLICE_BEGIN")
            name, start = stack.pop()
            parent = stack[-1][0] if stack else ""
            out.append((pid - 1, lane, name, start, ts - start, parent))
            for f in ends:
                flows.setdefault(f, {"send": [], "recv": []})["recv"].append((pid, name, start))
        if starts and kind != BEGIN or ends and kind != END:
            fail("flow ids on the wrong end of a slice")
    for track, stack in stacks.items():
        if stack:
            fail(f"track {track} ends with open slices")
    return out, tracks, flows


def decode_checked(name, data):
    """protoc accepts the file, raw and against our subset with no unknown
    field; then the parsed Trace."""
    raw = subprocess.run(["protoc", "--decode_raw"], input=data, capture_output=True)
    if raw.returncode != 0:
        fail(f"{name}: protoc --decode_raw refused the file: {raw.stderr.decode()}")
    text = subprocess.run(["protoc", f"--proto_path={PROTO_DIR}", "--decode=perfetto.protos.Trace",
                           os.path.join(PROTO_DIR, "perfetto_trace.proto")],
                          input=data, capture_output=True)
    if text.returncode != 0:
        fail(f"{name}: protoc --decode failed: {text.stderr.decode()}")
    unknown = [l for l in text.stdout.decode().splitlines() if re.match(r"\s*\d+\s*[:{]", l)]
    if unknown:
        fail(f"{name}: fields outside Perfetto's protos: {unknown[:5]}")
    return pb.Trace.FromString(data)


def sequential_input(d):
    """A file (written by h5py, tests/consumers/make_profile.py's writer)
    whose lanes partly follow each other in time, in the order the export
    walks them (threads backwards): rank 0's w0 then MainThread, later,
    then rank 1's w0 starting earlier again, then its MainThread after it.
    Clock 64 is re-anchored only where time goes back: 2 snapshots."""
    import make_profile as mp
    mp.CALLS = [
        (0, 1, "work", 0, 10), (0, 1, "solve", 2, 8),
        (0, 0, "main", 20, 30), (0, 0, "setup", 21, 22), (0, 0, "solve", 23, 29),
        (1, 1, "work", 5, 45), (1, 1, "solve", 6, 7),
        (1, 0, "main", 50, 60), (1, 0, "setup", 51, 59),
    ]
    mp.THREADS = {0: [(0, "MainThread"), (1, "w0")], 1: [(0, "MainThread"), (1, "w0")]}
    h5 = os.path.join(d, "sequential.h5")
    mp.write(h5)
    truth = {"origin": mp.ORIGIN, "calls": mp.reconstruct(mp.CALLS),
             "threads": {str(k): v for k, v in mp.THREADS.items()}}
    return ("sequential", [h5], truth)


ALL_INPUTS = inputs(d) + [sequential_input(d)]
for name, h5, truth in ALL_INPUTS:
    out = os.path.join(d, name + ".pftrace")
    for options in (["--include", "solve|setup"], ["--min-duration", "0.000000002"],
                    ["--lanes=MainThread"], ["--ranks", "1"], ["--exclude", "main"]):
        export(name, h5, out, *options)
    export(name, h5, out)
    with open(out, "rb") as f:
        data = f.read()
    trace = decode_checked(name, data)
    got, tracks, flows = slices_of(trace)
    threads = lane_names(truth)
    # time zero is the run's start, or the earliest call if a rank began before it
    zero = min(0, min(c["start"] for c in truth["calls"]))
    exp = [(c["rank"], threads[c["rank"]][c["thread"]], c["region"], c["start"] - zero,
            c["end"] - c["start"], c["caller"] or "") for c in truth["calls"]]
    if sorted(got) != sorted(exp):
        fail(f"{name}: slices differ from the input calls: got only "
             f"{sorted(set(got) - set(exp))[:10]}, expected only {sorted(set(exp) - set(got))[:10]}")
    lanes = {(c["rank"], c["thread"]) for c in truth["calls"]}
    if len(tracks) != len(lanes):
        fail(f"{name}: {len(tracks)} thread tracks for {len(lanes)} lanes")
    snapshots = sum(p.HasField("clock_snapshot") for p in trace.packet)
    if name == "sequential" and snapshots != 2:
        fail(f"sequential: {snapshots} clock snapshots, expected 2 (only where time goes back)")
    per_call = len(data) / len(exp)
    if len(exp) >= 1000 and per_call > 24:
        fail(f"{name}: {per_call:.1f} bytes per call (at most 24)")
    print(f"ok: {name}: {len(got)} slices on {len(tracks)} tracks, {len(data)} bytes, "
          f"{per_call:.1f} bytes per call")

# Files without row statistics: the stream learns the origin from a pass
# over the events (docs/stream.md, "Exports").  Copies of the real programs'
# files and of the sequential input, their summary_statistics deleted.
def without_stats(files, tag):
    import h5py
    out = []
    for path in files:
        copy = os.path.join(d, f"nostats-{tag}-" + os.path.basename(path))
        shutil.copyfile(path, copy)
        with h5py.File(copy, "r+") as f:
            del f["rank_region_index/summary_statistics"]
        out.append(copy)
    return out


for name, h5, _ in ALL_INPUTS:
    export(name + "-nostats", without_stats(h5, name), os.path.join(d, name + "-nostats.pftrace"))
for must in ("sequential-nostats", "basic-nostats", "threads-nostats"):
    if must not in STREAMED:
        fail(f"{must}: export perfetto did not stream (streamed: {STREAMED})")

# Fork edges (an OpenMP run under the shim): the reader's check of their
# fork parent ids is made in windows (src/stream/fork_ids_check.c), so the
# run streams, into a file and to standard output, with the in-memory bytes.
omp = omp_input(d)
if omp:
    for i, options in enumerate(([], ["--include", "outer|work"], ["--lanes=MainThread"],
                                 ["--min-duration", "0.000001"], ["--exclude", "outer"])):
        export(f"omp-{i}", omp, os.path.join(d, f"omp-{i}.pftrace"), *options)
        if f"omp-{i}" not in STREAMED:
            fail(f"omp {' '.join(options)}: export perfetto did not stream")
    piped = subprocess.run([SCOPEPROF, "export", "perfetto", *omp, "-o", "-"],
                           capture_output=True, env=dict(os.environ, SCOPEPROF_EXPORT_TRACE="1"))
    with open(os.path.join(d, "omp-0.pftrace"), "rb") as f:
        if piped.returncode or b"scopeprof export: streamed" not in piped.stderr or \
                piped.stdout != f.read():
            fail(f"omp: export perfetto -o - did not stream the file's bytes: {piped.stderr!r}")
    print("ok: omp: fork edges streamed, to a file and to standard output")

# One writing pass for every lane of a rank (docs/stream.md, "Exports"):
# the lanes after the first are set aside in blocks, full blocks in a
# temporary file, and written after it; without a temporary directory the
# export makes one pass per lane.  Both give the in-memory bytes: 16 lanes
# x 12,500 calls (gen_lanes.py: several blocks per lane go to the file and
# back), and MPI messages whose ends are on a lane set aside (2 ranks of
# gen_mpi_ranks.py with their compute calls moved to a second thread, whose
# lane sorts first).
BENCH = os.path.join(HERE, "..", "..", "scripts", "bench")
lanes16 = os.path.join(d, "lanes16.h5")
subprocess.run(["/usr/bin/python3", os.path.join(BENCH, "gen_lanes.py"), lanes16, "200000", "16"],
               check=True)
mpi2 = os.path.join(d, "mpi2")
subprocess.run(["/usr/bin/python3", os.path.join(BENCH, "gen_mpi_ranks.py"), mpi2, "2", "40000"],
               check=True, stdout=subprocess.DEVNULL)
mpi2_files = sorted(glob.glob(os.path.join(mpi2, "*.h5")))
import h5py  # noqa: E402
for path in mpi2_files:
    with h5py.File(path, "r+") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][...]]
        thread = [0] * len(f["events/durations"])
        g = f["rank_region_index"]
        for region, offset, count in zip(g["region_ids"], g["event_offsets"], g["event_counts"]):
            if names[region] == "compute":
                thread[int(offset):int(offset + count)] = [1] * int(count)
        f["events"].create_dataset("thread_ids", data=thread, dtype="i8")
for name, files in (("lanes16", [lanes16]), ("mpi2-lanes", mpi2_files)):
    out = os.path.join(d, name + ".pftrace")
    export(name, files, out)
    if name not in STREAMED:
        fail(f"{name}: export perfetto did not stream")
    passes = out + ".per-lane"
    r = subprocess.run([SCOPEPROF, "export", "perfetto", *files, "-o", passes],
                       capture_output=True, text=True,
                       env=dict(os.environ, TMPDIR=os.path.join(d, "no-such-dir")))
    with open(out, "rb") as a, open(passes, "rb") as b:
        if r.returncode or a.read() != b.read():
            fail(f"{name}: one pass per lane (no temporary directory) differs: {r.stderr}")
    with open(out, "rb") as f:
        _, tracks, flows = slices_of(decode_checked(name, f.read()))
    if len(tracks) != (16 if name == "lanes16" else 4) or (name == "mpi2-lanes" and not flows):
        fail(f"{name}: {len(tracks)} tracks, {len(flows)} flows")
    print(f"ok: {name}: one writing pass and one pass per lane give the in-memory bytes "
          f"({len(tracks)} tracks, {len(flows)} flows)")

# The size bound on a run large enough for headers not to matter: the basic
# program with 20,000 ticks (outer, 5 inner, fib(10) = 177 calls, ticks).
ticks = 20000
big = os.path.join(d, "big")
env = dict(os.environ, LD_PRELOAD=os.environ["SCOPEPROF_SHIM"], SCOPE_PROFILER_OUTPUT=big)
subprocess.run([os.path.join(os.environ["SCOPEPROF_PROGRAMS"], "basic"), str(ticks)], env=env,
               check=True, stdout=subprocess.DEVNULL)
out = big + ".pftrace"
export("big", [big + "_rank00000.h5"], out)
with open(out, "rb") as f:
    data = f.read()
got, _, _ = slices_of(decode_checked("big", data))
if len(got) != ticks + 183:
    fail(f"big: {len(got)} slices, expected {ticks + 183}")
per_call = len(data) / len(got)
if per_call > 24:
    fail(f"big: {per_call:.1f} bytes per call (at most 24)")
print(f"ok: big: {len(got)} slices, {per_call:.1f} bytes per call")

# MPI messages as flows: tests/programs/mpi/mpi_calls.c on 4 ranks under
# the shim, with each MPI built (both ABI families).  Every message of the
# program is one flow from a send slice of its sender to a receive slice of
# its receiver: per rank r, r -> r+1 four times (ring, tags 8, 9 and the
# MPI_Sendrecv), r -> r (the polling loop), 0 -> 2 and 1 -> 3 in the
# sub-communicator (the same pairs tests/integration/test_mpi_calls.c
# expects of the chrome export).
N = MPI_CALLS_RANKS
ran = 0
FLOW_FAMILIES = []
for family in MPI_LAUNCHERS:
    files = mpi_calls_run(d, family)
    if files is None:
        continue
    run = os.path.dirname(files[0])
    out = os.path.join(run, "trace.pftrace")
    export(family, files, out)
    # on the stream (the message ends of every rank read first), with the
    # in-memory bytes, also with filters that drop ends (their messages
    # are left out as in memory) and on standard output
    for i, options in enumerate((["--exclude", "MPI_Send"], ["--ranks", "1,2"],
                                 ["--min-duration", "0.000001"], ["--include", "MPI_Sendrecv"])):
        export(f"{family}-{i}", files, os.path.join(run, f"t{i}.pftrace"), *options)
        if f"{family}-{i}" not in STREAMED:
            fail(f"{family} {' '.join(options)}: export perfetto did not stream")
    piped = subprocess.run([SCOPEPROF, "export", "perfetto", *files, "-o", "-"],
                           capture_output=True, env=dict(os.environ, SCOPEPROF_EXPORT_TRACE="1"))
    with open(out, "rb") as f:
        data = f.read()
    if piped.returncode or b"scopeprof export: streamed" not in piped.stderr or \
            piped.stdout != data:
        fail(f"{family}: export perfetto -o - did not stream the file's bytes: "
             f"{piped.stderr!r}")
    _, _, flows = slices_of(decode_checked(family, data))
    pairs = collections.Counter()
    for fid, ends in flows.items():
        if len(ends["send"]) != 1 or len(ends["recv"]) != 1:
            fail(f"{family}: flow {fid} has ends {ends}")
        (spid, sname, _), (rpid, rname, _) = ends["send"][0], ends["recv"][0]
        if not sname.startswith("MPI_") or not rname.startswith("MPI_"):
            fail(f"{family}: flow {fid} from {sname} to {rname}")
        pairs[(spid - 1, rpid - 1)] += 1
    want = collections.Counter()
    for a in range(N):
        want[(a, (a + 1) % N)] += 4
        want[(a, a)] += 1
        if a < 2:
            want[(a, a + 2)] += 1
    if pairs != want or sorted(flows) != list(range(1, 5 * N + 3)):
        fail(f"{family}: flows {dict(pairs)} (ids {sorted(flows)}), the program sends {dict(want)}")
    print(f"ok: {family}: {len(flows)} MPI messages as flows, each send -> receive pair exact")
    ran += 1
    FLOW_FAMILIES.append(family)
if ran == 0:
    print("note: no MPI built: the flows were not checked")
# the stream takes files without MPI columns (h5py's, the shim's threads)
# and the MPI runs, flows included
for must in ("sequential", "big") + tuple(FLOW_FAMILIES):
    if must not in STREAMED:
        fail(f"{must}: export perfetto did not stream (streamed: {STREAMED})")
print(f"ok: streamed: {sorted(set(STREAMED))}")
