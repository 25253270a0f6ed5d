#!/usr/bin/python3
"""`scopeprof export otf2` on the stream (docs/stream.md, "Exports"): for
every input (the synthetic file, the real programs of common.inputs, an
OpenMP run with fork edges, a gen_calls.py file of 800,000 calls whose lanes
fill several OTF2 buffers, so that the writers flush while streaming, a
file of 1.2 M calls stored out of time order, which the stream sorts
(docs/stream.md, "Scattered ranks"; replayed from memory before, which this
export handed to the in-memory path), with
and without filters, what otf2-print shows of the streamed archive (events,
and with -G the definitions) is what it shows of the in-memory path's
(SCOPEPROF_EXPORT_IN_MEMORY=1), the event and definition files are the same
bytes, with the same messages (or the same failure); the stream must take
the files without MPI columns, and the runs with them: the 2-rank MPI program
of common.inputs and tests/programs/mpi/mpi_calls.c on 4 ranks under each
MPI (messages, collectives on MPI_COMM_WORLD and on sub-communicators), with
filters that drop message ends and ranks."""
import os
import shutil
import subprocess

from common import (HERE, MPI_LAUNCHERS, SCOPEPROF, archive_bytes, fail, mpi_calls_run,
                    scattered_input, stream_inputs, workdir)

d = workdir("otf2-stream")
if os.environ.get("SCOPEPROF_HAVE_OTF2") != "1":
    print("ok: built without OTF2 (consumer_otf2 checks the message)")
    raise SystemExit(0)
otf2_print = shutil.which("otf2-print")
if not otf2_print:
    fail("otf2-print not found (scripts/setup installs otf2-tools)")
STREAMED = set()
VARIANTS = ([], ["--include", "solve|setup|outer"], ["--min-duration", "0.000000002"],
            ["--lanes=MainThread"], ["--ranks", "1"], ["--exclude", "main"],
            ["--include", "nothing-matches"])


def printed(archive):
    anchor = os.path.join(archive, "traces.otf2")
    if not os.path.exists(anchor):
        return None
    events = subprocess.run([otf2_print, anchor], capture_output=True, check=True).stdout
    defs = subprocess.run([otf2_print, "-G", anchor], capture_output=True, check=True).stdout
    # the anchor's trace id is random: otf2-print -G does not show it
    return events, defs


def export(name, files, *options, show=True):
    label = f"{name} {' '.join(options)}"
    s_dir, m_dir = os.path.join(d, "s_otf2"), os.path.join(d, "m_otf2")
    runs = []
    for where, env in ((s_dir, {"SCOPEPROF_EXPORT_TRACE": "1"}),
                       (m_dir, {"SCOPEPROF_EXPORT_IN_MEMORY": "1"})):
        runs.append(subprocess.run([SCOPEPROF, "export", "otf2", *files, "-o", where, *options],
                                   capture_output=True, env=dict(os.environ, **env)))
    r, m = runs
    err = r.stderr.decode()
    if r.returncode != m.returncode or (r.returncode and not options):
        fail(f"{label}: exited {r.returncode}, in memory {m.returncode}:\n{err}{m.stderr.decode()}")
    shown = printed(s_dir) if show else None
    if show and shown != printed(m_dir):
        fail(f"{label}: otf2-print shows another archive than the in-memory one")
    if archive_bytes(s_dir) != archive_bytes(m_dir):
        fail(f"{label}: the archive's files differ from the in-memory ones")
    if r.stdout.decode().replace(s_dir, "") != m.stdout.decode().replace(m_dir, ""):
        fail(f"{label}: output differs:\n{r.stdout.decode()}---\n{m.stdout.decode()}")
    # (the trace line comes after the exporter's own warnings)
    if not err.replace("scopeprof export: streamed\n", "", 1).endswith(m.stderr.decode()):
        fail(f"{label}: messages differ:\n{err}---\n{m.stderr.decode()}")
    streamed = "scopeprof export: streamed" in err
    if streamed:
        STREAMED.add(name)
    events = len(shown[0].splitlines()) if shown else 0
    print(f"ok: export otf2 {label}: otf2-print's {events} lines as in memory "
          f"({'streamed' if streamed else err.splitlines()[0] if err else 'in memory'})")
    shutil.rmtree(s_dir, ignore_errors=True)
    shutil.rmtree(m_dir, ignore_errors=True)


all_inputs, omp = stream_inputs(d)
for name, files in all_inputs:
    for options in VARIANTS:
        export(name, files, *options)
big = os.path.join(d, "big.h5")
subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "..", "scripts", "bench",
                                                 "gen_calls.py"), big, "800000"], check=True)
export("big", [big])
export("big", [big], "--include", "outer|leaf")
export("scattered", scattered_input(d), show=False)  # 2.4 M events: the files only
mpi_runs = []
for family in MPI_LAUNCHERS:
    files = mpi_calls_run(d, family)
    if files is None:
        continue
    mpi_runs.append(family)
    for options in ([], ["--exclude", "MPI_Send"], ["--ranks", "1,2"],
                    ["--min-duration", "0.000001"], ["--include", "MPI_Bcast|MPI_Sendrecv"],
                    ["--exclude", "main"]):
        export(family, files, *options)
for must in ("synthetic", "threads", "basic", "big") + (("omp",) if omp else ()) + \
        (("mpi",) if "mpi" in dict(all_inputs) else ()) + tuple(mpi_runs):
    if must not in STREAMED:
        fail(f"{must}: export otf2 did not stream (streamed: {sorted(STREAMED)})")
print(f"ok: streamed: {sorted(STREAMED)}")
