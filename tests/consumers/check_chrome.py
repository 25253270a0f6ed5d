#!/usr/bin/python3
"""`scopeprof export chrome`: strict structural validation of the Trace Event
format, one track per lane, and the X events equal the input calls
(microseconds after origin).  Inputs: the synthetic file and files written by
real programs under the shim (common.inputs).  The per-call args (ids,
durations) come with --call-args; without it every call of a region carries
the same args, so speedscope's Chrome importer (one frame per distinct name
and args) gives a region one frame."""
import json
import os

from common import fail, inputs, lane_names, scopeprof, workdir

d = workdir("chrome")
for name, h5, truth in inputs(d):
    out = os.path.join(d, name + ".trace.json")
    scopeprof("export", "chrome", *h5, "-o", out)
    plain = json.load(open(out))
    per_region = {}
    for ev in plain["traceEvents"]:
        if ev.get("ph") == "X":
            per_region.setdefault(ev["name"], set()).add(json.dumps(ev.get("args", {}),
                                                                     sort_keys=True))
            if "call_id" in ev.get("args", {}):
                fail(f"{name}: per-call args without --call-args: {ev}")
    if any(len(a) != 1 for a in per_region.values()):
        fail(f"{name}: calls of one region carry different args: {per_region}")
    scopeprof("export", "chrome", "--call-args", *h5, "-o", out)
    doc = json.load(open(out))
    if doc.get("displayTimeUnit") != "ms" or not isinstance(doc.get("traceEvents"), list):
        fail("top level must have displayTimeUnit ms and a traceEvents list")
    if not doc["metadata"]["exporter"].startswith("scopeprof@"):
        fail("metadata.exporter")
    names = {}
    xs = []
    flows = {}
    for ev in doc["traceEvents"]:
        ph = ev.get("ph")
        for field in ("name", "ph", "pid", "tid"):
            if field not in ev:
                fail(f"event without {field}: {ev}")
        if not isinstance(ev["pid"], int) or not isinstance(ev["tid"], int):
            fail(f"pid/tid must be integers: {ev}")
        if ph == "M":
            if ev["name"] in ("process_name", "thread_name"):
                if not isinstance(ev.get("args", {}).get("name"), str) or not ev["args"]["name"]:
                    fail(f"metadata event without a name: {ev}")
                names[(ev["name"], ev["pid"], ev["tid"] if ev["name"] == "thread_name" else 0)] = \
                    ev["args"]["name"]
            elif "sort_index" not in ev.get("args", {}):
                fail(f"unexpected metadata event {ev}")
        elif ph == "X":
            for field in ("ts", "dur", "cat", "args"):  # args: with --call-args
                if field not in ev:
                    fail(f"X event without {field}: {ev}")
            if not isinstance(ev["ts"], (int, float)) or ev["dur"] < 0:
                fail(f"bad ts/dur {ev}")
            xs.append(ev)
        elif ph in ("s", "f"):
            # MPI message lines: an id, bound to the enclosing slice
            if not isinstance(ev.get("id"), int) or ev.get("cat") != "mpi" or \
                    (ph == "f" and ev.get("bp") != "e"):
                fail(f"bad flow event {ev}")
            flows.setdefault(ev["id"], []).append(ev)
        else:
            fail(f"unexpected phase {ph}")
    # Every X event's process and thread are named.
    for ev in xs:
        if ("process_name", ev["pid"], 0) not in names or ("thread_name", ev["pid"], ev["tid"]) not in names:
            fail(f"X event on an unnamed pid/tid: {ev}")
    # Each flow has one start and one finish, each inside an X event of its track.
    for fid, ends in flows.items():
        if sorted(e["ph"] for e in ends) != ["f", "s"]:
            fail(f"flow {fid} has ends {ends}")
        for e in ends:
            if not any(x["pid"] == e["pid"] and x["tid"] == e["tid"] and
                       x["ts"] <= e["ts"] <= x["ts"] + x["dur"] for x in xs):
                fail(f"flow end {e} is inside no slice of its track")
    threads = lane_names(truth)
    # One track (pid = rank, tid) per lane that has calls, named after the lane.
    tracks = {(e["pid"], e["tid"]) for e in xs}
    lanes = {(c["rank"], c["thread"]) for c in truth["calls"]}
    if len(tracks) != len(lanes) or \
            sorted((p, names[("thread_name", p, t)]) for p, t in tracks) != \
            sorted((r, threads[r][t]) for r, t in lanes):
        fail(f"{name}: tracks {sorted(tracks)} for lanes {sorted(lanes)}")
    ids = {(e["pid"], e["args"]["call_id"]): e for e in xs}
    for e in xs:
        p = e["args"]["parent_id"]
        if p >= 0:
            parent = ids[(e["pid"], p)]
            # in integer ns: microseconds with 3 decimals do not add exactly in floats
            ns = lambda ev: (round(ev["ts"] * 1000), round((ev["ts"] + ev["dur"]) * 1000))
            if not (ns(parent)[0] <= ns(e)[0] and ns(e)[1] <= ns(parent)[1]
                    and parent["tid"] == e["tid"]):
                fail(f"{name}: parent {parent} does not contain {e}")
    # (rank, lane, region, start ns, duration ns, parent region) per call
    got = sorted((e["pid"], names[("thread_name", e["pid"], e["tid"])], e["name"],
                  round(e["ts"] * 1000), round(e["dur"] * 1000),
                  ids[(e["pid"], e["args"]["parent_id"])]["name"]
                  if e["args"]["parent_id"] >= 0 else "") for e in xs)
    exp = sorted((c["rank"], threads[c["rank"]][c["thread"]], c["region"], c["start"],
                  c["end"] - c["start"], c["caller"] or "") for c in truth["calls"])
    if got != exp:
        fail(f"{name}: X events differ from the input calls:\n{got}\n{exp}")
    print(f"ok: {name}: {len(xs)} X events on {len(tracks)} tracks, {len(names)} named "
          "processes/threads")
