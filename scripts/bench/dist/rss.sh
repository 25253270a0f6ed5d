#!/bin/sh
# Peak RSS of each process of `mpiexec -n P scopeprof export folded|csv` of
# N synthetic rank files (gen_ranks.py, E calls each), in one run:
#   serial       the serial export (streamed), one process
#   in memory    the parts loaded in memory (SCOPEPROF_EXPORT_IN_MEMORY=1:
#                each process loads its block of files whole - what every
#                distributed export did before the parts streamed)
#   streamed     the parts streamed (each process its share of the ranks,
#                process 0 receiving the others' in 1 MiB pieces)
# Every output is checked to be the serial bytes.  /usr/bin/time -f %M
# wraps each process (KiB, printed in MiB); seconds are the launcher's.
#
# usage: scripts/bench/dist/rss.sh BUILD_DIR [N=4] [E=2000000] [P=2] [LAUNCHER=mpich|openmpi]
set -eu
build=${1:?usage: rss.sh BUILD_DIR [N] [E] [P] [LAUNCHER]}
n=${2:-4}
events=${3:-2000000}
procs=${4:-2}
family=${5:-mpich}
here=$(cd "$(dirname "$0")" && pwd)
scopeprof=$(cd "$build" && pwd)/src/scopeprof
work=$(mktemp -d /tmp/sp_dist_rss.XXXXXX)
trap 'rm -rf "$work"' EXIT

. "$here/launcher.sh"

/usr/bin/python3 "$here/../merge/gen_ranks.py" "$work/ranks" "$n" "$events"
cd "$work"
export TMPDIR="$work"  # the parts' temporary files (unlinked at once)

mib() { echo "$1" | awk '{ printf "%.0f", $1 / 1024 }'; }

# one process: rss of `scopeprof export FORMAT ranks -o OUT`
serial() { # format out
    start=$(date +%s.%N)
    /usr/bin/time -f %M -o rss.serial "$scopeprof" export "$1" ranks -o "$2" >/dev/null
    end=$(date +%s.%N)
    secs=$(echo "$start $end" | awk '{ printf "%.2f", $2 - $1 }')
    echo "$secs $(mib "$(tail -n 1 rss.serial)")"
}

# P processes: seconds, then each process's peak rss in MiB
launched() { # format out
    rm -f rss.p.*
    start=$(date +%s.%N)
    $launch sh -c 'exec /usr/bin/time -f %M -o "rss.p.$(printenv '"$rankvar"')" "$@"' sh \
        "$scopeprof" export "$1" ranks -o "$2" >/dev/null
    end=$(date +%s.%N)
    secs=$(echo "$start $end" | awk '{ printf "%.2f", $2 - $1 }')
    all=""
    for k in $(seq 0 $((procs - 1))); do
        all="$all $(mib "$(tail -n 1 "rss.p.$k")")"
    done
    echo "$secs$all"
}

echo "$n rank files x $events calls, $procs processes ($family); seconds, peak RSS MiB per process"
for format in folded csv; do
    set -- $(serial "$format" "serial.$format")
    echo "$format serial:    $1 s, $2 MiB"
    line=$(SCOPEPROF_EXPORT_IN_MEMORY=1 launched "$format" "memory.$format")
    cmp "serial.$format" "memory.$format"
    rm -f "memory.$format"
    set -- $line
    secs=$1; shift
    echo "$format in memory: $secs s, $* MiB"
    line=$(launched "$format" "streamed.$format")
    cmp "serial.$format" "streamed.$format"
    rm -f "streamed.$format" "serial.$format"
    set -- $line
    secs=$1; shift
    echo "$format streamed:  $secs s, $* MiB"
done
