#!/bin/sh
# A short libFuzzer run, part of the test suite when built with -Dfuzz=true:
#   run_fuzzer.sh FUZZER SEED_MAKER NAME REGRESSIONS_DIR WORK_DIR SECONDS
# Seeds: small valid files (make_fuzz_seeds) plus the committed crash
# inputs.  A crash fails the test; the input is left in WORK_DIR/NAME-crashes
# to be committed under tests/fuzz/regressions/NAME (docs/faults.md).
set -eu
fuzzer=$1 seeds=$2 name=$3 regressions=$4 work=$5 seconds=$6
corpus=$work/corpus-$name
crashes=$work/$name-crashes
mkdir -p "$corpus" "$crashes" "$work/seeds-h5" "$work/seeds-spill"
"$seeds" "$work/seeds-h5" "$work/seeds-spill"
case $name in
  h5_read) cp "$work"/seeds-h5/* "$corpus"/ ;;
  # the spill target reads a mode byte first: 0 = fix checksums
  spill_read) for f in "$work"/seeds-spill/*; do
                { printf '\000'; cat "$f"; } > "$corpus/$(basename "$f")"; done ;;
esac
# undefined behaviour is a finding like a crash: stop and keep the input
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# HDF5 1.10 leaks small buffers on its own error paths; those are not ours.
suppressions=$work/lsan-suppressions.txt
printf 'leak:libhdf5_serial.so\nleak:libhdf5.so\n' > "$suppressions"
export LSAN_OPTIONS="suppressions=$suppressions:print_suppressions=0"
log=$work/$name-fuzz.log
status=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$crashes/" \
  "$corpus" "$regressions" >"$log" 2>&1 || status=$?
tail -n 40 "$log"
[ "$status" -eq 0 ] && exit 0
# HDF5 1.10 itself crashes on some corrupt files, in its own code, before
# any check of ours can run.  The scopeprof command turns such a crash into
# "damaged file" and exit 1 (tests/fuzz/hdf5_crashes); it is not a finding
# in scopeprof's code, so it does not fail this run.  Anything else does.
# The first frame outside the sanitizer, allocator and libFuzzer runtimes:
top=$(grep -E '^ *#[0-9]+ ' "$log" |
      grep -v -E '__sanitizer|__asan|__lsan|__ubsan|fuzzer::| in (malloc|calloc|realloc|free) |libc\.so' |
      head -n 1 || true)
case $top in
  *libhdf5*|*" in H5"*)
    echo "fuzz: this input breaks HDF5 itself, in its own code ($top);"
    echo "      the scopeprof command turns such crashes into one line and exit 1"
    echo "      (add crashing inputs to tests/fuzz/hdf5_crashes)"
    exit 0 ;;
esac
exit 1 # whatever libFuzzer returned (77 would read as "skipped" to meson)
