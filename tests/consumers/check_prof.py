#!/usr/bin/python3
"""`scopeprof export prof` loads in Python's pstats, and its numbers equal an
independent reconstruction of the input (make_profile.py), in both modes,
including recursion (cc < nc).  Inputs: the synthetic file and files written
by real programs under the shim (common.inputs)."""
import os
import pstats
from collections import defaultdict

from common import fail, inputs, scopeprof, workdir


def key(region, name=None):
    """pstats key of a region: (file, line, name) from the truth's sources."""
    f, line = truth["sources"].get(region, ("~", 0))
    return (f, line, name or region)


def close(a, b):
    return abs(a - b) < 1e-9


def check(stats, expected, what):
    got = {k: v for k, v in stats.items() if not k[2].startswith("<")}
    if set(got) != set(expected):
        fail(f"{what}: entries {sorted(got)} != {sorted(expected)}")
    for k, (cc, nc, tt, ct) in expected.items():
        g = got[k]
        if (g[0], g[1]) != (cc, nc) or not close(g[2], tt) or not close(g[3], ct):
            fail(f"{what}: {k} = {g[:4]}, expected {(cc, nc, tt, ct)}")


# Regions whose calls recurse, per (input, rank): cc < nc in pstats.
RECURSIVE = {("synthetic", 0): ["rec"], ("basic", 0): ["fib"]}
d = workdir("prof")
for name, h5, truth in inputs(d):
    ranks = sorted({c["rank"] for c in truth["calls"]})
    for rank in ranks:
        calls = [c for c in truth["calls"] if c["rank"] == rank]
        root = f"<{truth['label']} rank {rank}>"

        # call-path mode
        # --no-graft: the truth is the per-lane reconstruction (grafting of
        # forked work is checked by tests/integration/test_openmp.c)
        scopeprof("export", "prof", *h5, "-o", os.path.join(d, name + "-paths"), "--ranks", str(rank),
                  "--no-graft")
        st = pstats.Stats(os.path.join(d, f"{name}-paths_rank{rank}.prof")).stats
        exp = defaultdict(lambda: [0, 0, 0.0, 0.0])
        for c in calls:
            e = exp[key(c["region"], c["path"])]
            e[0] += 1; e[1] += 1
            e[2] += c["exclusive"] / 1e9
            e[3] += (c["end"] - c["start"]) / 1e9
        check(st, {k: tuple(v) for k, v in exp.items()}, f"{name} rank {rank} call paths")
        rk = ("~", 0, root)
        roots = sum(c["end"] - c["start"] for c in calls if c["parent"] is None) / 1e9
        if st[rk][:2] != (1, 1) or not close(st[rk][3], roots):
            fail(f"{name}: root {st[rk][:4]}, expected cumulative {roots}")
        for k, v in st.items():
            for caller in v[4]:
                if caller not in st:
                    fail(f"{name}: caller {caller} of {k} is not an entry")

        # name mode: cc = calls without an ancestor of the same region
        scopeprof("export", "prof", *h5, "-o", os.path.join(d, name + "-names"), "--ranks", str(rank),
                  "--no-call-paths", "--no-graft")
        st = pstats.Stats(os.path.join(d, f"{name}-names_rank{rank}.prof")).stats
        exp = defaultdict(lambda: [0, 0, 0.0, 0.0])
        callers = defaultdict(lambda: defaultdict(lambda: [0, 0, 0.0, 0.0]))
        for c in calls:
            for e in (exp[key(c["region"])],
                      callers[key(c["region"])][key(c["caller"]) if c["caller"] else ("~", 0, root)]):
                e[1] += 1
                e[2] += c["exclusive"] / 1e9
                if not c["recursive"]:
                    e[0] += 1
                    e[3] += (c["end"] - c["start"]) / 1e9
        check(st, {k: tuple(v) for k, v in exp.items()}, f"{name} rank {rank} by name")
        for k, by in callers.items():
            for ck, (cc, nc, tt, ct) in by.items():
                g = st[k][4].get(ck)  # cProfile order in caller tuples: nc, cc, tt, ct
                if not g or (g[0], g[1]) != (nc, cc) or not close(g[2], tt) or not close(g[3], ct):
                    fail(f"{name} rank {rank}: caller {ck} of {k} = {g}, expected {(nc, cc, tt, ct)}")
        recursive = sorted(k[2] for k, v in st.items() if v[0] < v[1])
        if recursive != sorted({c["region"] for c in calls if c["recursive"]}):
            fail(f"{name} rank {rank}: recursive entries {recursive}")
        if RECURSIVE.get((name, rank), []) != recursive:
            fail(f"{name} rank {rank}: expected {RECURSIVE.get((name, rank))} to be recursive")
        p = pstats.Stats(os.path.join(d, f"{name}-names_rank{rank}.prof"))
        if p.total_calls != len(calls) + 1:
            fail(f"{name} rank {rank}: total_calls {p.total_calls} != {len(calls) + 1}")
    print(f"ok: {name}: pstats loads both modes with the reconstruction's numbers")
