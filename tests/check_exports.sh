#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The library exports exactly its public API: the functions declared in
# the public headers (include/tessera/*.h), each declared TSR_API, are the
# symbols that libtessera.so exports (nm -D), each with a version of the
# symbol map, and the only global symbols libtessera.a defines (nm -g), so
# that a host may define arena_alloc, find_field or any other internal name
# beside either library. With MAP (cmake/libtessera.map) the map lists
# exactly those functions and its newest node is NODE (TESSERA_<major>.<minor>
# of this release).
#   tests/check_exports.sh CC INCLUDE_DIR GENERATED_INCLUDE_DIR LIBTESSERA_SO LIBTESSERA_A
#                          [NM [MAP NODE]]
set -uo pipefail

if (($# < 5 || $# == 7)); then
  echo "usage: $0 CC INCLUDE_DIR GENERATED_INCLUDE_DIR LIBTESSERA_SO LIBTESSERA_A [NM [MAP NODE]]" >&2
  exit 2
fi
cc="$1" inc="$2" gen="$3" so="$4" archive="$5" nm="${6:-nm}" map="${7:-}" node="${8:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/tessera-exports.XXXXXX")" || exit 2
trap 'rm -rf "$work"' EXIT

# ---- what the headers declare ------------------------------------------------
# Preprocess every public header, keep the lines that come from them (line
# markers), and take the name of each file-scope function declaration: the
# identifier before the first "(" of a statement that is not a typedef.
# Bodies ({...}) are skipped; one ending in ")" { } is a static inline
# definition, which exports nothing.
for h in "$inc"/tessera/*.h; do printf '#include <tessera/%s>\n' "$(basename "$h")"; done \
  >"$work/all.c"
if ! "$cc" -E -x c -I "$inc" -I "$gen" "$work/all.c" >"$work/all.i" 2>"$work/cc.err"; then
  echo "FAIL: the public headers do not preprocess:"; cat "$work/cc.err"; exit 1
fi
awk -v dir="$inc/tessera/" -v gendir="$gen/tessera/" '
  /^# [0-9]+ "/ {
    f = $3; gsub(/"/, "", f)
    keep = (index(f, dir) == 1 || index(f, gendir) == 1); next
  }
  keep { text = text " " $0 }
  function emit(s,   name, api) {
    api = (s ~ /visibility *\( *"default" *\)/)
    gsub(/__attribute__ *\(\([^()]*(\([^()]*\)[^()]*)*\)\)/, " ", s)
    sub(/^[ \t]+/, "", s)
    if (s ~ /^(typedef|static)[ \t]/) return
    if (match(s, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
      name = substr(s, RSTART, RLENGTH); sub(/[ \t]*\($/, "", name)
      if (substr(s, 1, RSTART - 1) ~ /\([ \t]*\*?[ \t]*$/) return   # (*fnptr)(...)
    } else if (s ~ /^extern[ \t]/) {                                 # a variable
      gsub(/\[[^]]*\]/, "", s); sub(/[ \t]+$/, "", s)
      if (!match(s, /[A-Za-z_][A-Za-z0-9_]*$/)) return
      name = substr(s, RSTART, RLENGTH)
    } else return
    if (name ~ /^tsr_/) print name (api ? "" : " no-TSR_API")
  }
  END {
    depth = 0; stmt = ""
    for (i = 1; i <= length(text); i++) {
      ch = substr(text, i, 1)
      if (ch == "{") { depth++; continue }
      if (ch == "}") {
        depth--
        if (depth == 0 && stmt ~ /\)[ \t]*$/) stmt = ""   # an inline definition
        continue
      }
      if (depth > 0) continue
      if (ch == ";") { emit(stmt); stmt = "" } else stmt = stmt ch
    }
  }' "$work/all.i" | sort -u >"$work/declared"
awk '{ print $1 }' "$work/declared" | sort -u >"$work/headers"
if [[ ! -s "$work/headers" ]]; then
  echo "FAIL: no function found in $inc/tessera/*.h"; exit 1
fi
status=0
# Each declaration carries TSR_API (default visibility for hosts and for
# plugins compiled with -fvisibility=hidden, as the definitions have it).
bare="$(awk '$2 == "no-TSR_API" { print $1 }' "$work/declared")"
if [[ -n "$bare" ]]; then
  status=1
  echo "FAIL  declared without TSR_API:"; sed 's/^/        /' <<<"$bare"
else
  echo "ok    every declaration of the public headers carries TSR_API"
fi

# ---- what the libraries define ---------------------------------------------
"$nm" -D --defined-only "$so" >"$work/so.nm" || { echo "FAIL: nm -D $so"; exit 1; }
# A version script's nodes are absolute symbols of their own (A TESSERA_0.2).
awk 'NF >= 3 && !($2 == "A" && $3 ~ /^TESSERA_[0-9.]+$/) { s = $3; sub(/@.*/, "", s); print s }' \
  "$work/so.nm" | sort -u >"$work/so"
# Every export has a version, one of the map's (nm writes name@@VERSION).
unversioned="$(awk 'NF >= 3 && !($2 == "A" && $3 ~ /^TESSERA_[0-9.]+$/) && $3 !~ /@@?TESSERA_[0-9]+\.[0-9]+$/ { print $3 }' "$work/so.nm")"
if [[ -n "$unversioned" ]]; then
  status=1
  echo "FAIL  exported without a TESSERA_ version:"; sed 's/^/        /' <<<"$unversioned"
else
  echo "ok    every symbol of $(basename "$so") has a TESSERA_ version"
fi
"$nm" -g --defined-only "$archive" >"$work/a.nm" || { echo "FAIL: nm -g $archive"; exit 1; }
awk 'NF >= 3 { print $3 }' "$work/a.nm" | sort -u >"$work/a"

# compare WHAT FILE: lists the names only in the headers or only in FILE.
compare() {
  local what="$1" file="$2" missing extra
  missing="$(comm -23 "$work/headers" "$file")"
  extra="$(comm -13 "$work/headers" "$file")"
  if [[ -z "$missing" && -z "$extra" ]]; then
    echo "ok    $what: the $(wc -l <"$file") functions of the public headers"
    return
  fi
  status=1
  echo "FAIL  $what differs from the public headers"
  [[ -n "$missing" ]] && { echo "      declared but not exported:"; sed 's/^/        /' <<<"$missing"; }
  [[ -n "$extra" ]] && {
    echo "      exported but not declared ($(wc -l <<<"$extra")):"; sed 's/^/        /' <<<"$extra"
  }
}
if [[ -n "$map" ]]; then
  # The names of the map's global: sections, every node together (comments
  # dropped), and its nodes in order.
  sed -e 's:/\*.*\*/::g' -e '\:/\*:,\:\*/:d' "$map" | tr -s ' \t\n' ' ' | tr ';' '\n' >"$work/map.stmts"
  awk '
    { line = $0 }
    match(line, /TESSERA_[0-9]+\.[0-9]+ *\{/) {
      n = substr(line, RSTART, RLENGTH); sub(/ *\{$/, "", n); print "NODE " n
      line = substr(line, RSTART + RLENGTH); section = ""
    }
    {
      if (match(line, /(global|local) *:/)) {
        section = substr(line, RSTART, RLENGTH); sub(/ *:$/, "", section)
        line = substr(line, RSTART + RLENGTH)
      }
      gsub(/^ +| +$/, "", line)
      if (section == "global" && line ~ /^[A-Za-z_][A-Za-z0-9_]*$/) print "NAME " line
      else if (section == "global" && line != "" && line !~ /^\}/) print "PATTERN " line
    }' "$work/map.stmts" >"$work/map.parsed"
  awk '$1 == "NAME" { print $2 }' "$work/map.parsed" | sort -u >"$work/map"
  patterns="$(awk '$1 == "PATTERN" { print $2 }' "$work/map.parsed")"
  newest="$(awk '$1 == "NODE" { n = $2 } END { print n }' "$work/map.parsed")"
  if [[ -n "$patterns" ]]; then
    status=1
    echo "FAIL  $(basename "$map") exports by pattern, not by name:"; sed 's/^/        /' <<<"$patterns"
  fi
  if [[ "$newest" != "$node" ]]; then
    status=1
    echo "FAIL  the newest node of $(basename "$map") is '${newest:-none}', this release's is $node"
  else
    echo "ok    the newest node of $(basename "$map") is $node"
  fi
  compare "$(basename "$map")" "$work/map"
fi
compare "nm -D --defined-only $(basename "$so")" "$work/so"
compare "nm -g --defined-only $(basename "$archive")" "$work/a"
exit "$status"
