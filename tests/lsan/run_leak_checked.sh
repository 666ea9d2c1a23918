#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs one test program of a sanitizer build (TESSERA_SANITIZE) so that a
# sanitizer report from any of its processes fails it. Criterion runs each
# test in a child and has already counted the test as passed when
# LeakSanitizer reports at the child's exit, so that report and its exit
# status are lost; workers and CLI runs a test starts report into pipes the
# test may not read. Here every process writes its reports to files of its
# own (log_path, one per pid, inherited through fork and exec), and the run
# fails if any of them holds a report.
#   run_leak_checked.sh PROGRAM [ARGS...]
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
reports="$(mktemp -d "${TMPDIR:-/tmp}/tessera-lsan.XXXXXX")" || exit 1
trap 'rm -rf "$reports"' EXIT

# What scripts/test.sh passes, or the same by default; the report files
# and the third-party suppressions are added to it.
asan="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:handle_segv=0:handle_abort=0}"
export ASAN_OPTIONS="$asan:log_path=$reports/report"
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$here/suppressions.txt:print_suppressions=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}:log_path=$reports/report"

"$@"
rc=$?

# A worker may still be ending (its leak check runs at exit) after the
# program that started it returned: give stragglers a moment.
sleep 0.2
found=0
for f in "$reports"/report.*; do
  [ -e "$f" ] || continue
  if grep -qE "ERROR: (LeakSanitizer|AddressSanitizer)|runtime error:|SUMMARY: " "$f"; then
    found=1
    echo "---- sanitizer report ($(basename "$f")) ----" >&2
    cat "$f" >&2
  fi
done
if [ "$found" -ne 0 ]; then
  echo "FAILED: $(basename "$1") or a process it started has a sanitizer report (above)" >&2
  exit 1
fi
exit "$rc"
