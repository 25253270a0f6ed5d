#!/bin/sh
# A short libFuzzer run, part of the test suite when built with -Dfuzz=true:
#   run_fuzzer.sh FUZZER SEED_MAKER NAME REGRESSIONS_DIR WORK_DIR SECONDS
# Seeds: small valid files (make_fuzz_seeds) plus the committed crash
# inputs.  A crash, hang or runaway allocation in scopeprof's own code fails
# the test; the input is left in WORK_DIR/NAME-crashes to be committed under
# tests/fuzz/regressions/NAME (docs/faults.md).  Those inside HDF5 itself
# are counted, not failed (see below).
set -eu
# A child killed on a timeout or a crash (while fuzzing, or when a saved
# input is replayed below) leaves its input file behind (fuzz_input.c
# removes it only when the reader returns): at exit, the files of the
# processes that are gone are removed.
remove_orphan_inputs() {
  for f in /dev/shm/scopeprof-fuzz-* /tmp/scopeprof-fuzz-*; do
    [ -e "$f" ] || continue
    kill -0 "${f##*-}" 2>/dev/null || rm -f "$f"
  done
}
trap remove_orphan_inputs EXIT
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
# Fork mode: a crash, timeout or out-of-memory input is saved and fuzzing
# goes on, so an HDF5 bug found in the first seconds does not end the run;
# every saved input is classified below.
rm -f "$crashes"/*
"$fuzzer" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$crashes/" \
  "$corpus" "$regressions" >"$log" 2>&1 || true
tail -n 15 "$log"
if ! grep -q -E 'INFO: (exiting|fuzzed for|Done)' "$log"; then
  echo "fuzz: $name did not run (see $log)"
  exit 1
fi
# HDF5 1.10 itself crashes, loops or allocates without bound on some
# corrupt files, in its own code, before any check of ours can run.  The
# scopeprof command turns those into one line and exit 1
# (tests/fuzz/hdf5_crashes); they are not findings in scopeprof's code and
# do not fail this run.  Anything else does.  Each saved input is replayed
# and judged by the first frame that is HDF5's or ours; an input whose
# report names neither counts against us (to be looked at).
status=0 ours=0 hdf5=0
for input in "$crashes"/*; do
  [ -e "$input" ] || continue
  replay=$input.log
  if "$fuzzer" -timeout=5 -rss_limit_mb=1024 "$input" >"$replay" 2>&1; then
    # a timeout of a loaded machine, or an out-of-memory of the fork's
    # accumulated state: reported, judged by nobody
    echo "fuzz: $input does not reproduce on its own (see $replay)"
    continue
  fi
  # The first frame that is either HDF5's or ours (our sources, or the
  # fuzzer binary outside libFuzzer's and the sanitizers' runtimes); C
  # library and libstdc++ frames (memcpy, operator new...) are neither.
  top=$(grep -E '^ *#[0-9]+ ' "$replay" |
        grep -v -E '__sanitizer|__asan|__lsan|__ubsan|__interceptor|fuzzer::| in (malloc|calloc|realloc|free) | in main ' |
        grep -E "libhdf5| in H5|/src/|/tests/fuzz/|fuzz_$name\+" |
        head -n 1 || true)
  case $name:$top in
    h5_read:*libhdf5*|h5_read:*" in H5"*)
      hdf5=$((hdf5 + 1)) ;;
    *:)
      # An out-of-memory of the resident-size limit whose live heap holds
      # neither HDF5's allocations nor ours (memory HDF5 took and gave back):
      # nothing to judge it by.  hdf5_crashes_cli bounds the command's
      # memory on such inputs; add this one there if scopeprof needs much.
      case $(basename "$input") in
        oom-*) echo "fuzz: $input: out of memory, no allocation of HDF5 or ours in the report (see $replay)"
               continue ;;
      esac
      ours=$((ours + 1)); status=1
      echo "fuzz: FINDING (no frame of HDF5 or ours in the report): $input"
      echo "      see $replay" ;;
    *)
      ours=$((ours + 1)); status=1
      echo "fuzz: FINDING in scopeprof's code: $input"
      echo "      first frame: ${top:-(none: see $replay)}"
      echo "      commit it under $regressions once fixed (docs/faults.md)" ;;
  esac
done
if [ "$hdf5" -gt 0 ]; then
  echo "fuzz: $hdf5 input(s) break HDF5 1.10 itself, in its own code (kept in $crashes);"
  echo "      the scopeprof command answers those with one line and exit 1"
fi
echo "fuzz: $name: $ours finding(s) in scopeprof's code"
exit $status
