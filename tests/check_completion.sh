#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The bash completion, sourced and driven as bash drives it (COMP_WORDS,
# COMP_CWORD, then _tessera): it offers every command of the table
# (`tessera help --commands`), each command's options as its --help lists
# them, the values of --mode, --format and --option, --kind's words where a
# command has one, and file paths for the arguments.
#   check_completion.sh TESSERA COMPLETION_SCRIPT
set -uo pipefail
tessera="$1" script="$2"
status=0
# The installed script is what the command prints now (the build made it
# with `tessera help --bash-completion`; this run checks the two agree).
fresh="$(mktemp "${TMPDIR:-/tmp}/tessera-completion.XXXXXX")"
trap 'rm -f "$fresh"' EXIT
if "$tessera" help --bash-completion >"$fresh" && cmp -s "$fresh" "$script"; then
  echo "ok    the built script is what tessera help --bash-completion prints"
else
  echo "FAIL  $script differs from tessera help --bash-completion"; status=1
fi
# shellcheck source=/dev/null
source "$script" || { echo "FAIL  cannot source $script"; exit 1; }

# The candidates for the command line "$@", the last word being completed.
candidates() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(( $# - 1 ))
  COMPREPLY=()
  _tessera
  printf '%s\n' "${COMPREPLY[@]}" | sort
}
# expect WHAT WANTED... -- WORDS...: every WANTED is among the candidates.
expect() {
  local what="$1"; shift
  local wanted=()
  while [[ $1 != -- ]]; do wanted+=("$1"); shift; done
  shift
  local got; got="$(candidates "$@")"
  local w missing=()
  for w in "${wanted[@]}"; do grep -qxF -- "$w" <<<"$got" || missing+=("$w"); done
  if (( ${#missing[@]} )); then
    echo "FAIL  $what: '${*}' lacks ${missing[*]} (got: $(tr '\n' ' ' <<<"$got"))"
    status=1
  else
    echo "ok    $what"
  fi
}
# exactly WHAT WANTED... -- WORDS...: the candidates are WANTED and no more.
exactly() {
  local what="$1"; shift
  local wanted=()
  while [[ $1 != -- ]]; do wanted+=("$1"); shift; done
  shift
  local got want; got="$(candidates "$@")"
  want="$(printf '%s\n' "${wanted[@]}" | sort)"
  if [[ "$got" == "$want" ]]; then echo "ok    $what"
  else echo "FAIL  $what: '${*}' gives $(tr '\n' ' ' <<<"$got"), want ${wanted[*]}"; status=1; fi
}

mapfile -t commands < <("$tessera" help --commands)
(( ${#commands[@]} >= 13 )) || { echo "FAIL  only ${#commands[@]} commands"; exit 1; }
expect "every command of the table is completed" "${commands[@]}" -- tessera ""
exactly "a prefix narrows the commands" check-gradients check-manifest -- tessera check-
exactly "global options" --help --version -- tessera --
exactly "help completes commands and options" options -- tessera help opt

# Each command's options, read here from its --help independently.
for cmd in "${commands[@]}"; do
  mapfile -t opts < <("$tessera" "$cmd" --help | grep -E '^  -[-a-zA-Z]' |
                      sed -E 's/^  //; s/  .*//' | grep -oE -- '(^| )-{1,2}[a-zA-Z][-a-zA-Z]*' |
                      tr -d ' ' | sort -u)
  (( ${#opts[@]} )) || { echo "FAIL  $cmd --help lists no options"; status=1; continue; }
  expect "$cmd: every option of its --help" "${opts[@]}" -- tessera "$cmd" -
done

exactly "--mode values from the options table" inproc isolated worker -- tessera apply x --mode ""
exactly "--format values" json+base64 json+binref -- tessera apply --format json+
exactly "--option keys from the options table" max_arena_bytes= max_array_bytes= \
  -- tessera serve --option max_ar
mapfile -t keys < <("$tessera" help options | grep -E '^[a-z_]+  \(' | cut -d' ' -f1 | sed 's/$/=/')
expect "--option offers every key of 'tessera help options'" "${keys[@]}" -- tessera apply --option ""
if printf '%s\n' "${commands[@]}" | grep -qx init; then
  exactly "init --kind values" plugin python manifest -- tessera init dir --kind ""
else
  echo "skip  init --kind: no init command in this build"
fi

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
touch "$dir/comp.so" "$dir/payload.json"
mkdir "$dir/component"
exactly "a component path" "$dir/comp.so" "$dir/component" -- tessera apply "$dir/co"
exactly "a payload path after the component" "$dir/payload.json" \
  -- tessera apply --mode worker "$dir/comp.so" "$dir/pay"
exit $status
