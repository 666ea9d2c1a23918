#!/usr/bin/env bash
# Build, then run every test: the ctest suite in build/ and the install test
# (install into a temporary prefix, build the out-of-tree example against
# it). Exits non-zero if anything fails.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
failed=()

if ! "$root/scripts/setup.sh"; then
  echo "test: setup/build FAILED" >&2
  echo "test summary: build FAILED"
  exit 1
fi

echo "== ctest"
if ! (cd "$build_dir" && ctest --output-on-failure -j"$(nproc)"); then
  failed+=(ctest)
fi

echo "== install test"
if ! "$root/tests/install/test_install.sh"; then
  failed+=(install)
fi

# Python tests: the bindings (once installed by setup.sh) and the
# interoperability tests against tesseract-core.
if compgen -G "$root/tests/python/test_*.py" >/dev/null; then
  echo "== pytest"
  if ! (cd "$root" && TESSERA_BUILD_DIR="$build_dir" "${PYTHON:-python3}" -m pytest -q tests/python); then
    failed+=(pytest)
  fi
fi

if ((${#failed[@]})); then
  echo "test summary: FAILED (${failed[*]})"
  exit 1
fi
echo "test summary: all passed"
