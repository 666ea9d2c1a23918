#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `cmake --install` into a temporary prefix puts tessera.1 where man finds
# it and the bash completion where bash-completion loads it; the installed
# man page describes every command of the table (`tessera help --commands`).
#   check_man_install.sh BUILD_DIR TESSERA
set -euo pipefail
build="$1" tessera="$2"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
# A minimized Ubuntu diverts man to a stub and keeps the real one as man.REAL.
man_cmd=man
[[ -x /usr/bin/man.REAL ]] && man_cmd=/usr/bin/man.REAL
command -v "$man_cmd" >/dev/null || { echo "FAIL  no man (scripts/setup.sh installs man-db)"; exit 1; }
page="$(MANWIDTH=100 "$man_cmd" -M "$prefix/share/man" -P cat tessera 2>&1)" || {
  echo "FAIL  man -M $prefix/share/man tessera: $page"; exit 1; }
status=0
grep -q "^NAME" <<<"$page" || { echo "FAIL  the page has no NAME section"; status=1; }
while read -r cmd; do
  if grep -q -- "tessera $cmd\$" <<<"$page" && grep -q -- "Usage: tessera $cmd" <<<"$page"; then
    echo "ok    man tessera describes '$cmd'"
  else
    echo "FAIL  man tessera lacks '$cmd' (its heading or its usage line)"
    status=1
  fi
done < <("$tessera" help --commands)
grep -q "max_array_bytes" <<<"$page" || { echo "FAIL  the page lacks the library options"; status=1; }
completion="$prefix/share/bash-completion/completions/tessera"
if [[ -f "$completion" ]] && bash -n "$completion"; then
  echo "ok    the bash completion is installed at $completion"
else
  echo "FAIL  no bash completion at $completion"
  status=1
fi
exit $status
