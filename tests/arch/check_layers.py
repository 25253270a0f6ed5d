#!/usr/bin/env python3
"""Check that dependencies between the folders of src/ and preload/ run one
way (docs/architecture.md, "Dependency rule").

Two views of the same rule:
  - includes: a file may include headers only from its own folder or from
    folders its layer is allowed to use;
  - symbols (preload/ only, with --objects DIR): every undefined symbol of
    an object file of the shim must be defined in an allowed folder, so an
    `extern` declaration written by hand cannot call up a layer either.
Prints one line per violation and exits 1 if there is any.
Usage: check_layers.py SOURCE_ROOT [--objects BUILD/preload/libscopeprof.so.p]
"""
import os
import re
import subprocess
import sys

# folder -> folders it may use (besides itself).  Public headers
# (include/) may be used by anyone.
SRC_RULES = {
    "model": set(),
    "callstack": {"model"},
    "h5": {"model", "callstack"},
    "capture": {"model", "callstack", "h5"},
    "callsite": {"model"},
    "analysis": {"model", "callstack", "h5"},
    "stream": {"model", "callstack", "h5", "analysis"},
    "report": {"model", "callstack", "h5", "analysis", "stream"},
    "export": {"model", "callstack", "h5", "analysis", "stream", "report"},
    "diff": {"model", "callstack", "h5", "analysis", "stream", "report", "export"},
    "html": {"model", "callstack", "h5", "analysis", "stream", "report", "export"},
    "dist": {"model", "callstack", "h5", "analysis", "stream", "report", "export"},
    "cli": {"model", "callstack", "h5", "capture", "analysis", "stream", "report", "export",
            "diff", "html", "dist"},
}
# preload/ layers, bottom to top; each may use those below it and src/model
# (the capture and spill formats it hands over).
PRELOAD_ORDER = ["base", "record", "lifecycle", "intercept"]
PRELOAD_EXTRA = {"src/model"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(root, path):
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == "src" and len(rel) > 2:
        return "src/" + rel[1]
    if rel[0] == "preload":
        if len(rel) == 2:
            return "preload"  # entry.c, markers_noop.c: the composition root
        if rel[1] == "intercept":
            return "preload/intercept"  # intercept/mpi, intercept/openmp: one layer
        return "preload/" + rel[1]
    return None


def allowed(src, dst):
    if src == dst or dst is None:
        return True
    if src == "preload" or src == "preload/writer":
        return True  # composition root; the writer module is src/'s client
    if src.startswith("src/"):
        s, d = src[4:], dst[4:] if dst.startswith("src/") else None
        return d is not None and d in SRC_RULES.get(s, set())
    if src.startswith("preload/"):
        layer = src[len("preload/"):]
        if dst in PRELOAD_EXTRA:
            return True
        if dst.startswith("preload/"):
            other = dst[len("preload/"):]
            if layer in PRELOAD_ORDER and other in PRELOAD_ORDER:
                return PRELOAD_ORDER.index(other) < PRELOAD_ORDER.index(layer)
        return False
    return True


def resolve(root, including, name):
    here = os.path.join(os.path.dirname(including), name)
    if os.path.exists(here):
        return here
    for base in ("src", "preload"):
        p = os.path.join(root, base, name)
        if os.path.exists(p):
            return p
    return None  # include/, build-generated headers: public


def check_includes(root):
    bad = []
    for top in ("src", "preload"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                src = folder_of(root, path)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for name in INCLUDE.findall(text):
                    target = resolve(root, path, name)
                    dst = folder_of(root, target) if target else None
                    if not allowed(src, dst):
                        bad.append(f"{os.path.relpath(path, root)} includes {name}: "
                                   f"{src} may not depend on {dst}")
    return bad


def source_of_object(root, obj):
    """preload/libscopeprof.so.p/intercept_mpi_mpi.c.o -> preload/intercept/mpi/mpi.c
    (meson flattens '/' into '_': try every split that names a real file)."""
    name = os.path.basename(obj)[: -len(".o")]
    parts = name.split("_")
    def walk(prefix, rest):
        if not rest:
            return None
        for i in range(1, len(rest) + 1):
            piece = "_".join(rest[:i])
            candidate = os.path.join(prefix, piece)
            if i == len(rest) and os.path.isfile(candidate):
                return candidate
            if os.path.isdir(candidate):
                found = walk(candidate, rest[i:])
                if found:
                    return found
        return None
    return walk(os.path.join(root, "preload"), parts)


def nm(obj, defined):
    flag = "--defined-only" if defined else "--undefined-only"
    out = subprocess.run(["nm", flag, obj], capture_output=True, text=True, check=True).stdout
    syms = set()
    for line in out.splitlines():
        fields = line.split()
        if not fields:
            continue
        if defined and len(fields) >= 3 and fields[1] in "TDBRVWtdbrvw":
            if fields[1].isupper() or fields[1] in "vw":
                syms.add(fields[2])
        elif not defined:
            syms.add(fields[-1])
    return syms


def check_symbols(root, objdir):
    owner = {}
    objects = []
    for f in sorted(os.listdir(objdir)):
        if not f.endswith(".o"):
            continue
        src = source_of_object(root, os.path.join(objdir, f))
        if not src:
            return [f"cannot tell which source {f} was built from"]
        objects.append((os.path.join(objdir, f), src))
        for s in nm(os.path.join(objdir, f), True):
            owner[s] = folder_of(root, src)
    bad = []
    for obj, src in objects:
        here = folder_of(root, src)
        for s in sorted(nm(obj, False)):
            there = owner.get(s)
            if there and not allowed(here, there):
                bad.append(f"{os.path.relpath(src, root)} uses {s} of {there}: "
                           f"{here} may not call up into {there}")
    return bad


def main():
    root = os.path.abspath(sys.argv[1])
    bad = check_includes(root)
    if "--objects" in sys.argv:
        bad += check_symbols(root, sys.argv[sys.argv.index("--objects") + 1])
    for line in bad:
        print("check_layers: " + line)
    print(f"check_layers: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
