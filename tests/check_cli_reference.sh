#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The committed references docs/reference/cli.md and options.md are what the
# built command prints now (`tessera help --markdown`, `--markdown-options`):
# a help text or option changed without regenerating them fails here.
#   check_cli_reference.sh TESSERA SOURCE_DIR
set -euo pipefail
tessera="$1" src="$2"
status=0
for pair in "markdown:cli.md" "markdown-options:options.md"; do
  form="${pair%%:*}" file="$src/docs/reference/${pair#*:}"
  if ! "$tessera" help "--$form" | diff -u "$file" - ; then
    echo "FAIL  $file is stale: regenerate with 'cmake --build build --target reference-docs'"
    status=1
  else
    echo "ok    $file is current"
  fi
done
exit $status
