#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What `tessera init` writes works as its README says: Tessera is installed
# from BUILD into a temporary prefix, then for each kind a component is
# made, configured once with CMAKE_PREFIX_PATH set to the installed CMake
# package's folder (what `tessera config --cmake-dir` prints), built, and
# passes check-gradients, `tessera test` and apply in-process and in a
# worker, and its own tests (ctest; pytest for the python kind).
#   tests/init/test_init.sh BUILD_DIR [PYTHON_COMPONENTS=1]   (KEEP=1 keeps the folder)
set -uo pipefail

build="$(cd "$1" && pwd)"
python_components="${2:-1}"
work="$(mktemp -d "${TMPDIR:-/tmp}/tessera-init.XXXXXX")"
# shellcheck source=../shell_checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../shell_checks.sh"
if [[ "${KEEP:-0}" == 1 ]]; then
  echo "keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi


# prints NAME WANT CMD...: CMD succeeds and its stdout holds WANT (with
# GREP=-E, WANT is an extended regular expression).
prints() {
  local name="$1" want="$2"; shift 2
  if "$@" >"$work/out" 2>"$work/err" && grep -q "${GREP:--F}" -- "$want" "$work/out"; then
    passed=$((passed + 1)); echo "ok    $name"
  else
    failed=$((failed + 1)); echo "FAIL  $name"; echo "      expected: $want"
    cat "$work/out" "$work/err" | tail -n 20 | sed 's/^/      /'
  fi
}

check "install into a temporary prefix" cmake --install "$build" --prefix "$work/prefix"
config="$(find "$work/prefix" -name tesseraConfig.cmake | head -n 1)"
cmake_dir="$(dirname "${config:-/none/none}")"
check "the installed package has tesseraConfig.cmake" test -n "$config"
((failed)) && { echo "$passed passed, $failed failed"; exit 1; }
# The installed command, as a user's PATH would have it.
export PATH="$work/prefix/bin:$PATH"
y='"buffer":[0.0,0.958851077208406,1.682941969615793]'

# ---- plugin -------------------------------------------------------------------
p="$work/plugin"
check "plugin: init" tessera init "$p" --kind plugin --name scaled_sine
check "plugin: cmake configure (CMAKE_PREFIX_PATH=cmake dir)" \
  cmake -S "$p" -B "$p/build" -DCMAKE_PREFIX_PATH="$cmake_dir"
check "plugin: build" cmake --build "$p/build"
(
  cd "$p" || exit 1
  check "plugin: check-gradients build/libscaled_sine.so @example_inputs.json" \
    tessera check-gradients build/libscaled_sine.so @example_inputs.json
  check "plugin: tessera test (inproc)" tessera test build/libscaled_sine.so test_cases/apply.json \
    test_cases/vjp.json test_cases/missing_alpha.json
  check "plugin: tessera test (worker)" tessera test --mode worker build/libscaled_sine.so \
    test_cases/apply.json test_cases/vjp.json test_cases/missing_alpha.json
  prints "plugin: apply (inproc)" "$y" tessera apply build/libscaled_sine.so @example_inputs.json
  prints "plugin: apply (worker)" "$y" tessera apply --mode worker build/libscaled_sine.so \
    @example_inputs.json
  GREP=-E prints "plugin: its ctest tests" "100% tests passed(, 0 tests failed)? out of 3" \
    ctest --test-dir build --output-on-failure
  echo "$passed $failed" >"$work/counts"
)
read -r passed failed <"$work/counts"

# ---- manifest -----------------------------------------------------------------
m="$work/manifest"
check "manifest: init" tessera init "$m" --kind manifest --name legacy_sine
check "manifest: cmake configure" cmake -S "$m" -B "$m/build" -DCMAKE_PREFIX_PATH="$cmake_dir"
check "manifest: build" cmake --build "$m/build"
(
  cd "$m" || exit 1
  check "manifest: check-manifest" tessera check-manifest legacy_sine.json @example_inputs.json
  check "manifest: check-gradients legacy_sine.json @example_inputs.json" \
    tessera check-gradients legacy_sine.json @example_inputs.json
  check "manifest: tessera test (inproc)" tessera test legacy_sine.json
  check "manifest: tessera test (worker)" tessera test --mode worker legacy_sine.json
  prints "manifest: apply (inproc)" "$y" tessera apply legacy_sine.json @example_inputs.json
  prints "manifest: apply (worker)" "$y" tessera apply --mode worker legacy_sine.json \
    @example_inputs.json
  GREP=-E prints "manifest: its ctest tests" "100% tests passed(, 0 tests failed)? out of 4" \
    ctest --test-dir build --output-on-failure
  echo "$passed $failed" >"$work/counts"
)
read -r passed failed <"$work/counts"

# ---- python -------------------------------------------------------------------
if [[ "$python_components" == 1 ]]; then
  py="$work/python"
  check "python: init" tessera init "$py" --kind python --name sine_model
  (
    cd "$py" || exit 1
    check "python: check-gradients . @example_inputs.json" \
      tessera check-gradients . @example_inputs.json
    check "python: check-gradients in a worker" \
      tessera check-gradients --mode worker . @example_inputs.json
    check "python: tessera test (inproc)" tessera test .
    check "python: tessera test (worker)" tessera test --mode worker .
    prints "python: apply (inproc)" "$y" tessera apply . @example_inputs.json
    prints "python: apply (worker)" "$y" tessera apply --mode worker . @example_inputs.json
    prints "python: its pytest file" "4 passed" python3 -m pytest -q -p no:cacheprovider
    echo "$passed $failed" >"$work/counts"
  )
  read -r passed failed <"$work/counts"
else
  echo "skip  python: this build has no Python components"
fi

echo "$passed passed, $failed failed"
((failed == 0))
