#!/usr/bin/env bash
# test_install.sh BUILD_DIR FORTRAN - what a user of an installed scopeprof does:
# stage an install with `meson install --destdir`, move the staged prefix
# elsewhere (both must work: every installed path is relative), then
#  - build a C + Fortran CMake project with find_package(scopeprof CONFIG),
#  - build a C program with `pkg-config --cflags --libs scopeprof`,
#  - build an MPI Fortran program with only `mpif90 -I<moddir> app.f90
#    -lscopeprof-markers` (each MPI family found) and run it on 2 ranks,
# run each under the installed shim and check the exact call counts of the
# files written, read with the installed scopeprof command.
set -euo pipefail
# meson test points LD_LIBRARY_PATH at the build tree: use only the install.
unset LD_LIBRARY_PATH
build=$(cd "$1" && pwd)
fortran=$2   # 1: the build compiled the Fortran module (gfortran found)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/scopeprof-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

command -v cmake >/dev/null || fail "cmake not found (scripts/setup installs it)"

step "meson install --destdir"
meson install -C "$build" --no-rebuild --quiet --destdir "$work/stage" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "meson install failed"; }
read -r prefix libdir includedir bindir < <(meson introspect "$build" --buildoptions |
  /usr/bin/python3 -c 'import json,sys; o={x["name"]:x["value"] for x in json.load(sys.stdin)}
print(o["prefix"], o["libdir"], o["includedir"], o["bindir"])')
[ -d "$work/stage$prefix" ] || fail "nothing staged under $work/stage$prefix"
# Moving the staged prefix proves nothing refers to $prefix or the stage.
mv "$work/stage$prefix" "$work/moved"
root=$work/moved
lib=$root/$libdir
shim=$lib/libscopeprof.so
scopeprof=$root/$bindir/scopeprof
fmoddir=$root/$includedir/scopeprof/fortran

step "installed files"
for f in "$shim" "$lib/scopeprof/libscopeprof-writer.so" "$lib/libscopeprof-markers.so" \
         "$root/$includedir/scope_profiler.h" "$root/$includedir/scope_profiler.f90" \
         "$lib/pkgconfig/scopeprof.pc" \
         "$lib/pkgconfig/scopeprof-markers.pc" "$lib/cmake/scopeprof/scopeprofConfig.cmake" \
         "$lib/cmake/scopeprof/scopeprofConfigVersion.cmake" "$scopeprof" \
         "$root/share/man/man1/scopeprof.1" "$root/share/man/man1/scopeprof-export.1" \
         "$root/share/man/man7/scopeprof.7" "$root/share/bash-completion/completions/scopeprof"; do
  [ -e "$f" ] || fail "not installed: ${f#$root/}"
done
if [ "$fortran" = 1 ]; then
  [ -e "$fmoddir/scope_profiler.mod" ] || fail "not installed: the Fortran module"
else
  echo "note: built without gfortran: no Fortran module, its checks are left out"
fi
# The analysis headers are internal (docs/install.md): not installed.
[ ! -e "$root/$includedir/scopeprof/analysis.h" ] || fail "internal header installed"

# The installed pages render (their content is test_man.sh's).
MANPATH=$root/share/man man -w scopeprof-report >/dev/null || fail "man cannot find scopeprof-report"
[ -n "$(MANPATH=$root/share/man MANWIDTH=80 man 7 scopeprof 2>/dev/null | grep SCOPE_PROFILER_OUTPUT)" ] ||
  fail "man 7 scopeprof"
expect() { # what got expected
  [ "$2" = "$3" ] || fail "$1: got $2, expected $3"
  echo "ok: $1 = $3"
}
expect "scopeprof version" "$("$scopeprof" version)" "$("$scopeprof" --version)"

# calls FILE... CALL_PATH: how many calls of the files have that call path.
calls() {
  local path=${*: -1}
  "$scopeprof" export csv "${@:1:$#-1}" -o - |
    awk -F, -v p="$path" 'NR > 1 && $7 == p { n++ } END { print n + 0 }'
}

step "CMake project (C + Fortran) against $root"
cmake -S "$here/project" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$root" \
  -DWITH_FORTRAN="$([ "$fortran" = 1 ] && echo ON || echo OFF)" >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; fail "cmake configure failed"; }
cmake --build "$work/cmake" >"$work/cmake-build.log" 2>&1 ||
  { cat "$work/cmake-build.log"; fail "cmake build failed"; }
grep -qx "shim=$shim" "$work/cmake/scopeprof-paths.txt" || fail "scopeprof_SHIM: $(cat "$work/cmake/scopeprof-paths.txt")"
grep -qx "preload=LD_PRELOAD=$shim" "$work/cmake/scopeprof-paths.txt" || fail "scopeprof_PRELOAD_ENVIRONMENT"
[ "$fortran" = 1 ] || fmoddir=
grep -qx "fmoddir=$fmoddir" "$work/cmake/scopeprof-paths.txt" || fail "scopeprof_Fortran_MODULE_DIR"
grep -qx "shim_target=$shim" "$work/cmake/scopeprof-targets.txt" || fail "scopeprof::shim"
grep -qx "exe=$scopeprof" "$work/cmake/scopeprof-targets.txt" || fail "scopeprof::scopeprof"

# Without the shim the no-op markers write nothing.
(cd "$work" && SCOPE_PROFILER_OUTPUT="$work/noop" "$work/cmake/app_c")
[ "$fortran" = 1 ] && (cd "$work" && SCOPE_PROFILER_OUTPUT="$work/noop" "$work/cmake/app_f")
[ -z "$(ls "$work" | grep '^noop')" ] || fail "the no-op markers wrote a file"

mkdir -p "$work/out"
LD_PRELOAD=$shim SCOPE_PROFILER_OUTPUT="$work/out/c" "$work/cmake/app_c"
expect "C c_outer" "$(calls "$work/out/c_rank00000.h5" c_outer)" 3
expect "C c_outer > c_inner" "$(calls "$work/out/c_rank00000.h5" 'c_outer > c_inner')" 6
if [ "$fortran" = 1 ]; then
  LD_PRELOAD=$shim SCOPE_PROFILER_OUTPUT="$work/out/f" "$work/cmake/app_f"
  expect "Fortran f_outer" "$(calls "$work/out/f_rank00000.h5" f_outer)" 4
  expect "Fortran f_outer > f_inner" "$(calls "$work/out/f_rank00000.h5" 'f_outer > f_inner')" 12
fi

# pkg-config's ${pcfiledir}/../../.. paths, normalised for comparison.
pcvar() { realpath -m "$(pkg-config --variable="$1" scopeprof)"; }

# `scopeprof run` of the moved install preloads the moved install's shim.
"$scopeprof" run -o "$work/out/run" -- "$work/cmake/app_c" >"$work/run.log" 2>&1 ||
  { cat "$work/run.log"; fail "scopeprof run"; }
expect "scopeprof run c_outer > c_inner" "$(calls "$work/out/run_rank00000.h5" 'c_outer > c_inner')" 6

step "pkg-config"
export PKG_CONFIG_PATH=$lib/pkgconfig
expect "pkg-config shim" "$(pcvar shim)" "$shim"
[ "$fortran" = 1 ] && expect "pkg-config fmoddir" "$(pcvar fmoddir)" "$fmoddir"
expect "pkg-config scopeprof" "$(pcvar scopeprof)" "$scopeprof"
# shellcheck disable=SC2046
cc -o "$work/pc_app" "$here/pc_app.c" $(pkg-config --cflags --libs scopeprof) \
  -Wl,-rpath,"$(pkg-config --variable=libdir scopeprof)"
LD_PRELOAD=$(pkg-config --variable=shim scopeprof) SCOPE_PROFILER_OUTPUT="$work/out/pc" "$work/pc_app"
expect "pkg-config pc_region" "$(calls "$work/out/pc_rank00000.h5" pc_region)" 1

step "mpif90 -I<moddir> app.f90 -lscopeprof-markers"
families=0
[ "$fortran" = 1 ] || { echo "all install checks passed (no Fortran)"; exit 0; }
for family in openmpi:mpirun.openmpi mpich:mpiexec.mpich; do
  name=${family%%:*} launcher=${family#*:}
  command -v "mpif90.$name" >/dev/null && command -v "$launcher" >/dev/null || continue
  families=$((families + 1))
  "mpif90.$name" -I"$fmoddir" "$here/mpi_app.f90" -o "$work/mpi_app_$name" \
    -L"$lib" -lscopeprof-markers -Wl,-rpath,"$lib"
  extra=()
  [ "$name" = openmpi ] && extra=(--oversubscribe)
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    "$launcher" "${extra[@]}" -n 2 env LD_PRELOAD="$shim" \
    SCOPE_PROFILER_OUTPUT="$work/out/mpi_$name" "$work/mpi_app_$name" >"$work/mpi.log" 2>&1 ||
    { cat "$work/mpi.log"; fail "$name run failed"; }
  for r in 0 1; do
    f=$work/out/mpi_${name}_rank0000$r.h5
    [ -f "$f" ] || fail "$name: no file for rank $r"
    expect "$name rank $r f_main > f_step" "$(calls "$f" 'f_main > f_step')" 2
  done
done
[ "$families" -gt 0 ] || echo "note: no MPI Fortran compiler; the mpif90 part did not run"
echo "all install checks passed"
