#!/usr/bin/python3
"""Copy a profile with every row's events stored out of time order: each
row (rank_region_index) of every rank reversed, or shuffled with --shuffle
(numpy's generator, seed 1 unless --seed S), every events/ column moved
alike; start_deltas re-encoded per row, the rows' first/last statistics
set to their new first and last calls.  Such a rank is "scattered" for
the streamed reader (docs/stream.md, "Scattered ranks"): the tests and
scripts/bench/scattered make their files with it.

With --blocks L the rows are cut in stretches of L calls kept in order,
the stretches stored last first: runs of L calls (the threshold's measure
in scripts/bench/scattered).

Usage: scatter.py IN.h5 OUT.h5 [--shuffle] [--seed S] [--blocks L]
"""
import shutil
import sys

import h5py
import numpy as np

src, dst = sys.argv[1], sys.argv[2]
shuffle = "--shuffle" in sys.argv[3:]
seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
blocks = int(sys.argv[sys.argv.index("--blocks") + 1]) if "--blocks" in sys.argv else 1
rng = np.random.default_rng(seed)
shutil.copyfile(src, dst)
with h5py.File(dst, "r+") as f:
    g, ev = f["rank_region_index"], f["events"]
    offsets, counts = g["event_offsets"][:], g["event_counts"][:]
    deltas = "start_deltas" in ev
    columns = {k: ev[k][:] for k in ev}
    first_col, second_col = ("start_deltas", "durations") if deltas else ("start_times",
                                                                           "end_times")
    starts = columns[first_col].copy()
    stats = g["summary_statistics"][:] if "summary_statistics" in g else None
    for r, (o, n) in enumerate(zip(offsets, counts)):
        o, n = int(o), int(n)
        if n < 2:
            continue
        order = rng.permutation(n) if shuffle else np.arange(n)[::-1]
        if blocks > 1 and not shuffle:
            cuts = np.arange(0, n, blocks)[::-1]
            order = np.concatenate([np.arange(c, min(c + blocks, n)) for c in cuts])
        sl = slice(o, o + n)
        s = np.cumsum(columns[first_col][sl]) if deltas else columns[first_col][sl]
        s = s[order]
        for k, col in columns.items():
            if k != first_col:
                col[sl] = col[sl][order]
        starts[sl] = np.diff(s, prepend=0) if deltas else s
        if stats is not None:
            d = columns[second_col][sl] if deltas else columns[second_col][sl] - s
            stats[r]["first"], stats[r]["last"] = d[0], d[-1]
    columns[first_col] = starts
    for k, col in columns.items():
        ev[k][:] = col
    if stats is not None:
        g["summary_statistics"][:] = stats
