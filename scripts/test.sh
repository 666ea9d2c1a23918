#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build, then run every test: the ctest suite in build/, the install test
# (install into a temporary prefix, build the out-of-tree example against
# it), the ctest suite again under AddressSanitizer and UndefinedBehavior-
# Sanitizer (build-asan/), and again for line and branch coverage per
# folder against its floors (build-coverage/, scripts/coverage.sh), Release
# builds with gcc and clang and the strict warnings (build-release-gcc/,
# build-release-clang/; built, not run), and each fuzz target for a
# bounded time (build-fuzz/), then the Python tests and tesseract-core's
# examples' regression cases (tests/conformance). Every build here treats
# warnings as errors (TESSERA_WERROR, off in a user's build). Exits non-zero
# if anything fails.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
failed=()
# setup.sh (build/) and fuzz.sh (build-fuzz/) take it from the environment.
export TESSERA_WERROR=ON

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

# ---- pip install gives the whole tool ------------------------------------------
# A fresh venv (system site-packages for numpy; tessera from this install):
# `tessera` on PATH is the venv's, tessera config, a plugin built against the
# package run by the command in process and in a worker, python -m tessera
# (tests/sdk/test_pip.sh; the venv and the wheel's build dir: build/python-venv).
echo "== pip install in a fresh venv"
if ! PYTHON="${PYTHON:-python3}" "$root/tests/sdk/test_pip.sh" "$build_dir"; then
  failed+=(pip-install)
fi

# The C suite again, built with AddressSanitizer and UndefinedBehavior-
# Sanitizer (TESSERA_SANITIZE) into build-asan/. Workers keep the default
# signal handling (handle_segv=0, handle_abort=0), so that a plugin's crash
# is still reported as the signal that killed its worker.
echo "== sanitizers (build-asan)"
asan_dir="${ASAN_BUILD_DIR:-$root/build-asan}"
if cmake -S "$root" -B "$asan_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTESSERA_SANITIZE=ON \
     -DTESSERA_WERROR=ON -DTESSERA_BUILD_BENCH=OFF >/dev/null &&
   cmake --build "$asan_dir" -j"$(nproc)" >/dev/null; then
  if ! (cd "$asan_dir" &&
        ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:handle_segv=0:handle_abort=0 \
        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        ctest --output-on-failure -j"$(nproc)"); then
    failed+=(sanitizers)
  fi
else
  echo "test: the sanitizer build FAILED" >&2
  failed+=(sanitizer-build)
fi

# Line and branch coverage of the C suite per folder (build-coverage/),
# judged against scripts/coverage_floors.txt; the table is left in
# build-coverage/coverage.txt. About 3-5 minutes on 2 cores.
echo "== coverage (build-coverage)"
if ! "$root/scripts/coverage.sh"; then
  failed+=(coverage)
fi

# Release builds (-O3: the optimizer's warnings, maybe-uninitialized and
# array-bounds among them) with gcc and with clang, the strict warnings on
# (TESSERA_STRICT_WARNINGS: -Wshadow -Wmissing-prototypes -Wstrict-prototypes
# -Wformat=2 -Wcast-qual) and -Werror: built, not run. Without clang, its
# build is skipped.
for cc in gcc clang; do
  echo "== release build ($cc, strict warnings)"
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "test: $cc not found; its release build skipped"
    continue
  fi
  rel_dir="$root/build-release-$cc"
  mkdir -p "$rel_dir"
  # The one C++ file (codecs/double_conv.cc) is built by the same family.
  cxx=$([[ $cc == gcc ]] && echo g++ || echo clang++)
  if ! { CC="$cc" CXX="$cxx" cmake -S "$root" -B "$rel_dir" -DCMAKE_BUILD_TYPE=Release \
           -DTESSERA_STRICT_WARNINGS=ON -DTESSERA_WERROR=ON &&
         cmake --build "$rel_dir" -j"$(nproc)"; } >"$rel_dir/build.log" 2>&1; then
    grep -E "(error|warning):" "$rel_dir/build.log" | head -n 40
    echo "test: the $cc release build FAILED (log: $rel_dir/build.log)" >&2
    failed+=("release-$cc")
  fi
done

# The transport-cost report as a smoke test: it must run and write its
# files; its figures are not judged here.
echo "== report (quick)"
if ! TESSERA_BUILD_DIR="$build_dir" "${PYTHON:-python3}" "$root/bench/report.py" --quick \
     --out "$build_dir/bench/report-quick" >/dev/null; then
  failed+=(report)
fi

# Each fuzz target from a fixed seed for a fixed number of inputs (about
# 30 s each on the project's 2-core machine), so that a given tree always
# gets the same verdict; the corpora and regressions are replayed by ctest
# in any case. Longer random runs: scripts/fuzz.sh alone (FUZZ_SECONDS).
echo "== fuzz"
if ! FUZZ_SEED="${FUZZ_SEED:-1}" \
     FUZZ_RUNS_binref="${FUZZ_RUNS_binref:-2000000}" \
     FUZZ_RUNS_manifest="${FUZZ_RUNS_manifest:-60000}" \
     FUZZ_RUNS_payload="${FUZZ_RUNS_payload:-1000000}" \
     FUZZ_RUNS_serve="${FUZZ_RUNS_serve:-300000}" \
     FUZZ_RUNS_worker_answer="${FUZZ_RUNS_worker_answer:-2000000}" \
     FUZZ_RUNS_worker_request="${FUZZ_RUNS_worker_request:-5000000}" \
     FUZZ_RUNS_worker_schema="${FUZZ_RUNS_worker_schema:-90000}" \
     FUZZ_RUNS="${FUZZ_RUNS:-100000}" "$root/scripts/fuzz.sh"; then
  failed+=(fuzz)
fi

# Python tests: the bindings (once installed by setup.sh) and the
# interoperability tests against tesseract-core.
if compgen -G "$root/tests/python/test_*.py" >/dev/null; then
  echo "== pytest"
  if ! (cd "$root" && TESSERA_BUILD_DIR="$build_dir" "${PYTHON:-python3}" -m pytest -q tests/python); then
    failed+=(pytest)
  fi
fi

# ---- docs ------------------------------------------------------------------
# The documentation: the C API and plugin ABI pages match the headers'
# comments (scripts/gen_c_reference.py --check), no relative link of
# README.md or docs/ is broken (scripts/check_doc_links.py), and the site
# builds with mkdocs --strict (a broken link between pages or to a heading
# fails it) into build/site. A few seconds.
echo "== docs"
if ! "${PYTHON:-python3}" "$root/scripts/gen_c_reference.py" --check ||
   ! "${PYTHON:-python3}" "$root/scripts/check_doc_links.py" "$root" ||
   ! (cd "$root" && "${PYTHON:-python3}" -m mkdocs build --strict --quiet --site-dir "$build_dir/site"); then
  failed+=(docs)
fi
# ---- end of docs -----------------------------------------------------------

# Conformance with tesseract-core: every example that runs on this machine
# passes its own regression cases through `tessera test`, in-process and in
# worker mode, wherever tesseract-runtime passes them with the same packages
# (tests/conformance/run.py; the short form is the ctest conformance_short).
# Worker mode builds each example's environment from its requirements the
# first time (cached under $TESSERA_ENV_DIR).
echo "== conformance (tesseract-core's examples, inproc and worker)"
if ! "${PYTHON:-python3}" "$root/tests/conformance/run.py" --tessera "$build_dir/bin/tessera" \
     --examples "$build_dir/third_party/tesseract-examples" --option start_timeout_ms=300000; then
  failed+=(conformance)
fi

if ((${#failed[@]})); then
  echo "test summary: FAILED (${failed[*]})"
  exit 1
fi
echo "test summary: all passed"
