#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The full valgrind memcheck matrix of the command line: every command on a
# plugin, a manifest, a Python component and a served component, in each
# mode the command takes, good and bad requests (tests/memcheck/cli_memcheck.sh;
# ctest cli_memcheck runs its short form). Slow: tens of minutes.
#   scripts/memcheck_cli.sh [BUILD_DIR]   (default build)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
exec "$src/tests/memcheck/cli_memcheck.sh" "$build/bin/tessera" "$build/plugins" "$src" full
