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


MPI_EVENT = re.compile(r'^(MPI_SEND|MPI_RECV|MPI_COLLECTIVE_BEGIN|MPI_COLLECTIVE_END)'
                       r'\s+(\d+)\s+(\d+)\s*(.*)$')


def all_events(archive):
    """Per location, every event in order: (kind, time, region or the MPI
    record's attribute text)."""
    out = subprocess.run([otf2_print, archive], capture_output=True, text=True, check=True)
    per_location = collections.defaultdict(list)
    for line in out.stdout.splitlines():
        m = EVENT.match(line) or MPI_EVENT.match(line)
        if m:
            per_location[int(m.group(2))].append((m.group(1), int(m.group(3)), m.group(4)))
        elif line and line.split()[0].isupper() and line.split()[0] not in ("OTF2-PRINT", "===",
                                                                            "EVENT", "---"):
            if not line.startswith(("===", "Event", "---")):
                fail(f"{archive}: unexpected event line {line!r}")
    return per_location


def events(archive):
    """Per location, its ENTER and LEAVE events; and how many MPI records."""
    per_location, mpi = {}, collections.Counter()
    for loc, evs in all_events(archive).items():
        per_location[loc] = [e for e in evs if e[0] in ("ENTER", "LEAVE")]
        mpi[loc] = len(evs) - len(per_location[loc])
    return per_location, mpi


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
    per_location, mpi_records = events(archive)
    for loc, evs in per_location.items():
        group, lane, declared = locations[loc]
        if declared != len(evs) + mpi_records[loc]:
            fail(f"{name}: location {loc} declares {declared} events, has "
                 f"{len(evs) + mpi_records[loc]}")
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


def mpi_records(archive):
    """Per world rank (location group "rank R"): its MPI records as
    (kind, attributes, the MPI region around it), checking that each sits
    where it belongs: MPI_SEND right after the ENTER of its call,
    MPI_RECV right before its LEAVE, a collective's BEGIN right after the
    ENTER and its END right before the LEAVE of the same call."""
    defs = definitions(archive)
    rank_of = {}
    for i, text in defs["LOCATION"].items():
        rank_of[i] = int(re.search(r'Group: "rank (\d+)"', text).group(1))
    out = collections.defaultdict(list)
    for loc, evs in all_events(archive).items():
        for k, (kind, ts, text) in enumerate(evs):
            if not kind.startswith("MPI_"):
                continue
            after = kind in ("MPI_SEND", "MPI_COLLECTIVE_BEGIN")
            # A call that sends and receives (MPI_Sendrecv) has its
            # MPI_SEND after the ENTER; a receive right before the LEAVE.
            j = k - 1 if after else k + 1
            while 0 <= j < len(evs) and evs[j][0].startswith("MPI_"):
                j += -1 if after else 1
            neighbour = evs[j] if 0 <= j < len(evs) else None
            if not neighbour or neighbour[0] != ("ENTER" if after else "LEAVE") or \
                    neighbour[1] != ts or not neighbour[2].startswith("MPI_"):
                fail(f"{archive}: location {loc}: {kind} at {ts} not at the "
                     f"{'start' if after else 'end'} of an MPI call: {neighbour}")
            out[rank_of[loc]].append((kind, text, neighbour[2]))
    return out


def check_mpi_calls(archive, n):
    """tests/programs/mpi/mpi_calls.c on n = 4 ranks, rank r, next/prev
    around the ring: what it sends, receives and which collectives."""
    records = mpi_records(archive)
    if sorted(records) != list(range(n)):
        fail(f"mpi_calls: MPI records on ranks {sorted(records)}")
    message = re.compile(r'^(Receiver|Sender): (\d+) \("MainThread" <\d+>\), '
                         r'Communicator: "MPI_COMM_WORLD" <0>, Tag: (\d+), Length: (\d+)$')
    collective = re.compile(r'^Operation: (\w+), Communicator: "(.*?)" <\d+>, '
                            r'Root: (NONE|\d+)(?: \(.*?\))?, Sent: (\d+), Received: (\d+)$')
    totals = collections.Counter()
    for r in range(n):
        nxt, prev = (r + 1) % n, (r + n - 1) % n
        sends = [(nxt, 7, 400, "MPI_Send"), (nxt, 8, 80, "MPI_Isend"), (nxt, 9, 4, "MPI_Isend"),
                 (nxt, 10, 20, "MPI_Sendrecv"), (r, 99, 4, "MPI_Send")]
        recvs = [(prev, 7, 400, "MPI_Recv"), (prev, 8, 80, "MPI_Waitall"),
                 (prev, 9, 4, "MPI_Wait"), (prev, 10, 20, "MPI_Sendrecv"),
                 (r, 99, 4, "MPI_Irecv")]
        # Sub-communicator of equal parity: sub rank 0 sends 8 B to sub
        # rank 1 (tag 11); on the file peers are world ranks.
        if r < 2:
            sends.append((r + 2, 11, 8, "MPI_Send"))
        else:
            recvs.append((r - 2, 11, 8, "MPI_Recv"))
        got = {"MPI_SEND": [], "MPI_RECV": []}
        colls, begins = [], 0
        for kind, text, region in records[r]:
            totals[kind] += 1
            if kind == "MPI_COLLECTIVE_BEGIN":
                begins += 1
                continue
            if kind == "MPI_COLLECTIVE_END":
                m = collective.match(text)
                if not m:
                    fail(f"rank {r}: collective end {text!r}")
                colls.append((m.group(1), m.group(2), m.group(3), int(m.group(4)),
                              int(m.group(5)), region))
                continue
            m = message.match(text)
            if not m or (m.group(1) == "Receiver") != (kind == "MPI_SEND"):
                fail(f"rank {r}: {kind} {text!r}")
            got[kind].append((int(m.group(2)), int(m.group(3)), int(m.group(4)), region))
        if sorted(got["MPI_SEND"]) != sorted(sends):
            fail(f"rank {r}: MPI_SEND {sorted(got['MPI_SEND'])}, program sends {sorted(sends)}")
        if sorted(got["MPI_RECV"]) != sorted(recvs):
            fail(f"rank {r}: MPI_RECV {sorted(got['MPI_RECV'])}, program receives "
                 f"{sorted(recvs)}")
        world = "MPI_COMM_WORLD"
        half = colls[0][1] if colls else None
        rooted = lambda root, size, op, name, comm=world: (  # noqa: E731
            op, comm, str(root), size if r == root_world[name] else 0,
            0 if r == root_world[name] else size, name)
        root_world = {"half": 2 + r % 2, "bcast": 1, "triple": 0}
        want = [("BCAST", half, "1", 12 if r >= 2 else 0, 0 if r >= 2 else 12, "MPI_Bcast")]
        want += [("BARRIER", world, "NONE", 0, 0, "MPI_Barrier")] * 3
        want += [rooted(1, 64, "BCAST", "bcast")[:5] + ("MPI_Bcast",)]
        want += [("ALLREDUCE", world, "NONE", 8, 8, "MPI_Allreduce")] * 5
        want += [("ALLREDUCE", world, "NONE", 0, 16, "MPI_Allreduce")]  # in place
        want += [("REDUCE", world, "0", 16, 16 if r == 0 else 0, "MPI_Reduce"),
                 ("GATHER", world, "2", 4, 4 * n if r == 2 else 0, "MPI_Gather"),
                 ("ALLGATHER", world, "NONE", 4, 4 * n, "MPI_Allgather"),
                 ("ALLTOALL", world, "NONE", 8 * n, 8 * n, "MPI_Alltoall")]
        want += [rooted(0, 24, "BCAST", "triple")[:5] + ("MPI_Bcast",)]
        if half is None or not half.startswith("MPI communicator ") or colls != want:
            fail(f"rank {r}: collectives\n{colls}\nexpected\n{want}")
        if begins != len(colls):
            fail(f"rank {r}: {begins} MPI_COLLECTIVE_BEGIN for {len(colls)} ends")
    want_totals = {"MPI_SEND": 5 * n + 2, "MPI_RECV": 5 * n + 2,
                   "MPI_COLLECTIVE_BEGIN": 16 * n, "MPI_COLLECTIVE_END": 16 * n}
    if totals != want_totals:
        fail(f"mpi_calls: MPI records {dict(totals)}, expected {want_totals}")
    # Communicators: MPI_COMM_WORLD of the n ranks, two halves of parity.
    defs = definitions(archive)
    comms = sorted(quoted(t, "Name") for t in defs["COMM"].values())
    if len(comms) != 3 or comms[2] != "MPI_COMM_WORLD" or \
            not all(c.startswith("MPI communicator ") for c in comms[:2]):
        fail(f"mpi_calls: communicators {comms}")
    members = {}
    for text in defs["GROUP"].values():
        m = re.search(r'Type: COMM_GROUP.*?(\d+) Members: (.*)$', text)
        if m:
            members[quoted(text, "Name")] = re.findall(r'(?:^|, )(\d+) \(', m.group(2))
    if sorted(members.values()) != [["0", "1", "2", "3"], ["0", "2"], ["1", "3"]]:
        fail(f"mpi_calls: communicator groups {members}")
    print(f"ok: mpi_calls on {n} ranks: {dict(totals)}, peers, tags, lengths, roots, "
          f"communicators as the program makes them")


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
    # The MPI_Barrier of each rank: one collective on MPI_COMM_WORLD.
    records = mpi_records(os.path.join(archive_dir, "traces.otf2"))
    for r in range(3):
        kinds = [(k, t.split(",")[0]) for k, t, _ in records[r]]
        if kinds != [("MPI_COLLECTIVE_BEGIN", ""), ("MPI_COLLECTIVE_END", "Operation: BARRIER")]:
            fail(f"mpi3: rank {r}: MPI records {records[r]}")
    print("ok: mpi3: one BARRIER collective per rank")
    done += 1
# 4 ranks of mpi_calls: point-to-point messages, collectives, a
# sub-communicator, as MPI_SEND / MPI_RECV / MPI_COLLECTIVE_* records.
files = _run_real(d, "mpi_calls", ["mpi/mpi_calls_openmpi", "3"], 4)
if files is not None:
    truth = make_profile.truth_from_h5(files)
    archive_dir, enters = check("mpi_calls", files, truth, ranks_expected=4)
    check_mpi_calls(os.path.join(archive_dir, "traces.otf2"), 4)
    # --ranks 1,2: only messages between them (and to self) remain, their
    # peers numbered among the exported ranks (rank 1 is 0, rank 2 is 1).
    sub = os.path.join(d, "mpi_calls_12_otf2")
    scopeprof("export", "otf2", *files, "--ranks", "1,2", "-o", sub)
    records = mpi_records(os.path.join(sub, "traces.otf2"))
    peers = collections.Counter((r, k, re.match(r"(?:Receiver|Sender): (\d+)", t).group(1))
                                for r, recs in records.items() for k, t, _ in recs
                                if k in ("MPI_SEND", "MPI_RECV"))
    want = {(1, "MPI_SEND", "1"): 4, (1, "MPI_SEND", "0"): 1, (1, "MPI_RECV", "0"): 1,
            (2, "MPI_RECV", "0"): 4, (2, "MPI_RECV", "1"): 1, (2, "MPI_SEND", "1"): 1}
    colls = sum(1 for recs in records.values() for k, _, _ in recs if k.startswith("MPI_COLL"))
    if peers != want or colls != 2 * 2 * 16:
        fail(f"mpi_calls --ranks 1,2: messages {dict(peers)}, expected {want}; "
             f"{colls} collective records")
    print("ok: mpi_calls --ranks 1,2: 6 sends, 6 receives between the two, 64 collective records")
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
