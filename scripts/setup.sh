#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prepare a fresh Debian/Ubuntu machine and build Tessera into build/.
# Idempotent: installs only the packages that are missing, and rebuilds
# only what changed.
#   scripts/setup.sh            (BUILD_DIR and BUILD_TYPE may be overridden)
# TESSERA_WERROR=ON makes warnings errors (scripts/test.sh sets it); a plain
# run builds with it OFF, so a user's build never fails on a warning.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
build_type="${BUILD_TYPE:-RelWithDebInfo}"
werror="${TESSERA_WERROR:-OFF}"

# Debian package -> command that proves a tool is already there (a cmake
# from pip counts as well as Debian's). Libraries are checked with dpkg.
declare -A tool_of=([cmake]=cmake [gcc]=gcc [g++]=g++ [pkg-config]=pkg-config [make]=make
                    [clang]=clang [valgrind]=valgrind [apache2-utils]=ab [gcovr]=gcovr
                    [chromium]=chromium [man-db]=man [groff-base]=groff)
# libdragonbox-dev, libfast-float-dev (header-only) and g++: the exact
# shortest printing and reading of doubles (codecs/double_conv.cc); clang and libclang-rt-dev (libFuzzer): scripts/fuzz.sh; valgrind: the
# CLI's memcheck test; libmicrohttpd: `tessera serve`; libcurl: the remote
# backend (a served Tesseract as a component); apache2-utils (ab): the
# load in bench/serve_load.py; libsuitesparse-dev (CHOLMOD): the compliance
# plugin's sparse Cholesky solve; gcovr: the coverage table of
# scripts/coverage.sh; chromium: the headless-browser check of `tessera
# serve`'s /docs page (tests/test_serve_docs.c); man-db and groff-base: the
# test that reads the installed man page (cli_man_install); libzip-dev,
# libexpat1-dev and libsundials-dev: FMUs (backends/fmu: the archive, its
# modelDescription.xml, CVODE/CVODES for Model Exchange simulations).
packages=(cmake gcc make pkg-config libjansson-dev libffi-dev libcriterion-dev
          liburing-dev libxxhash-dev liblz4-dev libdragonbox-dev libfast-float-dev g++ gfortran libblas-dev liblapack-dev libgsl-dev
          libmicrohttpd-dev libcurl4-openssl-dev libsuitesparse-dev
          libzip-dev libexpat1-dev libsundials-dev
          clang libclang-rt-dev valgrind apache2-utils gcovr chromium man-db groff-base)

missing=()
for pkg in "${packages[@]}"; do
  if [[ -n "${tool_of[$pkg]:-}" ]]; then
    command -v "${tool_of[$pkg]}" >/dev/null 2>&1 && continue
  elif dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    continue
  fi
  missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
elif [[ $(id -u) -ne 0 ]]; then
  echo "setup: missing packages: ${missing[*]}" >&2
  echo "setup: not root, so not installing them; run as root or:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
else
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python packages the bindings, their tests and the interoperability tests
# use; uv builds Python components' environments, dask[distributed] runs
# tessera.dask, mkdocs builds the documentation site, mypy's stubtest checks
# the extension's stub, umbridge and emcee speak UM-Bridge to tessera serve
# and sample through it. torch is pinned to the CPU build that pip finds
# locally; a plain `torch` would fetch a multi-GB CUDA build. fmpy ships
# FMI 3.0's C headers, which the library is built against (so it comes
# before cmake), and is the simulator FMUs are compared with; pythonfmu3
# builds a Co-Simulation FMU from a Python class for the FMU tests.
python="${PYTHON:-python3}"
py_missing=()
for spec in "numpy:numpy" "pytest:pytest" "jax:jax" "jaxlib:jaxlib" "torch:torch==2.13.0" \
            "tesseract_core:tesseract-core[runtime]" "scikit_build_core:scikit-build-core" \
            "matplotlib:matplotlib" "uv:uv" "distributed:dask[distributed]" \
            "tesseract_jax:tesseract-jax" "shapely:shapely==2.1.2" "mkdocs:mkdocs" "mypy:mypy" \
            "umbridge:umbridge" "emcee:emcee" "scipy:scipy" "fmpy:fmpy" "pythonfmu3:pythonfmu3"; do
  module="${spec%%:*}"
  "$python" -c "import $module" >/dev/null 2>&1 || py_missing+=("${spec#*:}")
done
if ((${#py_missing[@]} == 0)); then
  echo "setup: Python packages present"
else
  echo "setup: pip install ${py_missing[*]}"
  "$python" -m pip install --quiet "${py_missing[@]}"
fi

cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" -DTESSERA_WERROR="$werror"
cmake --build "$build_dir" -j"$(nproc)"
echo "setup: built into $build_dir"

# tesseract-core's own example components, run unchanged by the tests.
TESSERA_BUILD_DIR="$build_dir" PYTHON="$python" "$root/scripts/fetch_tesseract_examples.sh"

# The Python package `tessera` (bindings/python), built from the same
# sources into $build_dir/python and installed; again only when its sources,
# the library's or the numpy/jaxlib it builds against changed. jax comes
# first (above): the package compiles its XLA FFI handler against jaxlib.
py_stamp="$build_dir/python/installed.sha256"
py_sum="$(cd "$root" && {
  find bindings/python/pyproject.toml bindings/python/CMakeLists.txt bindings/python/src \
       codecs shm core worker backends bindings/request bindings/cli bindings/http include \
       CMakeLists.txt cmake -type f -print0 | sort -z | xargs -0 cat
  "$python" -c "import numpy, jaxlib; print(numpy.__version__, jaxlib.__version__)" \
    2>/dev/null || true
} | sha256sum | cut -d' ' -f1)"
if [[ -f "$py_stamp" && "$(cat "$py_stamp")" == "$py_sum" ]] &&
   "$python" -c "import tessera" >/dev/null 2>&1; then
  echo "setup: Python package tessera up to date"
else
  echo "setup: pip install ./bindings/python"
  "$python" -m pip install --quiet --root-user-action=ignore --no-build-isolation \
    --config-settings=build-dir="$build_dir/python/{wheel_tag}" "$root/bindings/python"
  echo "$py_sum" > "$py_stamp"
fi
# The package's console script `tessera` (the command line bundled in it) is
# in the interpreter's scripts directory; under pyenv it is on PATH once
# pyenv has made its shim.
if command -v pyenv >/dev/null 2>&1; then
  pyenv rehash >/dev/null 2>&1 || true
fi
