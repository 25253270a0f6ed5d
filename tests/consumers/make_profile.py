#!/usr/bin/python3
"""Write a schema-3 scope-profiler file with h5py, independently of scopeprof's
own writer, and the ground truth the consumer checks compare against.

Usage: make_profile.py OUT.h5 OUT.truth.json

Two ranks; rank 0 has two thread lanes (MainThread, w0), recursion and a
source-captured region; rank 1 one lane.  Times are integer ns."""
import json
import sys

import h5py
import numpy as np

MS = 1_000_000
ORIGIN = 1_700_000_000_000_000_000

# (rank, thread, region, start_ms, end_ms)
CALLS = [
    (0, 0, "main", 0, 100), (0, 0, "setup", 0, 20), (0, 0, "solve", 20, 90),
    (0, 0, "assemble", 30, 60), (0, 0, "assemble", 62, 70),
    (0, 0, "rec", 110, 200), (0, 0, "rec", 120, 180), (0, 0, "rec", 130, 170),
    (0, 0, "rec", 140, 150),
    (0, 1, "work", 10, 50), (0, 1, "solve", 15, 30), (0, 1, "work", 55, 58),
    (1, 0, "main", 1, 80), (1, 0, "setup", 1, 11), (1, 0, "solve", 11, 79),
    (1, 0, "assemble", 12, 13),
]
SOURCES = {"solve": ("solver.c", 42)}
THREADS = {0: [(0, "MainThread"), (1, "w0")], 1: [(0, "MainThread")]}


def reconstruct(calls, unit=MS):
    """Plain O(n^2) containment nesting per (rank, thread): the truth.  calls
    are (rank, thread, region, start, end) in units of `unit` ns; a call's
    parent is the latest-starting earlier call that contains it."""
    out = []
    for rank in sorted({c[0] for c in calls}):
        for thread in sorted({c[1] for c in calls if c[0] == rank}):
            lane = sorted((c for c in calls if c[0] == rank and c[1] == thread),
                          key=lambda c: (c[3], -c[4]))
            for i, c in enumerate(lane):
                parent = None
                for j in range(i - 1, -1, -1):
                    p = lane[j]
                    if p[3] <= c[3] and c[4] <= p[4]:
                        parent = j
                        break
                out.append({"rank": rank, "thread": thread, "region": c[2],
                            "start": c[3] * unit, "end": c[4] * unit, "parent": parent,
                            "lane_pos": i})
    # call paths and exclusive
    by_lane = {}
    for c in out:
        by_lane.setdefault((c["rank"], c["thread"]), []).append(c)
    for calls_ in by_lane.values():
        children = {}
        for c in calls_:
            children.setdefault(c["parent"], []).append(c)
        for c in calls_:
            path, p = [c["region"]], c["parent"]
            while p is not None:
                path.insert(0, calls_[p]["region"])
                p = calls_[p]["parent"]
            c["path"] = " > ".join(path)
            kids = children.get(c["lane_pos"], [])
            c["exclusive"] = (c["end"] - c["start"]) - sum(d["end"] - d["start"] for d in kids)
            c["recursive"] = c["region"] in path[:-1]
            c["caller"] = calls_[c["parent"]]["region"] if c["parent"] is not None else None
    return out


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def truth_from_h5(paths):
    """The same truth as for the synthetic file, read from schema-3 files
    written by the shim, with h5py only: rows of rank_region_index, event
    start = running sum of start_deltas within the row, end = start +
    duration, lanes from thread_ids, nesting rebuilt by reconstruct().
    Times are relative to the lowest rank's metadata start_time_ns (the run
    origin).  Where the file stores call_ids/parent_ids, the rebuilt nesting
    must agree with them."""
    raw, sources, threads, stored, files_meta = [], {}, {}, {}, {}
    for path in paths:
        with h5py.File(path, "r") as f:
            if int(f.attrs["scope_profiler_schema"]) != 3:
                raise ValueError(f"{path}: not schema 3")
            meta = f["metadata"].attrs
            files_meta[int(meta["mpi_rank"])] = (int(meta["start_time_ns"]),
                                                 _text(meta.get("label", "")))
            names = [_text(n) for n in f["region_table/names"][()]]
            idx, ev = f["rank_region_index"], f["events"]
            deltas, durs, tids = (ev[c][()] for c in ("start_deltas", "durations", "thread_ids"))
            ids = (ev["call_ids"][()], ev["parent_ids"][()]) if "parent_ids" in ev else None
            files = [_text(s) for s in idx["source_files"][()]]
            lines = idx["source_lines"][()]
            for row, rid in enumerate(idx["region_ids"][()]):
                rank, name = int(idx["ranks"][row]), names[int(rid)]
                o, n = int(idx["event_offsets"][row]), int(idx["event_counts"][row])
                start = 0
                for k in range(o, o + n):
                    start += int(deltas[k])  # first delta is absolute
                    raw.append((rank, int(tids[k]), name, start, start + int(durs[k])))
                    if ids is not None:
                        stored[raw[-1]] = (int(ids[0][k]), int(ids[1][k]))
                if files[row] and int(lines[row]) >= 0:
                    sources.setdefault(name, [files[row], int(lines[row])])
            tt = f["thread_table"]
            for r, i, nm in zip(tt["ranks"][()], tt["index"][()], tt["name"][()]):
                threads.setdefault(str(int(r)), []).append([int(i), _text(nm)])
    origin, label = files_meta[min(files_meta)]
    if len(set(raw)) != len(raw):
        raise ValueError("two identical calls on one lane: nesting is ambiguous")
    calls = reconstruct([(r, t, n, s - origin, e - origin) for r, t, n, s, e in raw], unit=1)
    if stored:
        by_lane = {}
        for c in calls:
            by_lane.setdefault((c["rank"], c["thread"]), []).append(c)

        def ids_of(c):
            return stored[(c["rank"], c["thread"], c["region"], c["start"] + origin,
                           c["end"] + origin)]
        for lane in by_lane.values():
            for c in lane:
                want = -1 if c["parent"] is None else ids_of(lane[c["parent"]])[0]
                if ids_of(c)[1] != want:
                    raise ValueError(f"rebuilt nesting puts {c} under call id {want}, the "
                                     f"file's parent_ids say {ids_of(c)[1]}")
    return {"origin": origin, "calls": calls, "sources": sources,
            "threads": {r: sorted(v) for r, v in threads.items()},
            "label": label or "profile"}


def write(path):
    names = []
    for c in CALLS:
        if c[2] not in names:
            names.append(c[2])
    rows = []  # (rank, region) in first-seen order per rank
    for rank in sorted({c[0] for c in CALLS}):
        for name in names:
            ev = [c for c in CALLS if c[0] == rank and c[2] == name]
            if ev:
                rows.append((rank, name, ev))
    starts, durs, threads = [], [], []
    idx = {k: [] for k in ("region_ids", "ranks", "event_offsets", "event_counts",
                           "source_lines", "exclusive_totals")}
    stats, files, texts, tags, meta = [], [], [], [], []
    for rank, name, ev in rows:
        idx["region_ids"].append(names.index(name))
        idx["ranks"].append(rank)
        idx["event_offsets"].append(len(starts))
        idx["event_counts"].append(len(ev))
        idx["source_lines"].append(SOURCES.get(name, ("", -1))[1])
        idx["exclusive_totals"].append(-1)
        s = [ORIGIN + c[3] * MS for c in ev]
        e = [ORIGIN + c[4] * MS for c in ev]
        d = [b - a for a, b in zip(s, e)]
        starts += [s[0]] + [s[i] - s[i - 1] for i in range(1, len(s))]
        durs += d
        threads += [c[1] for c in ev]
        mean = sum(d) / len(d)
        stats.append((sum(d), min(d), max(d), d[0], d[-1], min(s), max(e), 0, 0, mean,
                      sum((x - mean) ** 2 for x in d)))
        files.append(SOURCES.get(name, ("", -1))[0])
        texts.append("")
        tags.append("[]")
        meta.append("[]")
    st = h5py.string_dtype("utf-8")
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = 3
        f.attrs["storage_layout"] = "columnar"
        m = f.create_group("metadata")
        m.attrs["start_time_ns"] = ORIGIN
        m.attrs["mpi_size"] = 2
        m.attrs["label"] = "synthetic"
        f.create_dataset("region_table/names", data=np.array(names, dtype=object), dtype=st)
        g = f.create_group("rank_region_index")
        g["region_ids"] = np.array(idx["region_ids"], dtype=np.uint32)
        g["ranks"] = np.array(idx["ranks"], dtype=np.uint32)
        g["event_offsets"] = np.array(idx["event_offsets"], dtype=np.uint64)
        g["event_counts"] = np.array(idx["event_counts"], dtype=np.uint64)
        g["source_lines"] = np.array(idx["source_lines"], dtype=np.int64)
        g["exclusive_totals"] = np.array(idx["exclusive_totals"], dtype=np.int64)
        sdt = np.dtype([("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"),
                        ("first", "<i8"), ("last", "<i8"), ("start_minimum", "<i8"),
                        ("end_maximum", "<i8"), ("gpu_count", "<u8"), ("gpu_total", "<i8"),
                        ("mean", "<f8"), ("m2", "<f8")])
        g["summary_statistics"] = np.array(stats, dtype=sdt)
        for key, vals in (("source_files", files), ("source_texts", texts), ("tags", tags),
                          ("event_metadata", meta)):
            g.create_dataset(key, data=np.array(vals, dtype=object), dtype=st)
        e = f.create_group("events")
        e["start_deltas"] = np.array(starts, dtype=np.int64)
        e["durations"] = np.array(durs, dtype=np.int64)
        e["thread_ids"] = np.array(threads, dtype=np.int64)
        t = f.create_group("thread_table")
        trows = [(r, i, n) for r in sorted(THREADS) for i, n in THREADS[r]]
        t["ranks"] = np.array([r for r, _, _ in trows], dtype=np.uint32)
        t["index"] = np.array([i for _, i, _ in trows], dtype=np.int64)
        t["ident"] = np.array([1000 + i for _, i, _ in trows], dtype=np.int64)
        t["native_id"] = np.array([2000 + i for _, i, _ in trows], dtype=np.int64)
        t["daemon"] = np.zeros(len(trows), dtype=np.int8)
        t["start_ns"] = np.zeros(len(trows), dtype=np.int64)
        t["end_ns"] = np.full(len(trows), -1, dtype=np.int64)
        t["cpu_ns"] = np.full(len(trows), 1000, dtype=np.int64)
        t.create_dataset("name", data=np.array([n for _, _, n in trows], dtype=object), dtype=st)


if __name__ == "__main__":
    write(sys.argv[1])
    truth = {"origin": ORIGIN, "calls": reconstruct(CALLS), "sources": SOURCES,
             "threads": {str(k): v for k, v in THREADS.items()}, "label": "synthetic"}
    with open(sys.argv[2], "w") as f:
        json.dump(truth, f, indent=1)
