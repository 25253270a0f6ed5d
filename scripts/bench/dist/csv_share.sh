#!/bin/sh
# What each process of `mpirun -np P scopeprof export csv --ranks SEL`
# spends over N synthetic rank files (gen_ranks.py, E calls each): the
# processes other than 0 stream only their share of the selection, the
# checks of the ranks outside it being process 0's.  Per process its CPU
# seconds (user + system, /usr/bin/time) and, in a second run, the
# instructions of process 1 (valgrind's callgrind: the stable figure on a
# shared node); for this build and, with BEFORE=OTHER_BUILD_DIR, that
# build, in the same run.  Every output is checked to be the serial bytes.
#
# usage: [BEFORE=DIR] scripts/bench/dist/csv_share.sh BUILD_DIR [N=64] [E=100000] [P=2] [LAUNCHER=mpich|openmpi] [SEL=0]
set -eu
build=${1:?usage: csv_share.sh BUILD_DIR [N] [E] [P] [LAUNCHER] [SEL]}
n=${2:-64}
events=${3:-100000}
procs=${4:-2}
family=${5:-mpich}
selection=${6:-0}
here=$(cd "$(dirname "$0")" && pwd)
after=$(cd "$build" && pwd)/src/scopeprof
before=${BEFORE:+$(cd "$BEFORE" && pwd)/src/scopeprof}
work=$(mktemp -d /tmp/sp_dist_csv.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$here/launcher.sh"

/usr/bin/python3 "$here/../merge/gen_ranks.py" "$work/ranks" "$n" "$events"
cd "$work"
start=$(date +%s.%N)
/usr/bin/time -f "%U %S" -o cpu.serial "$after" export csv ranks --ranks "$selection" -o serial.csv >/dev/null
serial_cpu=$(tail -n 1 cpu.serial | awk '{ printf "%.2f", $1 + $2 }')

measure() { # label scopeprof
    rm -f cpu.p.*
    $launch sh -c 'exec /usr/bin/time -f "%U %S" -o "cpu.p.$(printenv '"$rankvar"')" "$@"' sh \
        "$2" export csv ranks --ranks "$selection" -o out.csv >/dev/null
    cmp serial.csv out.csv
    $launch sh -c 'if [ "$(printenv '"$rankvar"')" = 1 ]; then
                       exec valgrind -q --tool=callgrind --callgrind-out-file=cg.p1 "$@" 2>/dev/null
                   fi; exec "$@"' sh "$2" export csv ranks --ranks "$selection" -o out.csv >/dev/null
    cmp serial.csv out.csv
    line="$1:"
    for k in $(seq 0 $((procs - 1))); do
        cpu=$(tail -n 1 "cpu.p.$k" | awk '{ printf "%.2f", $1 + $2 }')
        line="$line  process $k: $cpu s CPU;"
    done
    ir=$(callgrind_annotate cg.p1 | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    echo "$line  process 1: $ir instructions"
}

echo "$n rank files x $events calls; export csv --ranks $selection under $family with $procs processes; serial $serial_cpu s CPU"
[ -z "$before" ] || measure before "$before"
measure after "$after"
