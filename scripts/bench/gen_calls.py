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
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema3_file  # noqa: E402

path, n = sys.argv[1], int(sys.argv[2])
scattered = "--scattered" in sys.argv[3:]
groups = n // 8                      # 4 calls per group and lane, 2 lanes
t = np.arange(groups, dtype=np.int64) * 1000 + 1_000_000
pattern = {"outer": [(0, 900)], "mid": [(10, 890)], "leaf": [(20, 300), (400, 800)]}
names = list(pattern)
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
schema3_file.write(path, names, rows, [(k, np.concatenate(parts)) for k, parts in
                                        (("start_deltas", starts), ("durations", durs),
                                         ("thread_ids", threads))])
