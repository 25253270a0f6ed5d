#!/usr/bin/python3
"""Write N synthetic schema-3 rank files of E events each (h5py, laid out
like the Python scope-profiler writes them) for the merge benchmark.

Usage: gen_ranks.py DIR N E [--crossing]
  --crossing: consecutive calls overlap partially (a rank whose calls are
              not properly nested: the error path of the reconstruction)
"""
import json
import os
import sys

import h5py
import numpy as np

STR = h5py.string_dtype("utf-8")


def write_rank(path, rank, events, size, rng, crossing=False):
    regions = ["main", "solve", "exchange"]
    counts = [1, (events - 1 + 1) // 2, (events - 1) // 2]
    with h5py.File(path, "w") as f:
        f.attrs["scope_profiler_schema"] = np.int64(3)
        f.attrs["storage_layout"] = "columnar"
        md = f.create_group("metadata")
        md.attrs["mpi_size"] = np.int64(size)
        md.attrs["mpi_rank"] = np.int64(rank)
        md.attrs["run_id"] = "bench-run"
        f.create_dataset("region_table/names", data=regions, dtype=STR)
        ix = f.create_group("rank_region_index")
        ix["region_ids"] = np.arange(3, dtype=np.uint32)
        ix["ranks"] = np.full(3, rank, dtype=np.uint32)
        ix["event_offsets"] = np.cumsum([0] + counts[:-1]).astype(np.uint64)
        ix["event_counts"] = np.array(counts, dtype=np.uint64)
        ix["source_lines"] = np.full(3, -1, dtype=np.int64)
        ix["exclusive_totals"] = np.full(3, -1, dtype=np.int64)
        for col in ("source_files", "source_texts"):
            ix.create_dataset(col, data=[""] * 3, dtype=STR)
        ix.create_dataset("tags", data=[json.dumps([])] * 3, dtype=STR)
        # properly nested calls: main around everything, solve and exchange
        # alternating back to back inside it
        n = events - 1
        t = 1000 + np.arange(n, dtype=np.int64) * 1000 + rank
        d = rng.integers(1100, 1900, n) if crossing else rng.integers(100, 900, n)
        d = d.astype(np.int64)
        starts = [np.array([0], dtype=np.int64)]
        # main covers the calls, which are shifted by the rank (+ rank ns)
        durations = [np.array([1000 * (n + 2) + rank], dtype=np.int64)]
        for k in (0, 1):
            s, dd = t[k::2], d[k::2]
            starts.append(np.diff(s, prepend=0))
            durations.append(dd)
        f["events/start_deltas"] = np.concatenate(starts)
        f["events/durations"] = np.concatenate(durations)


def main():
    out, n, e = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    crossing = "--crossing" in sys.argv[4:]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    for r in range(n):
        write_rank(os.path.join(out, "bench_rank%05d.h5" % r), r, e, n, rng, crossing)


if __name__ == "__main__":
    main()
