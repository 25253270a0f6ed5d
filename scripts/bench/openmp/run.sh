#!/usr/bin/env bash
# scripts/bench/openmp/run.sh - the shim's cost per `#pragma omp parallel`
# region (2 threads, a body that only reads omp_get_thread_num), with gcc
# (libgomp: the GOMP_* wrappers) and clang (libomp: the OMPT tool), against
# the same program without the shim, measured in the same run:
#  - instructions per region (callgrind, all threads; the stable figure):
#    (count at R2 regions - count at R1 regions) / (R2 - R1);
#  - wall ns per region (noisy on a shared machine).
# What the shim adds per region: an "omp parallel" call on every thread of
# the team and a fork edge per worker.
# Usage: scripts/bench/openmp/run.sh [BUILD_DIR]   (default: build)
#        R=regions for wall time (default 100000), T=threads (default 2)
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=$(realpath -m "${1:-build}")
[ -f "$build/build.ninja" ] || meson setup "$build" >/dev/null
ninja -C "$build" >/dev/null
shim="$build/preload/libscopeprof.so"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
R=${R:-100000}
T=${T:-2}
runtimes=(gomp)
gcc -O2 -fopenmp scripts/bench/openmp/empty_parallel.c -o "$bin/gomp"
if command -v clang >/dev/null &&
   clang -O2 -fopenmp scripts/bench/openmp/empty_parallel.c -o "$bin/llvm"; then
  runtimes+=(llvm)
fi
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
cd "$bin"

# instructions of one run (callgrind's "Collected" line), $1 = preload or ""
instructions() {
  local pre=$1 prog=$2 regions=$3
  env ${pre:+LD_PRELOAD=$pre} SCOPE_PROFILER_OUTPUT=$bin/out valgrind --tool=callgrind \
    --callgrind-out-file=/dev/null "$bin/$prog" "$regions" "$T" 2>&1 >/dev/null |
    awk '/Collected/ { print $NF }'
}

R1=200 R2=1200
printf '%-6s %14s %14s %8s   %12s %12s %8s\n' runtime "instr bare" "instr shim" ratio \
  "ns bare" "ns shim" ratio
for rt in "${runtimes[@]}"; do
  if command -v valgrind >/dev/null; then
    b1=$(instructions "" "$rt" $R1); b2=$(instructions "" "$rt" $R2)
    s1=$(instructions "$shim" "$rt" $R1); s2=$(instructions "$shim" "$rt" $R2)
    ib=$(( (b2 - b1) / (R2 - R1) )); is=$(( (s2 - s1) / (R2 - R1) ))
  else
    ib=0 is=0
  fi
  nb=$("$bin/$rt" "$R" "$T")
  ns=$(LD_PRELOAD=$shim SCOPE_PROFILER_OUTPUT=$bin/out "$bin/$rt" "$R" "$T")
  awk -v rt="$rt" -v ib="$ib" -v is="$is" -v nb="$nb" -v ns="$ns" 'BEGIN {
    printf "%-6s %14d %14d %8.2f   %12d %12d %8.2f\n", rt, ib, is, ib ? is / ib : 0,
      nb, ns, nb ? ns / nb : 0 }'
done
