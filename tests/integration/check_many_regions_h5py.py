#!/usr/bin/python3
"""A run with 5,000 distinct regions (call sites on), read with h5py the way
the Python package reads a schema-3 file: names, the index, the events and
the /metadata attributes.  The region_functions list is too long for an
attribute (HDF5's 64 KiB object-header limit) and is the dataset
/metadata/region_functions, aligned with region_table/names.
Usage: check_many_regions_h5py.py SHIM PROGRAM"""
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

shim, program = sys.argv[1], sys.argv[2]
N = 5000
with tempfile.TemporaryDirectory() as tmp:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    first = os.environ.get("SCOPEPROF_TEST_PRELOAD_PREFIX", "")
    env["LD_PRELOAD"] = first + ":" + shim if first else shim
    if "SCOPEPROF_TEST_WRITER_NAMESPACE" in os.environ:
        env["SCOPE_PROFILER_WRITER_NAMESPACE"] = os.environ["SCOPEPROF_TEST_WRITER_NAMESPACE"]
    out = subprocess.run([program, str(N)], cwd=tmp, env=env, capture_output=True, text=True)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    with h5py.File(os.path.join(tmp, "scope_profile_rank00000.h5"), "r") as f:
        assert int(f.attrs["scope_profiler_schema"]) == 3
        names = [n.decode() if isinstance(n, bytes) else n for n in f["region_table/names"][()]]
        assert names == ["all"] + ["cell_%d" % i for i in range(N)], names[:3]
        idx = f["rank_region_index"]
        assert list(idx["event_counts"][()]) == [1] * (N + 1)
        assert sorted(idx["region_ids"][()]) == list(range(N + 1))
        assert f["events/durations"].shape == (N + 1,)
        assert (f["events/durations"][()] >= 0).all()
        # What the Python reader takes as metadata: the attributes.
        meta = dict(f["metadata"].attrs)
        assert meta["source"] in ("native", b"native"), meta
        assert "region_functions" not in meta
        funcs = f["metadata/region_functions"]
        assert h5py.check_string_dtype(funcs.dtype).encoding == "utf-8"
        funcs = [s.decode() if isinstance(s, bytes) else s for s in funcs[()]]
        assert len(funcs) == len(names) and set(funcs) == {"main"}, set(funcs)
print("h5py many-regions check passed")
