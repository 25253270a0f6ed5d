#!/usr/bin/env bash
# test_man.sh SCOPEPROF PAGES_DIR README - the generated man pages and bash
# completion (src/cli/man/gen_man.py) against the command they describe:
# every command of `scopeprof --help` has a page that man renders without a
# warning and that names every option of its --help; scopeprof(7) names
# every variable of the README's tables; the completion script, sourced in
# bash, completes commands, options, export formats and `help CMD`.
set -euo pipefail
exe=$1 pages=$2 readme=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
export MANWIDTH=100 LC_ALL=C.UTF-8 MAN_KEEP_FORMATTING=

render() { # page -> plain text; any groff/man warning fails
  local err
  err=$(man --warnings -l "$1" 2>&1 >/dev/null) || fail "man -l $1 failed: $err"
  [ -z "$err" ] || fail "man -l $1 warns: $err"
  man -l "$1" 2>/dev/null | col -b
}

commands=$("$exe" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' |
  grep -vx -e help -e version)
[ "$(echo "$commands" | wc -l)" -ge 7 ] || fail "too few commands in --help: $commands"
text=$(render "$pages/scopeprof.1")
for cmd in $commands; do
  grep -q "scopeprof-$cmd(1)" <<<"$text" || fail "scopeprof(1) does not list $cmd"
  page=$pages/scopeprof-$cmd.1
  [ -f "$page" ] || fail "no man page for $cmd"
  text_cmd=$(render "$page")
  # Every option and every format of the --help is on the page.
  for opt in $("$exe" "$cmd" --help | grep -oE '(^| )--?[a-zA-Z][-a-zA-Z]*' | sort -u); do
    grep -qF -- "$opt" <<<"$text_cmd" || fail "scopeprof-$cmd(1) lacks $opt"
  done
  [ "$("$exe" help "$cmd")" = "$("$exe" "$cmd" --help)" ] || fail "scopeprof help $cmd differs from --help"
  echo "ok: scopeprof-$cmd(1): renders cleanly, has every option of --help (= scopeprof help $cmd)"
done
for fmt in speedscope chrome prof folded json csv otf2; do
  grep -qE "^ +$fmt( |$)" <<<"$(render "$pages/scopeprof-export.1")" ||
    fail "scopeprof-export(1) lacks the format $fmt"
done

env_text=$(render "$pages/scopeprof.7")
vars=$(grep -oE '^\| `(SCOPE_PROFILER|SCOPEPROF)_[A-Z0-9_]+`' "$readme" | tr -d '|` ' | sort -u)
[ "$(echo "$vars" | wc -l)" -ge 10 ] || fail "too few variables in the README tables"
for v in $vars; do
  grep -q "^ *$v (default: " <<<"$env_text" || fail "scopeprof(7) lacks $v"
done
echo "ok: scopeprof(7): $(echo "$vars" | wc -l) variables of the README tables"

# Completion, queried as bash would.
complete_words() { # words of the command line, the last one being completed
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _scopeprof;
           printf "%s\n" "${COMPREPLY[@]}"' _ "$pages/scopeprof.bash" "$@"
}
expect_completion() { # expected words... -- command line words
  local want=() got
  while [ "$1" != -- ]; do want+=("$1"); shift; done
  shift
  got=$(complete_words "$@" | sort | tr '\n' ' ')
  for w in "${want[@]}"; do
    grep -qw -- "$w" <<<"$got" || fail "completing '$*': '$w' not among: $got"
  done
  echo "ok: completing '$*' offers ${want[*]}"
}
expect_completion export -- scopeprof ex
expect_completion report recover run -- scopeprof r
expect_completion speedscope chrome prof folded json csv otf2 -- scopeprof export ''
expect_completion --output --label --ranks -- scopeprof export otf2 --
expect_completion --depth -- scopeprof report --de
expect_completion report -- scopeprof help rep
for cmd in $commands; do
  expect_completion --help -- scopeprof "$cmd" --h
done
[ -z "$(complete_words scopeprof export otf2 run.h5 'csv')" ] ||
  fail "a format offered after the format was given"
[ "$("$exe" version)" = "$("$exe" --version)" ] || fail "scopeprof version"
"$exe" help no-such-command 2>/dev/null && fail "scopeprof help of an unknown command succeeded"
echo "all man page and completion checks passed"
