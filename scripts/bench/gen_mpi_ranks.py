#!/usr/bin/python3
"""N synthetic schema-3 rank files of E calls each with the MPI columns the
shim writes (events/mpi_*), written by h5py in the Python package's layout
(gzip chunks), for scripts/bench/report_mpi.

Each rank repeats E/4 steps on one lane inside `main`: compute, an
MPI_Allreduce on communicator 0 (a rank-dependent arrival, so there are
waits), an MPI_Send to the next rank and an MPI_Recv from the previous one.

With L lanes (default 1) each rank has L thread lanes (events/thread_ids)
running the steps at once, lane l shifted by 3*l ns and sending with tag
7 + l, so a rank's calls interleave its lanes; E/4 steps on each lane.

Usage: gen_mpi_ranks.py DIR N E [L]
"""
import os
import sys

import h5py
import numpy as np

STR = h5py.string_dtype("utf-8")
REGIONS = ["main", "compute", "MPI_Allreduce", "MPI_Send", "MPI_Recv"]
EXTRA = ["mpi_sent_bytes", "mpi_recv_bytes", "mpi_peer", "mpi_tag", "mpi_comm",
         "mpi_source", "mpi_recv_tag"]
SDT = np.dtype([("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"), ("first", "<i8"),
                ("last", "<i8"), ("start_minimum", "<i8"), ("end_maximum", "<i8"),
                ("gpu_count", "<u8"), ("gpu_total", "<i8"), ("mean", "<f8"), ("m2", "<f8")])


def lane_rows(rank, size, steps, lane):
    """One lane's calls per region: (starts, ends, sent, recv, peer, tag,
    comm, source, recv_tag)."""
    rng = np.random.default_rng(rank if lane == 0 else (rank, lane))
    t = 1_000_000 + np.arange(steps, dtype=np.int64) * 1000 + 3 * lane
    arrive = 600 + rng.integers(0, 200, steps)
    none = np.full(steps, -1, dtype=np.int64)
    nxt, prv = (rank + 1) % size, (rank + size - 1) % size
    sizes = (8 << rng.integers(0, 16, steps)).astype(np.int64)
    tag = 7 + lane
    return {
        "main": ([np.int64(0)], [t[-1] + 2000], [-1], [-1], [-1], [-1], [-1], [-1], [-1])
                if lane == 0 else ([], [], [], [], [], [], [], [], []),
        "compute": (t, t + arrive - 10, none, none, none, none, none, none, none),
        "MPI_Allreduce": (t + arrive, t + 900, np.full(steps, 8), np.full(steps, 8), none,
                          none, np.zeros(steps, dtype=np.int64), none, none),
        "MPI_Send": (t + 900, t + 920, sizes, none, np.full(steps, nxt), np.full(steps, tag),
                     np.zeros(steps, dtype=np.int64), none, none),
        "MPI_Recv": (t + 930, t + 960, none, sizes, np.full(steps, prv), none,
                     np.zeros(steps, dtype=np.int64), np.full(steps, prv), np.full(steps, tag)),
    }


def write_rank(path, rank, size, calls, lanes=1):
    steps = max(1, (calls - 1) // 4)
    per_lane = [lane_rows(rank, size, steps, lane) for lane in range(lanes)]
    starts, durs, extra, counts, stats, threads = [], [], [[] for _ in EXTRA], [], [], []
    for name in REGIONS:
        cols = [np.concatenate([np.asarray(rows[name][k], dtype=np.int64) for rows in per_lane])
                for k in range(9)]
        threads.append(np.concatenate([np.full(len(rows[name][0]), lane, dtype=np.int64)
                                       for lane, rows in enumerate(per_lane)]))
        s, e = cols[0], cols[1]
        d = e - s
        starts.append(np.diff(s, prepend=0))
        durs.append(d)
        for k in range(len(EXTRA)):
            extra[k].append(cols[2 + k])
        counts.append(len(s))
        stats.append((d.sum(), d.min(), d.max(), d[0], d[-1], s.min(), e.max(), 0, 0,
                      d.mean(), ((d - d.mean()) ** 2).sum()))
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        md = f.create_group("metadata")
        md.attrs["mpi_rank"] = np.int64(rank)
        md.attrs["mpi_size"] = np.int64(size)
        md.attrs["run_id"] = "bench-mpi"
        md.attrs["start_time_ns"] = np.int64(0)
        f.create_dataset("region_table/names", data=REGIONS, dtype=STR)
        g = f.create_group("rank_region_index")
        n = len(REGIONS)
        g["region_ids"] = np.arange(n, dtype=np.uint32)
        g["ranks"] = np.full(n, rank, dtype=np.uint32)
        g["event_offsets"] = np.cumsum([0] + counts[:-1]).astype(np.uint64)
        g["event_counts"] = np.array(counts, dtype=np.uint64)
        g["source_lines"] = np.full(n, -1, dtype=np.int64)
        g["exclusive_totals"] = np.full(n, -1, dtype=np.int64)
        g["summary_statistics"] = np.array(stats, dtype=SDT)
        for k, v in (("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                     ("event_metadata", "[]")):
            g.create_dataset(k, data=[v] * n, dtype=STR)
        ev = f.create_group("events")
        cols = [("start_deltas", starts), ("durations", durs)] + list(zip(EXTRA, extra))
        if lanes > 1:
            cols.append(("thread_ids", threads))
        for k, parts in cols:
            data = np.concatenate(parts).astype(np.int64)
            ev.create_dataset(k, data=data, chunks=(min(1 << 16, len(data)),),
                              compression="gzip", compression_opts=4, shuffle=True)


def main():
    out, n, e = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    lanes = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    os.makedirs(out, exist_ok=True)
    for r in range(n):
        write_rank(os.path.join(out, "bench_rank%05d.h5" % r), r, n, e, lanes)


if __name__ == "__main__":
    main()
