# SPDX-License-Identifier: MIT
# The checks the shell test scripts share (tests/sdk, tests/init,
# tests/install), sourced after the script sets $work (its scratch
# folder). Each check prints "ok    NAME" or "FAIL  NAME" with what went
# wrong, and counts into $passed and $failed.
passed=0
failed=0

# check NAME CMD...: CMD succeeds; its output is shown when it does not.
check() {
  local name="$1"; shift
  if "$@" >"$work/log" 2>&1; then
    passed=$((passed + 1)); echo "ok    $name"
  else
    failed=$((failed + 1)); echo "FAIL  $name"; tail -n 40 "$work/log" | sed 's/^/      /'
  fi
}

# same NAME GOT WANT: two strings are equal.
same() {
  if [[ "$2" == "$3" ]]; then
    passed=$((passed + 1)); echo "ok    $1"
  else
    failed=$((failed + 1)); printf 'FAIL  %s\n      got:  %s\n      want: %s\n' "$1" "$2" "$3"
  fi
}

# The values of every "buffer" in a JSON response, space separated, as %g.
buffer_values() {
  grep -oE '"buffer": *(\[[^]]*\]|[-0-9.eE+]+)' | sed 's/"buffer": *//' | tr -d '[]' |
    tr ',' '\n' | awk 'NF { printf "%s%g", (n++ ? " " : ""), $1 } END { print "" }'
}
