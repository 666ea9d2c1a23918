#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetch tesseract-core's example Tesseracts (test fixtures of the Python
# component backend) from the sdist of the installed tesseract-core release,
# and keep only its examples/ folder:
#   ${TESSERA_BUILD_DIR:-build}/third_party/tesseract-examples/
# The examples are fetched, never copied into this repository.
# Idempotent: does nothing when the examples of that version are already
# there. PyPI is the only network it needs (through pip).
#   scripts/fetch_tesseract_examples.sh
# TESSERA_BUILD_DIR: the build folder (default: build/ at the repository root).
# TESSERACT_CORE_VERSION: the release to fetch (default: the installed one).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${TESSERA_BUILD_DIR:-$root/build}"
dest="$build_dir/third_party/tesseract-examples"
python="${PYTHON:-python3}"

version="${TESSERACT_CORE_VERSION:-}"
if [[ -z "$version" ]]; then
  # Same examples as the runtime the tests compare against.
  version="$("$python" -c 'import importlib.metadata as m; print(m.version("tesseract-core"))' 2>/dev/null)" || {
    echo "fetch_tesseract_examples: tesseract-core is not installed for $python;" \
         "install it or set TESSERACT_CORE_VERSION" >&2
    exit 1
  }
fi

stamp="$dest/.tesseract-core-version"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
  echo "fetch_tesseract_examples: tesseract-core $version examples already in $dest"
  exit 0
fi

mkdir -p "$build_dir/third_party"
work="$(mktemp -d "$build_dir/third_party/.tesseract-examples.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "fetch_tesseract_examples: downloading the tesseract-core $version sdist from PyPI"
"$python" -m pip download "tesseract-core==$version" --no-binary :all: --no-deps \
  --disable-pip-version-check -q -d "$work/dl"

shopt -s nullglob
# (A glob character in the name, so that nullglob drops a name not there.)
sdists=("$work"/dl/tesseract[-_]core-"$version".tar.gz)
shopt -u nullglob
if ((${#sdists[@]} != 1)); then
  echo "fetch_tesseract_examples: no sdist of tesseract-core $version in $work/dl:" >&2
  ls -l "$work/dl" >&2 || true
  exit 1
fi
sdist="${sdists[0]}"

# The sdist's top folder is tesseract_core-<version>/; take only its examples/.
# (sed reads the whole listing: head would make tar die of SIGPIPE.)
top="$(tar -tzf "$sdist" | sed -n '1s|/.*||p')"
mkdir -p "$work/x"
tar -xzf "$sdist" -C "$work/x" "$top/examples"
if [[ ! -d "$work/x/$top/examples" ]]; then
  echo "fetch_tesseract_examples: $sdist has no examples/ folder" >&2
  exit 1
fi
echo "$version" > "$work/x/$top/examples/.tesseract-core-version"

# Replace in one rename, so a half-extracted tree is never taken as done.
rm -rf "$dest"
mv "$work/x/$top/examples" "$dest"
echo "fetch_tesseract_examples: tesseract-core $version examples in $dest"
