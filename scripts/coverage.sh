#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Line and branch coverage of the C suite, per folder, against the floors of
# scripts/coverage_floors.txt. Builds into its own directory (build-coverage/,
# or COVERAGE_BUILD_DIR) with TESSERA_COVERAGE=ON at -O0, so that lines and
# branches map to the source one to one; clears the counters of any earlier
# run; runs the ctest suite there; then gcovr sums what the library, the
# worker, the command line and `tessera serve` ran (tests/, bench/, plugins/
# and generated files left out), and scripts/coverage_table.py prints the
# table (folder, lines %, branches %, floors, verdict) and writes it to
# build-coverage/coverage.txt, beside gcovr's JSON summary
# (coverage-summary.json) and an HTML page per file (html/index.html).
# Exits non-zero if the build or a test fails, or a folder is under a floor.
#   scripts/coverage.sh              (scripts/test.sh runs it)
# The Python extension (bindings/python/src/ext) and the library's lines
# that only the pytest suite reaches are not measured: that needs the
# Python package rebuilt with the counters.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cov_dir="${COVERAGE_BUILD_DIR:-$root/build-coverage}"
floors="${COVERAGE_FLOORS:-$root/scripts/coverage_floors.txt}"
jobs="$(nproc)"
start=$SECONDS

if ! command -v gcovr >/dev/null 2>&1; then
  echo "coverage: gcovr not found (scripts/setup.sh installs Debian's gcovr)" >&2
  exit 1
fi

# Debug: -O0, as optimized code merges and moves lines and branches.
if ! { cmake -S "$root" -B "$cov_dir" -DCMAKE_BUILD_TYPE=Debug -DTESSERA_COVERAGE=ON \
         -DTESSERA_WERROR="${TESSERA_WERROR:-OFF}" -DTESSERA_BUILD_BENCH=OFF >/dev/null &&
       cmake --build "$cov_dir" -j"$jobs" >"$cov_dir/build.log" 2>&1; }; then
  grep -E "(error|warning):" "$cov_dir/build.log" | head -n 40
  echo "coverage: the build FAILED (log: $cov_dir/build.log)" >&2
  exit 1
fi
echo "coverage: built in $((SECONDS - start)) s"

# Counters add up across runs: start from none.
find "$cov_dir" -name '*.gcda' -delete
status=0
test_start=$SECONDS
if ! (cd "$cov_dir" && ctest --output-on-failure -j"$jobs"); then
  echo "coverage: a test FAILED; the figures below are of a failed run" >&2
  status=1
fi
echo "coverage: tests ran in $((SECONDS - test_start)) s"

# The filters are regular expressions on paths relative to the directory
# gcovr runs in: the root.
rm -rf "$cov_dir/html"
mkdir -p "$cov_dir/html"
if ! cd "$root" || ! gcovr --root "$root" --object-directory "$cov_dir" \
       --exclude '^tests/' --exclude '^bench/' --exclude '^plugins/' \
       --exclude "^$(basename "$cov_dir")/" --exclude-unreachable-branches \
       --json-summary-pretty --json-summary "$cov_dir/coverage-summary.json" \
       --html-details "$cov_dir/html/index.html" >/dev/null; then
  echo "coverage: gcovr FAILED" >&2
  exit 1
fi
if ! python3 "$root/scripts/coverage_table.py" "$cov_dir/coverage-summary.json" "$floors" \
       --out "$cov_dir/coverage.txt"; then
  status=1
fi
echo "coverage: table in $cov_dir/coverage.txt, pages in $cov_dir/html/index.html" \
     "($((SECONDS - start)) s in all)"
exit "$status"
