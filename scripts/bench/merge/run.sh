#!/bin/sh
# Peak memory of `scopeprof merge` against the number of rank files: merges
# SMALL and then LARGE synthetic rank files of EVENTS events each and prints
# both peak RSS figures and their ratio (bounded memory: ratio close to 1).
#
# usage: scripts/bench/merge/run.sh BUILD_DIR [LARGE=1024] [EVENTS=10000] [SMALL=16]
set -eu
build=${1:?usage: run.sh BUILD_DIR [LARGE] [EVENTS] [SMALL]}
large=${2:-1024}
events=${3:-10000}
small=${4:-16}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/sp_merge_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 "$here/gen_ranks.py" "$work/ranks" "$large" "$events"

peak_kib() { # files...
    /usr/bin/time -f '%M %e' -o "$work/time" "$build/src/scopeprof" merge "$@" -o "$work/out.h5" >/dev/null
    cat "$work/time"
}

set -- "$work"/ranks/bench_rank*.h5
small_files=$(ls "$work"/ranks/bench_rank*.h5 | head -n "$small")
read small_kib small_s <<EOF2
$(peak_kib $small_files)
EOF2
read large_kib large_s <<EOF2
$(peak_kib "$@")
EOF2
size=$(stat -c %s "$work/out.h5")
echo "merge of $small rank files x $events events: peak RSS ${small_kib} KiB (${small_s} s)"
echo "merge of $large rank files x $events events: peak RSS ${large_kib} KiB (${large_s} s), output $size bytes"
awk -v a="$large_kib" -v b="$small_kib" 'BEGIN { printf "peak RSS ratio %d/%d files: %.2f\n", '"$large"', '"$small"', a / b }'
"$build/src/scopeprof" validate "$work/out.h5"
