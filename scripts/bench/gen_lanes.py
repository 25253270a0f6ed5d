#!/usr/bin/python3
"""A synthetic schema-3 profile of about N calls on L thread lanes running
at once, written by h5py (not by scopeprof): each lane repeats outer > mid >
2 leaves (gen_calls.py's shape, 4 calls a group), the lanes' groups
interleaved in time, gzip chunks.  For scripts/bench/perfetto_lanes (a
rank's lanes, which `export perfetto` writes one after the other).

Usage: gen_lanes.py OUT.h5 N L
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema3_file  # noqa: E402

path, n, lanes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
groups = max(1, n // (4 * lanes))
t = np.arange(groups, dtype=np.int64) * 1000 + 1_000_000
pattern = {"outer": [(0, 900)], "mid": [(10, 890)], "leaf": [(20, 300), (400, 800)]}
names = list(pattern)
starts, durs, threads, rows = [], [], [], []
offset = 0
for name in names:
    s_parts, d_parts, th_parts = [], [], []
    for lane in range(lanes):
        for a, b in pattern[name]:
            s_parts.append(t + a + lane % 7)
            d_parts.append(np.full(groups, b - a, dtype=np.int64))
            th_parts.append(np.full(groups, lane, dtype=np.int64))
    s = np.concatenate(s_parts); d = np.concatenate(d_parts)
    starts.append(np.diff(s, prepend=0)); durs.append(d); threads.append(np.concatenate(th_parts))
    rows.append((names.index(name), offset, len(s), s, d))
    offset += len(s)
schema3_file.write(path, names, rows, [(k, np.concatenate(parts)) for k, parts in
                                        (("start_deltas", starts), ("durations", durs),
                                         ("thread_ids", threads))])
