#!/usr/bin/env python3
"""Inputs that crash HDF5 1.10 itself, make it loop forever or make it
allocate without bound: `scopeprof validate` and `scopeprof report` must still
answer with one line naming the file and exit 1, never die of a signal,
hang (SCOPEPROF_READ_TIMEOUT bounds the wait) or take the machine's memory.

    check_cli_survives.py SCOPEPROF DIR
"""
import os
import resource
import subprocess
import sys

# A 17 KB input has no business needing more; without the address-space
# bound on attribute reads one of them took 12 GB.  Not checked under the
# sanitizers, whose runtimes rule out that bound (src/h5_io.c).
PEAK_RSS_LIMIT_KB = 512 * 1024


def main():
    scopeprof, directory = sys.argv[1], sys.argv[2]
    failed = 0
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        for command in ("validate", "report"):
            run = subprocess.run([scopeprof, command, path], capture_output=True, text=True,
                                 errors="replace", timeout=120)
            said = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
            peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            problems = []
            if run.returncode != 1:
                problems.append(f"exit {run.returncode}")
            if len(said) != 1 or path not in said[0]:
                problems.append(f"{len(said)} lines")
            if peak_kb >= PEAK_RSS_LIMIT_KB and os.environ.get("SCOPEPROF_TEST_SANITIZED") != "1":
                problems.append(f"peak resident size {peak_kb} kB")
            if problems:
                print(f"FAIL: scopeprof {command} {path}: {', '.join(problems)}; said: {said}")
                failed = 1
    if not failed:
        print(f"scopeprof survives every input of {directory}")
    return failed


if __name__ == "__main__":
    sys.exit(main())
