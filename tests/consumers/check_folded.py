#!/usr/bin/python3
"""`scopeprof export folded` and `scopeprof flame` (the graph) on the stream
(docs/stream.md, "Exports"): for every input (the synthetic file, the real
programs of common.inputs, an OpenMP run with fork edges), with and without
filters, the streamed output (folded lines, SVG) is byte for byte the
in-memory path's (SCOPEPROF_EXPORT_IN_MEMORY=1), or the same failure; the
stream must take the files without MPI columns (those with fork edges
grafted one file at a time in memory); and the folded exclusive times add
up to the root calls' durations h5py reads from the files."""
import os
import subprocess

from common import SCOPEPROF, fail, inputs, omp_input, workdir

d = workdir("folded")
STREAMED = set()
VARIANTS = ([], ["--include", "solve|setup|outer"], ["--min-duration", "0.000000002"],
            ["--lanes=MainThread"], ["--ranks", "1"], ["--exclude", "main"], ["--no-graft"])


def export(name, files, *options, command=("export", "folded")):
    def run(**env):
        return subprocess.run([SCOPEPROF, *command, *files, "-o", "-", *options],
                              capture_output=True, env=dict(os.environ, **env))
    r = run(SCOPEPROF_EXPORT_TRACE="1")
    m = run(SCOPEPROF_EXPORT_IN_MEMORY="1")
    label = f"{name} {' '.join(options)}"
    err = r.stderr.decode()
    if r.returncode != m.returncode or (r.returncode and not options):
        fail(f"{label}: exited {r.returncode}, in memory {m.returncode}:\n{err}{m.stderr.decode()}")
    if r.stdout != m.stdout:
        fail(f"{label}: the streamed lines differ from the in-memory ones:\n"
             f"{r.stdout.decode()[:2000]}---\n{m.stdout.decode()[:2000]}")
    if not err.endswith(m.stderr.decode()):
        fail(f"{label}: messages differ:\n{err}---\n{m.stderr.decode()}")
    streamed = f"scopeprof {command[0]}: streamed" in err
    if "with fork edges in memory" in err:
        if name == "omp":
            fail(f"{label}: a rank with fork edges was not grafted on the stream:\n{err}")
        streamed = False
    if streamed:
        STREAMED.add((command[0], name))
    print(f"ok: {' '.join(command)} {label}: the in-memory path's {len(r.stdout)} bytes "
          f"({'streamed' if streamed else err.splitlines()[0]})")
    return r.stdout.decode()


for name, files, truth in inputs(d):
    lines = ""
    for options in VARIANTS:
        out = export(name, files, *options)
        if not options:
            lines = out
        export(name, files, *options, command=("flame",))
    total = sum(int(line.rsplit(" ", 1)[1]) for line in lines.splitlines())
    roots = sum(c["end"] - c["start"] for c in truth["calls"] if not c["caller"])
    if total != roots:
        fail(f"{name}: exclusive times add up to {total} ns, the root calls last {roots} ns")
    print(f"ok: {name}: {len(lines.splitlines())} stacks, {total} ns in all")
omp = omp_input(d)
if omp:
    for options in VARIANTS:
        export("omp", omp, *options)
        export("omp", omp, *options, command=("flame",))
for must in ("synthetic", "threads", "basic") + (("omp",) if omp else ()):
    for command in ("export", "flame"):
        if (command, must) not in STREAMED:
            fail(f"{must}: {command} did not stream (streamed: {sorted(STREAMED)})")
print(f"ok: streamed: {sorted(STREAMED)}")
