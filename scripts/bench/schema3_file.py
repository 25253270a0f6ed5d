"""Writing a one-rank schema-3 file with h5py, as the Python package lays it
out (not with scopeprof), for the synthetic generators gen_calls.py and
gen_forks.py: the region table, the rank-region index with each row's
summary statistics, and the event columns in gzip chunks."""
import h5py
import numpy as np

STATS = np.dtype([("total", "<i8"), ("minimum", "<i8"), ("maximum", "<i8"), ("first", "<i8"),
                  ("last", "<i8"), ("start_minimum", "<i8"), ("end_maximum", "<i8"),
                  ("gpu_count", "<u8"), ("gpu_total", "<i8"), ("mean", "<f8"), ("m2", "<f8")])


def write(path, names, rows, columns):
    """rows: (region id, event offset, event count, starts, durations) per
    row of rank 0; columns: (name, array) of events/, in order."""
    st = h5py.string_dtype("utf-8")
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
        g["summary_statistics"] = np.array(stats, dtype=STATS)
        for k, v in (("source_files", ""), ("source_texts", ""), ("tags", "[]"),
                     ("event_metadata", "[]")):
            g.create_dataset(k, data=np.array([v] * len(rows), dtype=object), dtype=st)
        e = f.create_group("events")
        for k, column in columns:
            # h5py refuses a chunk longer than the column (small files)
            e.create_dataset(k, data=column, chunks=(max(1, min(1 << 16, len(column))),),
                             compression="gzip", compression_opts=4, shuffle=True)
