#!/bin/sh
# Inputs that crash HDF5 1.10 itself, or make it loop forever: the scopeprof
# command must still answer with one line naming the file and exit 1, never
# die of a signal nor hang (SCOPEPROF_READ_TIMEOUT bounds the wait).
#   check_cli_survives.sh SCOPEPROF DIR
set -u
scopeprof=$1 dir=$2
failed=0
for f in "$dir"/*; do
  for cmd in check report; do
    err=$("$scopeprof" $cmd "$f" 2>&1 >/dev/null)
    rc=$?
    lines=$(printf '%s\n' "$err" | grep -c .)
    if [ "$rc" -ne 1 ] || [ "$lines" -ne 1 ] || ! printf '%s' "$err" | grep -q "$f"; then
      echo "FAIL: scopeprof $cmd $f: exit $rc, stderr: $err"
      failed=1
    fi
  done
done
[ "$failed" -eq 0 ] && echo "scopeprof survives every input of $dir"
exit "$failed"
