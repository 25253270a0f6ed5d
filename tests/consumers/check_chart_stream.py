#!/usr/bin/python3
"""`scopeprof flame --chart` on the stream (docs/stream.md, "Exports"): for
every input (the synthetic file, the real programs of common.inputs, an
OpenMP run with fork edges, a gen_calls.py file of 400,000 calls that the
chart merges into grey frames, a file of 1.2 M calls stored out of time
order, which the stream sorts (docs/stream.md, "Scattered ranks"; the chart
handed it to the in-memory path when it was replayed from memory), with and without filters (--from/--to
included), the streamed SVG is byte for byte the in-memory path's
(SCOPEPROF_EXPORT_IN_MEMORY=1), with the same messages (or the same
failure); the stream must take the files without MPI columns; '-'
(standard output) takes the in-memory path with the same bytes."""
import os
import subprocess

from common import HERE, SCOPEPROF, fail, scattered_input, stream_inputs, workdir

d = workdir("chart-stream")
STREAMED = set()
VARIANTS = ([], ["--include", "solve|setup|outer"], ["--min-duration", "0.000000002"],
            ["--lanes=MainThread"], ["--ranks", "1"], ["--exclude", "main"],
            ["--from", "0.0000005"], ["--to", "0.000002"], ["--from", "0.000001", "--to", "0.01"],
            ["--include", "nothing-matches"])


def chart(name, files, *options, out=None):
    label = f"{name} {' '.join(options)}"
    s_out = out or os.path.join(d, "s.svg")
    m_out = os.path.join(d, "m.svg")
    r = subprocess.run([SCOPEPROF, "flame", "--chart", *files, "-o", s_out, *options],
                       capture_output=True, env=dict(os.environ, SCOPEPROF_EXPORT_TRACE="1"))
    m = subprocess.run([SCOPEPROF, "flame", "--chart", *files, "-o", m_out, *options],
                       capture_output=True, env=dict(os.environ, SCOPEPROF_EXPORT_IN_MEMORY="1"))
    err = r.stderr.decode()
    if r.returncode != m.returncode or (r.returncode and not options):
        fail(f"{label}: exited {r.returncode}, in memory {m.returncode}:\n{err}{m.stderr.decode()}")
    got = r.stdout if out == "-" else open(s_out, "rb").read() if os.path.exists(s_out) else None
    want = open(m_out, "rb").read() if os.path.exists(m_out) else None
    if r.returncode == 0 and got != want:
        fail(f"{label}: the streamed chart differs from the in-memory one "
             f"({len(got or b'')} / {len(want or b'')} bytes)")
    if r.returncode and (os.path.exists(s_out) or os.path.exists(m_out)):
        fail(f"{label}: a failed chart left its file")
    if out != "-" and r.stdout.decode().replace(s_out, "") != m.stdout.decode().replace(m_out, ""):
        fail(f"{label}: output differs:\n{r.stdout.decode()}---\n{m.stdout.decode()}")
    if not err.endswith(m.stderr.decode()):
        fail(f"{label}: messages differ:\n{err}---\n{m.stderr.decode()}")
    streamed = "scopeprof flame: streamed" in err
    if streamed:
        STREAMED.add(name)
    print(f"ok: flame --chart {label}: the in-memory path's {len(got or b'')} bytes "
          f"({'streamed' if streamed else err.splitlines()[0] if err else 'in memory'})")
    for f in (s_out, m_out):
        if f != "-" and os.path.exists(f):
            os.unlink(f)
    return err


all_inputs, omp = stream_inputs(d)
big = os.path.join(d, "big.h5")
subprocess.run(["/usr/bin/python3", os.path.join(HERE, "..", "..", "scripts", "bench",
                                                 "gen_calls.py"), big, "400000"], check=True)
all_inputs.append(("big", [big]))
for name, files in all_inputs:
    for options in VARIANTS:
        chart(name, files, *options)
export_scattered = scattered_input(d)
chart("scattered", export_scattered)
chart("scattered", export_scattered, "--min-duration", "0.0000005")
# (MPI columns are not drawn: a run with them streams too)
mpi = ("mpi",) if "mpi" in dict(all_inputs) else ()
for must in ("synthetic", "threads", "basic", "big") + (("omp",) if omp else ()) + mpi:
    if must not in STREAMED:
        fail(f"{must}: flame --chart did not stream (streamed: {sorted(STREAMED)})")
# standard output: in memory, the same document
r = subprocess.run([SCOPEPROF, "flame", "--chart", big, "-o", "-"], capture_output=True,
                   env=dict(os.environ, SCOPEPROF_EXPORT_TRACE="1"))
m = subprocess.run([SCOPEPROF, "flame", "--chart", big, "-o", os.path.join(d, "m.svg")],
                   capture_output=True)
if r.returncode or "streamed" in r.stderr.decode() or \
        r.stdout != open(os.path.join(d, "m.svg"), "rb").read():
    fail(f"flame --chart -o -: {r.returncode} {r.stderr.decode()}")
print(f"ok: streamed: {sorted(STREAMED)}; '-' in memory, same bytes")
