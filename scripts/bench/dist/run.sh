#!/bin/sh
# `scopeprof merge`, `report` and `export folded` of N synthetic rank
# files (gen_ranks.py, E calls each): serial, then under an MPI launcher with
# P processes, in the same run; prints the seconds of each, the speed-up
# (serial / P processes), the serial cost per rank file and the serial time
# it extrapolates to for 16,384 rank files (docs/distributed.md reads these
# figures for P processes on more nodes).  The outputs of report and folded
# are checked to be the serial bytes; `report` runs with `-j 1` both ways (one
# process serially; under the launcher the processes share the ranks).
# `export perfetto` is not shared (process 0 writes it alone since the
# exporter writes every lane on one packet sequence, docs/distributed.md).  The last row, "launch", is the fixed
# cost of starting P processes with MPI (one file exported).
#
# With BEFORE=OTHER_BUILD_DIR in the environment, `report` also runs under
# the launcher with that build's scopeprof (row "report_before", the same
# serial figure): before and after a change, in the same run.
#
# usage: [BEFORE=DIR] scripts/bench/dist/run.sh BUILD_DIR [N=1024] [E=10000] [P=2] [LAUNCHER=mpich|openmpi]
set -eu
before=${BEFORE:+$(cd "$BEFORE" && pwd)/src/scopeprof}
build=${1:?usage: run.sh BUILD_DIR [N] [E] [P] [LAUNCHER]}
n=${2:-1024}
events=${3:-10000}
procs=${4:-2}
family=${5:-mpich}
here=$(cd "$(dirname "$0")" && pwd)
scopeprof=$(cd "$build" && pwd)/src/scopeprof
work=$(mktemp -d /tmp/sp_dist_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

. "$here/launcher.sh"

/usr/bin/python3 "$here/../merge/gen_ranks.py" "$work/ranks" "$n" "$events"
cd "$work"

seconds() { # command...
    /usr/bin/time -f '%e' -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
        cat "$work/err" >&2; exit 1; }
    cat "$work/time"
}

echo "$n rank files x $events calls; $procs processes under $family; $(nproc) cores"
printf '%-13s %9s %9s %8s %12s %16s\n' command serial_s "p${procs}_s" speedup ms_per_file \
    "serial_16384_s"
for what in merge report folded; do
    case $what in
    merge) args="merge ranks -o out.h5" ;;
    report) args="report ranks -j 1 -o out.txt" ;;
    folded) args="export folded ranks -o out.folded" ;;
    esac
    serial=$(seconds "$scopeprof" $args)
    cp out.* "serial_$what" 2>/dev/null || true
    parallel=$(seconds $launch "$scopeprof" $args)
    if [ "$what" != merge ] && ! cmp -s out.* "serial_$what"; then
        echo "run.sh: $what under $family differs from the serial output" >&2
        exit 1
    fi
    rows="$what $parallel"
    if [ "$what" = report ] && [ -n "$before" ]; then
        old=$(seconds $launch "$before" $args)
        if ! cmp -s out.* "serial_$what"; then
            echo "run.sh: report of BEFORE under $family differs from the serial output" >&2
            exit 1
        fi
        rows="$rows report_before $old"
    fi
    rm -f out.* "serial_$what"
    set -- $rows
    while [ $# -ge 2 ]; do
        awk -v w="$1" -v s="$serial" -v p="$2" -v n="$n" -v P="$procs" 'BEGIN {
            per = s / n * 1000
            printf "%-13s %9.2f %9.2f %7.2fx %12.2f %16.0f\n", w, s, p, s / p, per, s / n * 16384 }'
        shift 2
    done
done
# The fixed cost of a launch: one rank file exported under the launcher
# (start, MPI_Init, MPI_Finalize), against the same serially.
one=ranks/$(ls ranks | head -n 1)
serial=$(seconds "$scopeprof" export folded "$one" -o out.folded)
parallel=$(seconds $launch "$scopeprof" export folded "$one" -o out.folded)
rm -f out.folded
awk -v s="$serial" -v p="$parallel" 'BEGIN {
    printf "%-13s %9.2f %9.2f %8s %12s %16s   (one file: the launch cost)\n", "launch", s, p,
           "-", "-", "-" }'

