#!/usr/bin/python3
"""`scopeprof export otf2`, read back by OTF2's own otf2-print: one location
group per rank ("rank R"), one location per lane named after it, regions
with their call sites, and on each location exactly one ENTER and one LEAVE
per call, properly nested, at the call's start and end (ns; one host, so
the rank clocks need no shift).  Inputs: the synthetic file, the real
programs of common.inputs, and a 3-rank Open MPI run.  Without OTF2 in the
build, `export otf2` must say how to enable it."""
import collections
import os
import re
import shutil
import subprocess

from common import REAL_PROGRAMS, fail, inputs, lane_names, scopeprof, workdir, _run_real

d = workdir("otf2")
if os.environ.get("SCOPEPROF_HAVE_OTF2") != "1":
    r = scopeprof("export", "otf2", "none.h5", "-o", os.path.join(d, "x"), expect=1)
    if "built without OTF2" not in r.stderr or "libotf2-trace-dev" not in r.stderr:
        fail(f"export otf2 without OTF2 must say how to enable it: {r.stderr}")
    print("ok: built without OTF2; export otf2 says how to enable it")
    raise SystemExit(0)
otf2_print = shutil.which("otf2-print")
if not otf2_print:
    fail("otf2-print not found (scripts/setup installs otf2-tools)")

DEF = re.compile(r'^(\w+)\s+(\d+)\s+(.*)$')
EVENT = re.compile(r'^(ENTER|LEAVE)\s+(\d+)\s+(\d+)\s+Region: "(.*)" <(\d+)>$')


def definitions(archive):
    out = subprocess.run([otf2_print, "-G", archive], capture_output=True, text=True, check=True)
    defs = collections.defaultdict(dict)
    for line in out.stdout.splitlines():
        m = DEF.match(line)
        if m:
            defs[m.group(1)][int(m.group(2))] = m.group(3)
    return defs


def events(archive):
    out = subprocess.run([otf2_print, archive], capture_output=True, text=True, check=True)
    per_location = collections.defaultdict(list)
    for line in out.stdout.splitlines():
        m = EVENT.match(line)
        if m:
            per_location[int(m.group(2))].append((m.group(1), int(m.group(3)), m.group(4)))
        elif line and line.split()[0].isupper() and line.split()[0] not in ("OTF2-PRINT", "===",
                                                                            "EVENT", "---"):
            if not line.startswith(("===", "Event", "---")):
                fail(f"{archive}: unexpected event line {line!r}")
    return per_location


def quoted(text, field):
    m = re.search(field + r': "(.*?)" <\d+>', text)
    return m.group(1) if m else None


def check(name, h5, truth, ranks_expected=None):
    archive_dir = os.path.join(d, name + "_otf2")
    r = scopeprof("export", "otf2", *h5, "-o", archive_dir)
    if f"wrote {archive_dir}" not in r.stdout:
        fail(f"{name}: no 'wrote' line: {r.stdout}")
    archive = os.path.join(archive_dir, "traces.otf2")
    defs = definitions(archive)
    groups = {i: quoted(t, "Name") for i, t in defs["LOCATION_GROUP"].items()}
    locations = {}
    for i, text in defs["LOCATION"].items():
        m = re.search(r'Name: "(.*?)" <\d+>, Type: CPU_THREAD, # Events: (\d+), '
                      r'Group: "(.*?)" <\d+>', text)
        if not m:
            fail(f"{name}: location {i}: {text}")
        locations[i] = (m.group(3), m.group(1), int(m.group(2)))
    # One event file per location (rank and lane).
    evt = sorted(f for f in os.listdir(os.path.join(archive_dir, "traces")) if f.endswith(".evt"))
    if evt != sorted(f"{i}.evt" for i in locations):
        fail(f"{name}: event files {evt} for locations {sorted(locations)}")
    for text in defs["REGION"].values():
        region = quoted(text, "Name")
        paradigm = "MPI" if region.startswith("MPI_") else "USER"
        if f"Paradigm: {paradigm}," not in text:
            fail(f"{name}: region {region} should have paradigm {paradigm}: {text}")
        if region in truth["sources"]:
            file, line = truth["sources"][region]
            if quoted(text, "File") != file or f"Begin: {line}," not in text:
                fail(f"{name}: region {region} should have call site {file}:{line}: {text}")
    threads = lane_names(truth)
    origin = truth["origin"]
    # Truth: per (rank label, lane name), the calls (region, start, end, caller).
    want = collections.defaultdict(list)
    for c in truth["calls"]:
        want[(f"rank {c['rank']}", threads[c["rank"]][c["thread"]])].append(
            (c["region"], c["start"] + origin, c["end"] + origin, c["caller"] or ""))
    got = {}
    per_location = events(archive)
    for loc, evs in per_location.items():
        group, lane, declared = locations[loc]
        if declared != len(evs):
            fail(f"{name}: location {loc} declares {declared} events, has {len(evs)}")
        stack, calls, last = [], [], 0
        for kind, ts, region in evs:
            if ts < last:
                fail(f"{name}: {group}/{lane}: time goes back at {ts}")
            last = ts
            if kind == "ENTER":
                stack.append((region, ts))
            else:
                if not stack or stack[-1][0] != region:
                    fail(f"{name}: {group}/{lane}: LEAVE {region} does not close {stack[-1:]}")
                opened, start = stack.pop()
                calls.append((region, start, ts, stack[-1][0] if stack else ""))
        if stack:
            fail(f"{name}: {group}/{lane}: never left {stack}")
        got[(group, lane)] = sorted(calls)
    if sorted(got) != sorted(want):
        fail(f"{name}: locations {sorted(got)}, lanes with calls {sorted(want)}")
    for key in want:
        if got[key] != sorted(want[key]):
            fail(f"{name}: {key}: events differ from the calls:\n{got[key]}\n{sorted(want[key])}")
    if set(groups.values()) != {g for g, _ in want}:
        fail(f"{name}: location groups {groups}")
    enters = sum(1 for evs in per_location.values() for e in evs if e[0] == "ENTER")
    if enters != len(truth["calls"]):
        fail(f"{name}: {enters} ENTER events for {len(truth['calls'])} calls")
    if ranks_expected is not None and len(groups) != ranks_expected:
        fail(f"{name}: {len(groups)} ranks, expected {ranks_expected}")
    print(f"ok: {name}: {enters} ENTER + {enters} LEAVE on {len(locations)} locations "
          f"in {len(groups)} location groups")
    return archive_dir, enters


done = 0
for name, h5, truth in inputs(d):
    check(name, h5, truth)
    done += 1

# 3 ranks: rank r has main, (r+1) x outer, 2(r+1) x inner and the
# MPI_Barrier the shim records without a marker: 24 calls.
import make_profile  # noqa: E402 (h5py, only under Debian's python3)
files = _run_real(d, "mpi3", ["mpi/mpi_regions_openmpi"], 3)
if files is not None:
    truth = make_profile.truth_from_h5(files)
    per_rank = collections.Counter(c["rank"] for c in truth["calls"])
    if per_rank != {0: 5, 1: 8, 2: 11}:
        fail(f"mpi3: calls per rank {dict(per_rank)}, the program makes 5, 8, 11")
    archive_dir, enters = check("mpi3", files, truth, ranks_expected=3)
    if enters != 24:
        fail(f"mpi3: {enters} ENTER events, expected 24")
    # An archive is never overwritten; '-' is not a directory.
    r = scopeprof("export", "otf2", *files, "-o", archive_dir, expect=1)
    if "already holds an OTF2 archive" not in r.stderr:
        fail(f"existing archive: {r.stderr}")
    scopeprof("export", "otf2", *files, "-o", "-", expect=2)
    # --ranks: only rank 1's location group.
    sub = os.path.join(d, "rank1_otf2")
    scopeprof("export", "otf2", *files, "--ranks", "1", "-o", sub)
    groups = definitions(os.path.join(sub, "traces.otf2"))["LOCATION_GROUP"]
    if [quoted(t, "Name") for t in groups.values()] != ["rank 1"]:
        fail(f"--ranks 1: location groups {groups}")
    print("ok: mpi3: existing archive refused, '-' refused, --ranks 1 keeps rank 1 only")
    done += 1
# A region named MPI_* (as MPI call recording names them) has the MPI
# paradigm: a program built here, 2 x step > MPI_Allreduce.
cc = shutil.which("cc")
if cc:
    src = os.path.join(d, "mpi_named.c")
    with open(src, "w") as f:
        f.write('#include "scope_profiler.h"\n'
                'int main(void) { int s = sp_region("step"), a = sp_region("MPI_Allreduce");\n'
                '  for (int i = 0; i < 2; i++) { sp_begin(s); sp_begin(a); sp_end(a); sp_end(s); }\n'
                '  return 0; }\n')
    preload_dir = os.path.dirname(os.environ["SCOPEPROF_SHIM"])
    exe = os.path.join(d, "mpi_named")
    subprocess.run([cc, src, "-o", exe, "-I", os.path.join(os.path.dirname(__file__), "..", "..",
                                                          "include"),
                    "-L", preload_dir, "-lscopeprof-markers", "-Wl,-rpath," + preload_dir],
                   check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOPE_PROFILER_")}
    env.update(LD_PRELOAD=os.environ["SCOPEPROF_SHIM"],
               SCOPE_PROFILER_OUTPUT=os.path.join(d, "mpi_named"))
    subprocess.run([exe], env=env, check=True)
    h5 = [os.path.join(d, "mpi_named_rank00000.h5")]
    truth = make_profile.truth_from_h5(h5)
    if collections.Counter(c["path"] for c in truth["calls"]) != {"step": 2,
                                                                 "step > MPI_Allreduce": 2}:
        fail(f"mpi_named: calls {truth['calls']}")
    archive_dir, enters = check("mpi_named", h5, truth)
    regions = definitions(os.path.join(archive_dir, "traces.otf2"))["REGION"].values()
    if sorted(quoted(t, "Name") + " " + re.search(r"Paradigm: (\w+)", t).group(1)
              for t in regions) != ["MPI_Allreduce MPI", "step USER"]:
        fail(f"mpi_named: regions {list(regions)}")
    print("ok: mpi_named: MPI_Allreduce has the MPI paradigm, step USER")
    # Bad targets: one line each, and nothing of the user's removed.
    blocked = os.path.join(d, "blocked")
    os.makedirs(blocked)
    open(os.path.join(blocked, "traces"), "w").close()
    r = scopeprof("export", "otf2", *h5, "-o", blocked, expect=1)
    if r.stderr.count("\n") != 1 or "traces already exists" not in r.stderr or \
            os.listdir(blocked) != ["traces"]:
        fail(f"export into a directory holding 'traces': {r.stderr} {os.listdir(blocked)}")
    r = scopeprof("export", "otf2", *h5, "-o", os.path.join(d, "no", "such", "dir"), expect=1)
    if r.stderr.count("\n") != 1 or "cannot create the archive directory" not in r.stderr:
        fail(f"export into a missing parent: {r.stderr}")
    r = scopeprof("export", "otf2", *h5, "--include", "nomatch", "-o",
                  os.path.join(d, "empty_otf2"), expect=1)
    if "no calls recorded" not in r.stderr or os.path.exists(os.path.join(d, "empty_otf2")):
        fail(f"an export of nothing: {r.stderr}")
    print("ok: blocked target, missing parent, empty selection: one line each, nothing left")
    done += 1
if done < 2:
    fail("fewer than two inputs checked")
shutil.rmtree(d)
