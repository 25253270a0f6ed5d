#!/usr/bin/python3
"""Independent check of a file written by the shim, with h5py (Debian's
python3-h5py), not with our reader: exact names, dtypes, counts and that the
decoded timestamps nest.  Usage: check_with_h5py.py SHIM PROGRAM"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

shim, program = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    # As tests/integration/harness.c: sanitizer passes (scripts/test.d/asan)
    # need their runtime loaded first and choose the writer's namespace.
    first = os.environ.get("SCOPEPROF_TEST_PRELOAD_PREFIX", "")
    env["LD_PRELOAD"] = first + ":" + shim if first else shim
    if "SCOPEPROF_TEST_WRITER_NAMESPACE" in os.environ:
        env["SCOPE_PROFILER_WRITER_NAMESPACE"] = os.environ["SCOPEPROF_TEST_WRITER_NAMESPACE"]
    out = subprocess.run([program, "300"], cwd=tmp, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    path = os.path.join(tmp, "basic_rank00000.h5")
    with h5py.File(path, "r") as f:
        assert int(f.attrs["scope_profiler_schema"]) == 3
        assert f.attrs["storage_layout"] in ("columnar", b"columnar")
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
        assert sorted(names) == ["fib", "inner", "outer", "tick"], names
        idx = f["rank_region_index"]
        expect = {
            "region_ids": np.uint32, "ranks": np.uint32, "event_offsets": np.uint64,
            "event_counts": np.uint64, "source_lines": np.int64, "exclusive_totals": np.int64,
        }
        for col, dtype in expect.items():
            assert idx[col].dtype == dtype, (col, idx[col].dtype)
        fields = list(idx["summary_statistics"].dtype.names)
        assert fields == ["total", "minimum", "maximum", "first", "last", "start_minimum",
                          "end_maximum", "gpu_count", "gpu_total", "mean", "m2"], fields
        ev = f["events"]
        assert "start_times" not in ev and "end_times" not in ev
        assert "gpu_durations" not in ev and "task_ids" not in ev and "await_ns" not in ev
        for col in ("start_deltas", "durations", "call_ids", "parent_ids", "thread_ids"):
            assert ev[col].dtype == np.int64, (col, ev[col].dtype)
        counts = dict(zip((names[i] for i in idx["region_ids"][()]), idx["event_counts"][()]))
        assert counts == {"outer": 1, "inner": 5, "fib": 177, "tick": 300}, counts
        deltas, durations = ev["start_deltas"][()], ev["durations"][()]
        offsets = idx["event_offsets"][()]
        stats = idx["summary_statistics"][()]
        starts = {}
        for row, rid in enumerate(idx["region_ids"][()]):
            o, n = int(offsets[row]), int(idx["event_counts"][row])
            s = np.cumsum(deltas[o:o + n])
            d = durations[o:o + n]
            assert (d >= 0).all()
            assert stats["total"][row] == d.sum() and stats["minimum"][row] == d.min()
            assert stats["start_minimum"][row] == s.min()
            assert stats["end_maximum"][row] == (s + d).max()
            starts[names[rid]] = (s, s + d)
        (os_, oe), (is_, ie) = starts["outer"], starts["inner"]
        assert (is_ >= os_[0]).all() and (ie <= oe[0]).all()
        assert f["metadata"].attrs["source"] in ("native", b"native")
        assert int(f["metadata"].attrs["mpi_rank"]) == 0
        tt = f["thread_table"]
        assert tt["ranks"].dtype == np.uint32 and tt["daemon"].dtype == np.int8
        assert list(tt["index"][()]) == [0]
print("h5py check passed")
