#!/bin/sh
# What each process of `mpirun -np P scopeprof report -j 1` reads and
# spends, for N synthetic rank files (gen_ranks.py, E calls each): per
# process, the rank files it opened (strace: openat of a .h5 path that
# succeeded, distinct paths) and its CPU seconds (user + system, from
# /usr/bin/time, in a run without strace); for this build and, with
# BEFORE=OTHER_BUILD_DIR, that build, in the same run.  CPU seconds add
# up over the processes however the load on a shared node moves the
# elapsed time.  Every report is checked to be the serial bytes.
#
# usage: [BEFORE=DIR] scripts/bench/dist/index_reads.sh BUILD_DIR [N=1024] [E=10000] [P=2] [LAUNCHER=mpich|openmpi]
set -eu
build=${1:?usage: index_reads.sh BUILD_DIR [N] [E] [P] [LAUNCHER]}
n=${2:-1024}
events=${3:-10000}
procs=${4:-2}
family=${5:-mpich}
here=$(cd "$(dirname "$0")" && pwd)
after=$(cd "$build" && pwd)/src/scopeprof
before=${BEFORE:+$(cd "$BEFORE" && pwd)/src/scopeprof}
work=$(mktemp -d /tmp/sp_dist_index.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$here/launcher.sh"

/usr/bin/python3 "$here/../merge/gen_ranks.py" "$work/ranks" "$n" "$events"
cd "$work"
"$after" report ranks -j 1 -o serial.txt

measure() { # label scopeprof
    rm -f cpu.p.* opens.p.*
    $launch sh -c 'exec /usr/bin/time -f "%U %S" -o "cpu.p.$(printenv '"$rankvar"')" "$@"' sh \
        "$2" report ranks -j 1 -o out.txt >/dev/null
    cmp serial.txt out.txt
    $launch sh -c 'exec strace -f -qq -e trace=openat -o "opens.p.$(printenv '"$rankvar"')" "$@"' \
        sh "$2" report ranks -j 1 -o out.txt >/dev/null
    cmp serial.txt out.txt
    line="$1:"
    for k in $(seq 0 $((procs - 1))); do
        files=$(grep -v ' = -1 ' "opens.p.$k" | grep -o '"[^"]*\.h5"' | sort -u | wc -l)
        cpu=$(tail -n 1 "cpu.p.$k" | awk '{ printf "%.2f", $1 + $2 }')
        line="$line  process $k: $files files, $cpu s CPU;"
    done
    echo "$line"
}

echo "$n rank files x $events calls; report -j 1 under $family with $procs processes"
[ -z "$before" ] || measure before "$before"
measure after "$after"
