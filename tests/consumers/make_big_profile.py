#!/usr/bin/python3
"""A large schema-3 file written by h5py (not by scopeprof): N calls over R
ranks and 2 thread lanes per rank, a time-step loop of 8 nested calls

    step > compute > kernel_a, kernel_b;  step > halo > pack, unpack;  step > reduce

with durations jittered per step and a compute imbalance growing with the
rank (rank R-1 computes about 20 % longer than rank 0; from 8 ranks on, the
last rank is a straggler computing 20 % longer than that), so the report's
load-balance and timeline have something to show at any scale.

With "mpi" after RANKS, "reduce" is named "MPI_Allreduce", as the MPI
interception names the calls it records.

usage: make_big_profile.py OUT.h5 CALLS [RANKS [mpi]]   (prints a JSON summary)"""
import json
import sys

import h5py
import numpy as np

NAMES = ["step", "compute", "kernel_a", "kernel_b", "halo", "pack", "unpack", "reduce"]
ORIGIN = 1_000_000_000


def group_calls(t0, length, f):
    """(start, end) arrays per region for steps starting at t0 of `length`
    ns, compute scaled by f (0.8..1); strictly nested in integer ns."""
    L = length.astype(np.float64)
    c_end = t0 + (0.01 * L + 0.6 * L * f).astype(np.int64)
    ka_end = t0 + (0.02 * L + 0.3 * L * f).astype(np.int64)
    return {
        "step": (t0, t0 + (0.98 * L).astype(np.int64)),
        "compute": (t0 + (0.01 * L).astype(np.int64), c_end),
        "kernel_a": (t0 + (0.02 * L).astype(np.int64), ka_end),
        "kernel_b": (ka_end + 1, c_end - 2),
        "halo": (t0 + (0.75 * L).astype(np.int64), t0 + (0.85 * L).astype(np.int64)),
        "pack": (t0 + (0.76 * L).astype(np.int64), t0 + (0.80 * L).astype(np.int64)),
        "unpack": (t0 + (0.81 * L).astype(np.int64), t0 + (0.84 * L).astype(np.int64)),
        "reduce": (t0 + (0.86 * L).astype(np.int64), t0 + (0.90 * L).astype(np.int64)),
    }


def write(path, calls, ranks, mpi=False):
    lanes = 2
    steps = max(1, calls // (len(NAMES) * ranks * lanes))
    rng = np.random.default_rng(12345)
    per_rank = {}
    for r in range(ranks):
        f = 0.8 + 0.2 * (r / max(1, ranks - 1))
        if ranks >= 8 and r == ranks - 1:
            f = 1.2  # compute still ends before halo starts (0.73 < 0.75 of the step)
        for lane in range(lanes):
            length = rng.integers(8_000, 12_000, steps, dtype=np.int64)
            t0 = ORIGIN + 1000 + np.concatenate(([0], np.cumsum(length)[:-1])) + lane * 3
            per_rank.setdefault(r, []).append(group_calls(t0, length, f))
    sdt = np.dtype([("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"), ("first", "<i8"),
                    ("last", "<i8"), ("start_minimum", "<i8"), ("end_maximum", "<i8"),
                    ("gpu_count", "<u8"), ("gpu_total", "<i8"), ("mean", "<f8"), ("m2", "<f8")])
    rows, starts, durs, threads, stats = [], [], [], [], []
    offset = 0
    for r in range(ranks):
        for k, name in enumerate(NAMES):
            s = np.concatenate([g[name][0] for g in per_rank[r]])
            e = np.concatenate([g[name][1] for g in per_rank[r]])
            th = np.concatenate([np.full(steps, lane, dtype=np.int64) for lane in range(lanes)])
            d = e - s
            starts.append(np.diff(s, prepend=0))
            durs.append(d)
            threads.append(th)
            stats.append((d.sum(), d.min(), d.max(), d[0], d[-1], s.min(), e.max(), 0, 0,
                          d.mean(), ((d - d.mean()) ** 2).sum()))
            rows.append((k, r, offset, len(s)))
            offset += len(s)
    st = h5py.string_dtype("utf-8")
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = 3
        f.attrs["storage_layout"] = "columnar"
        m = f.create_group("metadata")
        m.attrs["start_time_ns"] = ORIGIN
        m.attrs["mpi_size"] = ranks
        m.attrs["label"] = "big-synthetic"
        m.attrs["executable"] = "/opt/app/synthetic"
        m.attrs["hostname"] = "node001"
        names = [("MPI_Allreduce" if mpi and n == "reduce" else n) for n in NAMES]
        f.create_dataset("region_table/names", data=np.array(names, dtype=object), dtype=st)
        g = f.create_group("rank_region_index")
        g["region_ids"] = np.array([x[0] for x in rows], dtype=np.uint32)
        g["ranks"] = np.array([x[1] for x in rows], dtype=np.uint32)
        g["event_offsets"] = np.array([x[2] for x in rows], dtype=np.uint64)
        g["event_counts"] = np.array([x[3] for x in rows], dtype=np.uint64)
        g["source_lines"] = np.full(len(rows), -1, dtype=np.int64)
        g["exclusive_totals"] = np.full(len(rows), -1, dtype=np.int64)
        g["summary_statistics"] = np.array(stats, dtype=sdt)
        for k, v in (("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                     ("event_metadata", "[]")):
            g.create_dataset(k, data=np.array([v] * len(rows), dtype=object), dtype=st)
        e = f.create_group("events")
        for k, parts in (("start_deltas", starts), ("durations", durs), ("thread_ids", threads)):
            col = np.concatenate(parts)
            e.create_dataset(k, data=col, chunks=(min(1 << 16, len(col)),),
                             compression="gzip", compression_opts=1, shuffle=True)
        t = f.create_group("thread_table")
        t["ranks"] = np.repeat(np.arange(ranks, dtype=np.uint32), lanes)
        t["index"] = np.tile(np.arange(lanes, dtype=np.int64), ranks)
        t["ident"] = np.arange(ranks * lanes, dtype=np.int64) + 1000
        t["native_id"] = np.arange(ranks * lanes, dtype=np.int64) + 2000
        t["daemon"] = np.zeros(ranks * lanes, dtype=np.int8)
        t["start_ns"] = np.zeros(ranks * lanes, dtype=np.int64)
        t["end_ns"] = np.full(ranks * lanes, -1, dtype=np.int64)
        t["cpu_ns"] = np.full(ranks * lanes, -1, dtype=np.int64)
        names = [("MainThread" if i == 0 else f"worker{i}") for _ in range(ranks)
                 for i in range(lanes)]
        t.create_dataset("name", data=np.array(names, dtype=object), dtype=st)
    return {"calls": offset, "ranks": ranks, "lanes": lanes, "steps": steps}


if __name__ == "__main__":
    n = int(sys.argv[2])
    print(json.dumps(write(sys.argv[1], n, int(sys.argv[3]) if len(sys.argv) > 3 else 2,
                           len(sys.argv) > 4 and sys.argv[4] == "mpi")))
