#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The leak check of the sanitizer build can fail: each test of leak_probe
# runs alone under run_leak_checked.sh; the leaking ones must be reported
# as failed with LeakSanitizer's report of their block (4321 bytes in the
# test body, 4343 in a forked child of the test, 4242 in a worker), the clean one must pass.
#   probe_caught.sh LEAK_PROBE_PROGRAM
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
probe="$1"
bad=0
out="$(mktemp)"
trap 'rm -f "$out"' EXIT

expect_leak() { # TEST BYTES
  "$here/run_leak_checked.sh" "$probe" --filter "probe/$1" >"$out" 2>&1
  local rc=$?
  if [ "$rc" -eq 0 ] || ! grep -q "Direct leak of $2 byte(s)" "$out"; then
    echo "probe_caught: probe/$1 leaked $2 bytes and was not reported as failed (rc $rc):" >&2
    cat "$out" >&2
    bad=1
  else
    echo "probe_caught: probe/$1 FAILED as it must (LeakSanitizer: $2 bytes)"
  fi
}

expect_leak leak_in_the_test_body_fails_the_test 4321
expect_leak leak_in_a_forked_test_child_fails_the_test 4343
expect_leak leak_in_an_exec_worker_fails_the_test 4242
expect_leak leak_in_a_forked_worker_fails_the_test 4242
if ! "$here/run_leak_checked.sh" "$probe" --filter "probe/workers_that_free_everything_pass" >"$out" 2>&1; then
  echo "probe_caught: the clean probe failed:" >&2
  cat "$out" >&2
  bad=1
else
  echo "probe_caught: probe/workers_that_free_everything_pass passed"
fi
exit "$bad"
