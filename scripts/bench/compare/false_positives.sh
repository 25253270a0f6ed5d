#!/bin/sh
# False-positive and detection rates of the regression gate (`scopeprof
# check`) on this machine, as docs/compare.md reports them.  Runs
# tests/programs/compare_work N times unchanged (A) and N times with
# "assemble" doing 20 % more work (B), interleaved, then asks the gate at
# 10 %:
#   same program  A_i vs A_i+1 (one run per side) and --baseline A A
#                 --candidate A (groups of three): any region flagged is a
#                 false positive;
#   20 % slower   A_i vs B_i and --baseline A A A --candidate B B B: detected
#                 when the gate exits 1 naming exactly main > solve > assemble.
# For each metric with the noise-aware gate and with --no-noise (the change
# alone, as gates without noise estimates judge).
#
# usage: scripts/bench/compare/false_positives.sh BUILD_DIR [N=12] [METRICS="total p50"]
set -eu
build=$(cd "${1:?usage: false_positives.sh BUILD_DIR [N] [METRICS]}" && pwd)
n=${2:-12}
metrics=${3:-total p50}
sp=$build/src/scopeprof
work=$(mktemp -d /tmp/sp_compare_bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

i=1
while [ "$i" -le "$n" ]; do
    SCOPE_PROFILER_OUTPUT="$work/a$i" LD_PRELOAD="$build/preload/libscopeprof.so" \
        "$build/tests/programs/compare_work" >/dev/null
    SCOPEPROF_TEST_SLOWER=assemble SCOPE_PROFILER_OUTPUT="$work/b$i" \
        LD_PRELOAD="$build/preload/libscopeprof.so" "$build/tests/programs/compare_work" >/dev/null
    i=$((i + 1))
done
echo "load average before the checks: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

# gate ARGS... -> "flagged" (exit 1), "exact" (exit 1, only assemble), or "ok"
gate() {
    status=0
    out=$("$sp" check "$@" --max-regression 10 2>&1) || status=$?
    if [ "$status" = 0 ]; then
        echo ok
    elif [ "$status" != 1 ]; then
        echo "scopeprof check $*: exit $status: $out" >&2
        kill "$$" # an error is neither a verdict nor a false positive
    else
        lines=$(printf '%s\n' "$out" | grep -c '^REGRESSION' || true)
        if [ "$lines" = 1 ] && printf '%s\n' "$out" | grep -q '^REGRESSION  main > solve > assemble:'; then
            echo exact
        else
            echo flagged
        fi
    fi
}

for metric in $metrics; do
    for mode in noise no-noise; do
        extra="--metric $metric"
        [ "$mode" = no-noise ] && extra="$extra --no-noise"
        fp=0 pairs=0 fp3=0 groups=0 det=0 det3=0 groups3=0
        i=1
        while [ "$i" -lt "$n" ]; do
            pairs=$((pairs + 1))
            [ "$(gate "$work/a$i" "$work/a$((i + 1))" $extra)" = ok ] || fp=$((fp + 1))
            i=$((i + 1))
        done
        i=1
        while [ $((i + 2)) -le "$n" ]; do
            groups=$((groups + 1))
            [ "$(gate --baseline "$work/a$i" "$work/a$((i + 1))" --candidate "$work/a$((i + 2))" $extra)" = ok ] ||
                fp3=$((fp3 + 1))
            groups3=$((groups3 + 1))
            [ "$(gate --baseline "$work/a$i" "$work/a$((i + 1))" "$work/a$((i + 2))" \
                  --candidate "$work/b$i" "$work/b$((i + 1))" "$work/b$((i + 2))" $extra)" = exact ] &&
                det3=$((det3 + 1))
            i=$((i + 3))
        done
        i=1
        while [ "$i" -le "$n" ]; do
            [ "$(gate "$work/a$i" "$work/b$i" $extra)" = exact ] && det=$((det + 1))
            i=$((i + 1))
        done
        echo "metric $metric, $mode: same program flagged $fp/$pairs pairs, $fp3/$groups groups (2 vs 1 runs); 20 % slower detected alone $det/$n pairs, $det3/$groups3 groups (3 vs 3 runs)"
    done
done
