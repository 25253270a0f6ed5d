#!/usr/bin/python3
"""`scopeprof export prof` on the stream (docs/stream.md, "Exports"): for
every input (the synthetic file, the real programs of common.inputs, an
OpenMP run with fork edges (grafted on the stream in both modes, never
read whole), a file of 1.2 M calls stored out of time order
that the stream sorts: docs/stream.md, "Scattered ranks"), both modes (call paths, --no-call-paths), with
and without filters, every streamed .prof file is byte for byte the
in-memory path's (SCOPEPROF_EXPORT_IN_MEMORY=1), with the same files, the
same messages (or the same failure); the stream must take the files without
MPI columns; a late problem leaves no file behind; and pstats loads the
streamed files."""
import glob
import os
import pstats
import shutil
import subprocess

from common import SCOPEPROF, fail, scattered_input, stream_inputs, workdir

d = workdir("prof-stream")
STREAMED = set()
VARIANTS = ([], ["--include", "solve|setup|outer"], ["--min-duration", "0.000000002"],
            ["--lanes=MainThread"], ["--ranks", "1"], ["--exclude", "main"], ["--no-graft"],
            ["--include", "nothing-matches"])


def run_export(files, stem, options, **env):
    return subprocess.run([SCOPEPROF, "export", "prof", *files, "-o", stem, *options],
                          capture_output=True, env=dict(os.environ, **env))


def outputs(where):
    got = {}
    for path in sorted(glob.glob(os.path.join(where, "*"))):
        with open(path, "rb") as f:
            got[os.path.basename(path)] = f.read()
    return got


def export(name, files, *options):
    label = f"{name} {' '.join(options)}"
    tag = f"{name}-{len(STREAMED)}-{abs(hash(options))}"
    s_dir, m_dir = os.path.join(d, tag + "-s"), os.path.join(d, tag + "-m")
    os.makedirs(s_dir)
    os.makedirs(m_dir)
    r = run_export(files, os.path.join(s_dir, "p"), options, SCOPEPROF_EXPORT_TRACE="1")
    m = run_export(files, os.path.join(m_dir, "p"), options, SCOPEPROF_EXPORT_IN_MEMORY="1")
    err = r.stderr.decode()
    if r.returncode != m.returncode or (r.returncode and not options):
        fail(f"{label}: exited {r.returncode}, in memory {m.returncode}:\n{err}{m.stderr.decode()}")
    got, want = outputs(s_dir), outputs(m_dir)
    if sorted(got) != sorted(want):
        fail(f"{label}: files {sorted(got)}, in memory {sorted(want)}")
    for k in got:
        if got[k] != want[k]:
            fail(f"{label}: {k} differs from the in-memory file ({len(got[k])} / {len(want[k])} bytes)")
        if got[k] != b"{0":  # pstats refuses an empty dict (no call kept)
            pstats.Stats(os.path.join(s_dir, k))
    if r.stdout.decode().replace(s_dir, "") != m.stdout.decode().replace(m_dir, ""):
        fail(f"{label}: output differs:\n{r.stdout.decode()}---\n{m.stdout.decode()}")
    if not err.endswith(m.stderr.decode()):
        fail(f"{label}: messages differ:\n{err}---\n{m.stderr.decode()}")
    streamed = "scopeprof export: streamed" in err
    if "with fork edges in memory" in err:
        # both modes graft the OpenMP run on the stream (by name: from the
        # grafted call-path tree), never from its file read whole
        if name == "omp":
            fail(f"{label}: a rank with fork edges was not grafted on the stream:\n{err}")
        streamed = False
    if streamed:
        STREAMED.add(name)
    print(f"ok: export prof {label}: {len(got)} files as in memory "
          f"({'streamed' if streamed else err.splitlines()[0] if err else 'in memory'})")
    shutil.rmtree(s_dir)
    shutil.rmtree(m_dir)


all_inputs, omp = stream_inputs(d)
for name, files in all_inputs:
    for options in VARIANTS:
        export(name, files, *options)
        export(name, files, *options, "--no-call-paths")
# call paths stream (the tree takes the calls in any order), by name not
scattered = scattered_input(d)
export("scattered", scattered)
export("scattered", scattered, "--no-call-paths")
# MPI columns are not part of a pstats file: a run with them streams too
mpi = ("mpi",) if "mpi" in dict(all_inputs) else ()
for must in ("synthetic", "threads", "basic") + (("omp",) if omp else ()) + mpi:
    if must not in STREAMED:
        fail(f"{must}: export prof did not stream (streamed: {sorted(STREAMED)})")
print(f"ok: streamed: {sorted(STREAMED)}")
