#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `pip install ./bindings/python` gives the whole tool: in a fresh virtual
# environment (--system-site-packages for numpy; tessera itself must come
# from this install), the `tessera` command on PATH is the venv's, runs the
# C command line bundled in the package, and a plugin built against the
# package (tessera config --cmake-args) runs in process and in a worker,
# from the command line and from Python, with no TESSERA_WORKER set.
#   tests/sdk/test_pip.sh [BUILD_DIR]   (PYTHON: the interpreter, python3)
# The wheel's build dir and the venv are in BUILD_DIR/python-venv.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="$(cd "${1:-$root/build}" && pwd)"  # absolute: the checks cd elsewhere
python="${PYTHON:-python3}"
work="$(mktemp -d "${TMPDIR:-/tmp}/tessera-pip.XXXXXX")"
# shellcheck source=../shell_checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../shell_checks.sh"
trap 'rm -rf "$work"' EXIT
version="$(sed -nE 's/^project\(tessera VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' "$root/CMakeLists.txt")"


# Made afresh each run, at the same place, so that the wheel's build (whose
# default interpreter for Python components is the venv's) stays incremental.
venv="$build_dir/python-venv/env"
rm -rf "$venv"
check "python3 -m venv --system-site-packages" "$python" -m venv --system-site-packages "$venv"
check "pip install --no-build-isolation ./bindings/python" "$venv/bin/python" -m pip install \
  --quiet --no-build-isolation --config-settings=build-dir="$build_dir/python-venv/{wheel_tag}" \
  "$root/bindings/python"
((failed)) && { echo "$passed passed, $failed failed"; exit 1; }

export PATH="$venv/bin:$PATH"
unset TESSERA_WORKER
hash -r
same "tessera on PATH is the venv's" "$(command -v tessera)" "$venv/bin/tessera"
pkg="$("$venv/bin/python" -c 'import os, tessera; print(os.path.dirname(tessera.__file__))')"
same "the tessera package is the venv's" "${pkg%%/lib/python*}" "$venv"
same "tessera --version" "$(tessera --version)" "tessera $version (plugin ABI 1)"
same "python -m tessera --version" "$("$venv/bin/python" -m tessera --version)" "$(tessera --version)"
same "tessera config --prefix is the package's _native" "$(tessera config --prefix)" \
  "$(realpath "$pkg/_native")"
check "tessera config --cmake-dir holds tesseraConfig.cmake" \
  test -f "$(tessera config --cmake-dir)/tesseraConfig.cmake"
# The command's exit status is the C command line's, through both shims.
tessera config --bogus >/dev/null 2>&1
same "tessera's usage error keeps status 2" "$?" 2
"$venv/bin/python" -m tessera nosuchcommand >/dev/null 2>&1
same "python -m tessera's usage error keeps status 2" "$?" 2

plugin="$work/first_plugin"
cp -r "$root/plugins/first_plugin" "$plugin"
rm -rf "$plugin/build"
check "a plugin built with cmake \$(tessera config --cmake-args)" bash -c \
  "cmake -S '$plugin' -B '$plugin/build' \$(tessera config --cmake-args) && cmake --build '$plugin/build'"
check "the same plugin and host by make with PKG_CONFIG_PATH=\$(tessera config --pkgconfig-dir)" \
  bash -c "PKG_CONFIG_PATH=\$(tessera config --pkgconfig-dir) make -C '$plugin' &&
    '$plugin/first_host' '$plugin/scale.so' | grep -qxF 'y = [2.5 5 7.5]'"
for mode in inproc worker; do
  same "tessera apply --mode $mode on it" "$(tessera apply --mode "$mode" "$plugin/build/scale.so" \
    '{"inputs": {"x": [1, 2, 3], "alpha": 2.5}}' | buffer_values)" "2.5 5 7.5"
done
# A Python component (a tesseract_api.py folder): the bridge bundled in the
# package is found beside the library and from the bundled worker.
for mode in inproc worker; do
  same "tessera apply --mode $mode on a Python component" "$(tessera apply --mode "$mode" \
    "$root/tests/pycomponents/affine" '{"inputs": {"x": [1, 2], "a": 2}}' | buffer_values)" "3 5"
done
same "tessera.load(mode='worker') on it" "$("$venv/bin/python" -c "
import sys, numpy as np, tessera
with tessera.load(sys.argv[1], mode='worker') as c:
    print(*c.apply({'x': np.array([1.0, 2.0, 3.0]), 'alpha': 2.5})['y'])
" "$plugin/build/scale.so")" "2.5 5.0 7.5"

# What `tessera init` writes builds against the package alone and passes
# check-gradients straight away, as its README says.
for kind in plugin python manifest; do
  check "tessera init --kind $kind" tessera init "$work/new_$kind" --kind "$kind"
done
check "the init plugin builds with -DCMAKE_PREFIX_PATH=\$(tessera config --cmake-dir)" bash -c \
  "cd '$work/new_plugin' && cmake -S . -B build -DCMAKE_PREFIX_PATH=\"\$(tessera config --cmake-dir)\" &&
   cmake --build build"
check "tessera check-gradients on the init plugin" bash -c \
  "cd '$work/new_plugin' && tessera check-gradients build/libnew_plugin.so @example_inputs.json"
check "the init plugin's own ctest (check-gradients, test cases inproc and worker)" \
  ctest --test-dir "$work/new_plugin/build" --output-on-failure
check "tessera check-gradients on the init Python component" bash -c \
  "cd '$work/new_python' && tessera check-gradients . @example_inputs.json"
check "tessera test --mode worker on the init Python component" bash -c \
  "cd '$work/new_python' && tessera test --mode worker ."
check "the init manifest's library builds and check-gradients passes" bash -c \
  "cd '$work/new_manifest' && cmake -S . -B build -DCMAKE_PREFIX_PATH=\"\$(tessera config --cmake-dir)\" &&
   cmake --build build && tessera check-gradients new_manifest.json @example_inputs.json"

echo "$passed passed, $failed failed"
((failed == 0))
