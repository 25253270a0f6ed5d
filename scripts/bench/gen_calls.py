#!/usr/bin/python3
"""A synthetic schema-3 profile of N calls, written by h5py (not by
scopeprof): nested outer > mid > 2 leaves, on 2 thread lanes, gzip chunks
like the Python package writes.  Shared by scripts/bench/export and
scripts/bench/report.

Usage: gen_calls.py OUT.h5 N [--scattered]
--scattered: every row's calls stored in reverse time order (each call a
run of its own for the streamed reader, which then replays the rank from
memory: docs/stream.md, "Scattered ranks").
"""
import sys
import h5py
import numpy as np

path, n = sys.argv[1], int(sys.argv[2])
scattered = "--scattered" in sys.argv[3:]
groups = n // 8                      # 4 calls per group and lane, 2 lanes
t = np.arange(groups, dtype=np.int64) * 1000 + 1_000_000
pattern = {"outer": [(0, 900)], "mid": [(10, 890)], "leaf": [(20, 300), (400, 800)]}
names = list(pattern)
st = h5py.string_dtype("utf-8")
starts, durs, threads, rows = [], [], [], []
offset = 0
for name in names:
    s_parts, d_parts, th_parts = [], [], []
    for lane in (0, 1):
        for a, b in pattern[name]:
            s_parts.append((t + a + lane * 7)[::-1] if scattered else t + a + lane * 7)
            d_parts.append(np.full(groups, b - a, dtype=np.int64))
            th_parts.append(np.full(groups, lane, dtype=np.int64))
    s = np.concatenate(s_parts); d = np.concatenate(d_parts)
    delta = np.diff(s, prepend=0)
    starts.append(delta); durs.append(d); threads.append(np.concatenate(th_parts))
    rows.append((names.index(name), offset, len(s), s, d))
    offset += len(s)
sdt = np.dtype([("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"), ("first", "<i8"),
                ("last", "<i8"), ("start_minimum", "<i8"), ("end_maximum", "<i8"),
                ("gpu_count", "<u8"), ("gpu_total", "<i8"), ("mean", "<f8"), ("m2", "<f8")])
stats = [(d.sum(), d.min(), d.max(), d[0], d[-1], s.min(), (s + d).max(), 0, 0, d.mean(),
          ((d - d.mean()) ** 2).sum()) for _, _, _, s, d in rows]
with h5py.File(path, "w") as f:
    f.attrs["scope_profiler_schema"] = 3
    f.attrs["storage_layout"] = "columnar"
    f.create_group("metadata").attrs["start_time_ns"] = 1_000_000
    f.create_dataset("region_table/names", data=np.array(names, dtype=object), dtype=st)
    g = f.create_group("rank_region_index")
    g["region_ids"] = np.array([r[0] for r in rows], dtype=np.uint32)
    g["ranks"] = np.zeros(len(rows), dtype=np.uint32)
    g["event_offsets"] = np.array([r[1] for r in rows], dtype=np.uint64)
    g["event_counts"] = np.array([r[2] for r in rows], dtype=np.uint64)
    g["source_lines"] = np.full(len(rows), -1, dtype=np.int64)
    g["exclusive_totals"] = np.full(len(rows), -1, dtype=np.int64)
    g["summary_statistics"] = np.array(stats, dtype=sdt)
    for k, v in (("source_files", ""), ("source_texts", ""), ("tags", "[]"), ("event_metadata", "[]")):
        g.create_dataset(k, data=np.array([v] * len(rows), dtype=object), dtype=st)
    e = f.create_group("events")
    for k, parts in (("start_deltas", starts), ("durations", durs), ("thread_ids", threads)):
        column = np.concatenate(parts)
        # h5py refuses a chunk longer than the column (small files)
        e.create_dataset(k, data=column, chunks=(max(1, min(1 << 16, len(column))),),
                         compression="gzip", compression_opts=4, shuffle=True)
