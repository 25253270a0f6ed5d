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
Files of 1,000 calls or more must take at most 24 bytes per call."""
import os
import re
import subprocess
import sys

from common import fail, inputs, lane_names, scopeprof, workdir

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "perfetto")

d = workdir("perfetto")
subprocess.run(["protoc", f"--proto_path={PROTO_DIR}", f"--python_out={d}",
                os.path.join(PROTO_DIR, "perfetto_trace.proto")], check=True)
sys.path.insert(0, d)
import perfetto_trace_pb2 as pb  # noqa: E402

BEGIN, END = pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END


def slices_of(trace):
    """[(pid, thread name, name, start, dur, parent name)] and the tracks."""
    tracks, processes = {}, {}
    seq = {}   # sequence id -> state
    out = []
    for p in trace.packet:
        which = p.WhichOneof("data")
        if which == "track_descriptor":
            t = p.track_descriptor
            if t.HasField("process"):
                processes[t.uuid] = t.process.pid
            else:
                if not t.HasField("thread") or t.parent_uuid not in processes:
                    fail(f"thread track {t.uuid} without a thread or known process")
                tracks[t.uuid] = (t.thread.pid, t.thread.thread_name)
            continue
        sid = p.trusted_packet_sequence_id
        if not sid:
            fail("packet without trusted_packet_sequence_id")
        if p.sequence_flags & 1:  # SEQ_INCREMENTAL_STATE_CLEARED
            seq[sid] = {"names": {}, "stack": [], "ts": None, "track": None, "clock": None}
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
            if 6 not in clocks or clocks[6].timestamp != clocks[s["clock"]].timestamp:
                fail("the snapshot must anchor the sequence clock to BOOTTIME")
            s["ts"] = clocks[s["clock"]].timestamp
            continue
        if which != "track_event":
            fail(f"unexpected packet {which}")
        if s["ts"] is None:
            fail("track event before the clock snapshot of its sequence")
        s["ts"] += p.timestamp
        e = p.track_event
        track = e.track_uuid if e.HasField("track_uuid") else s["track"]
        if track not in tracks:
            fail(f"event on an undescribed track {track}")
        if e.type == BEGIN:
            if e.name_iid not in s["names"]:
                fail(f"name id {e.name_iid} not interned on sequence {sid}")
            s["stack"].append((s["names"][e.name_iid], s["ts"]))
        elif e.type == END:
            if not s["stack"]:
                fail("SLICE_END without a SLICE_BEGIN")
            name, start = s["stack"].pop()
            parent = s["stack"][-1][0] if s["stack"] else ""
            pid, thread = tracks[track]
            out.append((pid - 1, thread, name, start, s["ts"] - start, parent))
        else:
            fail(f"unexpected event type {e.type}")
    for sid, s in seq.items():
        if s["stack"]:
            fail(f"sequence {sid} ends with open slices")
    return out, tracks


for name, h5, truth in inputs(d):
    out = os.path.join(d, name + ".pftrace")
    scopeprof("export", "perfetto", *h5, "-o", out)
    with open(out, "rb") as f:
        data = f.read()
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
    trace = pb.Trace.FromString(data)
    got, tracks = slices_of(trace)
    threads = lane_names(truth)
    exp = [(c["rank"], threads[c["rank"]][c["thread"]], c["region"], c["start"],
            c["end"] - c["start"], c["caller"] or "") for c in truth["calls"]]
    if sorted(got) != sorted(exp):
        fail(f"{name}: slices differ from the input calls:\n{sorted(got)[:10]}\n{sorted(exp)[:10]}")
    lanes = {(c["rank"], c["thread"]) for c in truth["calls"]}
    if len(tracks) != len(lanes):
        fail(f"{name}: {len(tracks)} thread tracks for {len(lanes)} lanes")
    per_call = len(data) / len(exp)
    if len(exp) >= 1000 and per_call > 24:
        fail(f"{name}: {per_call:.1f} bytes per call (at most 24)")
    print(f"ok: {name}: {len(got)} slices on {len(tracks)} tracks, {len(data)} bytes, "
          f"{per_call:.1f} bytes per call")

# The size bound on a run large enough for headers not to matter: the basic
# program with 20,000 ticks (outer, 5 inner, fib(10) = 177 calls, ticks).
ticks = 20000
big = os.path.join(d, "big")
env = dict(os.environ, LD_PRELOAD=os.environ["SCOPEPROF_SHIM"], SCOPE_PROFILER_OUTPUT=big)
subprocess.run([os.path.join(os.environ["SCOPEPROF_PROGRAMS"], "basic"), str(ticks)], env=env,
               check=True, stdout=subprocess.DEVNULL)
out = big + ".pftrace"
scopeprof("export", "perfetto", big + "_rank00000.h5", "-o", out)
with open(out, "rb") as f:
    data = f.read()
got, _ = slices_of(pb.Trace.FromString(data))
if len(got) != ticks + 183:
    fail(f"big: {len(got)} slices, expected {ticks + 183}")
per_call = len(data) / len(got)
if per_call > 24:
    fail(f"big: {per_call:.1f} bytes per call (at most 24)")
print(f"ok: big: {len(got)} slices, {per_call:.1f} bytes per call")
