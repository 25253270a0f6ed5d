#!/usr/bin/python3
"""A synthetic schema-3 profile of about N calls with fork edges, written by
h5py (not by scopeprof), shaped like an OpenMP run recorded by the shim:
lane 0 runs outer > omp parallel > 2 leaves, lane 1 (the worker) an
omp parallel forked from lane 0's (events/fork_parent_ids: its implicit
task, merged into the encountering thread's call) > 2 leaves; call ids
0..N-1 and their parent ids, gzip chunks.  For scripts/bench/report_forks.

Usage: gen_forks.py OUT.h5 N
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schema3_file  # noqa: E402

path, n = sys.argv[1], int(sys.argv[2])
groups = n // 7                      # 4 calls on lane 0, 3 on lane 1 per group
t = np.arange(groups, dtype=np.int64) * 1000 + 1_000_000
# (lane, start, end) per region, in the order events are stored
pattern = {"outer": [(0, 0, 900)],
           "omp parallel": [(0, 10, 890), (1, 15, 880)],
           "leaf": [(0, 20, 300), (0, 400, 800), (1, 25, 305), (1, 405, 805)]}
names = list(pattern)
starts, durs, threads, forks, parents, rows = [], [], [], [], [], []
offset = 0
# call ids are event positions: the first event of each region's row
first = {"outer": 0, "omp parallel": groups, "leaf": 3 * groups}
g_ix = np.arange(groups, dtype=np.int64)
for name in names:
    s_parts, d_parts, th_parts, f_parts, p_parts = [], [], [], [], []
    for k, (lane, a, b) in enumerate(pattern[name]):
        s_parts.append(t + a)
        d_parts.append(np.full(groups, b - a, dtype=np.int64))
        th_parts.append(np.full(groups, lane, dtype=np.int64))
        if name == "omp parallel" and lane == 1:
            # the encountering thread's call of the same group: its call id
            # is its event position (block 0 of this row)
            f_parts.append(offset + np.arange(groups, dtype=np.int64))
        else:
            f_parts.append(np.full(groups, -1, dtype=np.int64))
        # the lane's enclosing call (omp parallel: lane 0 block 0, lane 1 block 1)
        parent = {"outer": None, "omp parallel": "outer" if lane == 0 else None,
                  "leaf": "omp parallel"}[name]
        p_parts.append(np.full(groups, -1, dtype=np.int64) if parent is None else
                       first[parent] + lane * groups + g_ix)
    s = np.concatenate(s_parts); d = np.concatenate(d_parts)
    starts.append(np.diff(s, prepend=0)); durs.append(d)
    threads.append(np.concatenate(th_parts)); forks.append(np.concatenate(f_parts))
    parents.append(np.concatenate(p_parts))
    rows.append((names.index(name), offset, len(s), s, d))
    offset += len(s)
total = offset
schema3_file.write(path, names, rows,
                   [("start_deltas", np.concatenate(starts)), ("durations", np.concatenate(durs)),
                    ("thread_ids", np.concatenate(threads)),
                    ("call_ids", np.arange(total, dtype=np.int64)),
                    ("parent_ids", np.concatenate(parents)),
                    ("fork_parent_ids", np.concatenate(forks))])
