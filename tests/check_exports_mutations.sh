#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/check_exports.sh fails on each way the public API and the symbol
# map can drift apart: a function declared in a header but not listed in
# cmake/libtessera.map, one listed that no header declares, a declaration
# without TSR_API, a map whose newest node is not this release's, a map
# that exports by pattern. Each is made on a copy of the headers or of the
# map; the unchanged copies pass, so that each failure is the change's.
#   tests/check_exports_mutations.sh CHECK CC INCLUDE_DIR GENERATED_INCLUDE_DIR SO A NM MAP NODE
set -uo pipefail
if (($# != 9)); then
  echo "usage: $0 CHECK CC INCLUDE_DIR GENERATED_INCLUDE_DIR SO A NM MAP NODE" >&2; exit 2
fi
check="$1" cc="$2" inc="$3" gen="$4" so="$5" archive="$6" nm="$7" map="$8" node="$9"
work="$(mktemp -d "${TMPDIR:-/tmp}/tessera-exports-mut.XXXXXX")" || exit 2
trap 'rm -rf "$work"' EXIT
status=0

# run NAME WANT_RC PATTERN INC MAP: the check's status is WANT_RC and its
# output has PATTERN (a fixed string).
run() {
  local name="$1" want="$2" pattern="$3" i="$4" m="$5" out rc
  out="$("$check" "$cc" "$i" "$gen" "$so" "$archive" "$nm" "$m" "$node" 2>&1)"; rc=$?
  if [[ "$rc" == "$want" ]] && grep -qF -- "$pattern" <<<"$out"; then
    echo "ok    $name"
  else
    status=1
    echo "FAIL  $name: status $rc (want $want), output:"; sed 's/^/        /' <<<"$out"
  fi
}

fresh_inc() { rm -rf "$work/inc"; cp -r "$inc" "$work/inc"; }
fresh_map() { cp "$map" "$work/map"; }
# A header of its own, which the check finds as it finds every public header.
extra_header() {
  printf '#include "tessera.h"\n%s\n' "$1" >"$work/inc/tessera/zz_extra.h"
}

fresh_inc; fresh_map
run "the unchanged headers and map pass" 0 "ok    map: the" "$work/inc" "$work/map"

fresh_inc; fresh_map
extra_header 'TSR_API int tsr_not_listed(void);'
run "a declared function missing from the map fails" 1 "tsr_not_listed" "$work/inc" "$work/map"

fresh_inc; fresh_map
extra_header 'int tsr_bare_declaration(void);'
run "a declaration without TSR_API fails" 1 "declared without TSR_API" "$work/inc" "$work/map"

fresh_inc; fresh_map
sed -i 's/^  global:$/  global:\n    tsr_listed_but_not_declared;/' "$work/map"
run "a listed function no header declares fails" 1 "tsr_listed_but_not_declared" \
  "$work/inc" "$work/map"

fresh_inc; fresh_map
sed -i "s/^$node {/TESSERA_0.0 {/" "$work/map"
run "a map whose newest node is not this release's fails" 1 "newest node" "$work/inc" "$work/map"

fresh_inc; fresh_map
sed -i 's/^  global:$/  global:\n    tsr_*;/' "$work/map"
run "a map that exports by pattern fails" 1 "by pattern" "$work/inc" "$work/map"
exit "$status"
