#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the libFuzzer targets of tests/fuzz with clang (AddressSanitizer
# and UndefinedBehaviorSanitizer on) into build-fuzz/, then run each for a
# bounded time, starting from its seed corpus and regression inputs. New
# inputs go to a scratch directory, never into the tree. A crash fails the
# run; its input is kept under build-fuzz/artifacts/ to be fixed and then
# added to tests/fuzz/regressions/NAME/.
#   scripts/fuzz.sh                  every target, FUZZ_SECONDS (60) each
#   scripts/fuzz.sh payload          one target
#   FUZZ_RUNS=N scripts/fuzz.sh      N inputs per target from a fixed seed
#                                    (FUZZ_SEED, 1): the same tree always
#                                    gets the same verdict (what CI runs);
#                                    FUZZ_RUNS_<target>=N sets one target's
# Without clang it says so and exits 0 (the corpora are still replayed by
# ctest, with any compiler). TESSERA_WERROR=ON (scripts/test.sh) makes
# warnings errors.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${FUZZ_SECONDS:-60}"
seed="${FUZZ_SEED:-1}"

# A fixed seed and a number of inputs, or a time limit and a random seed.
budget_of() {
  local per_target="FUZZ_RUNS_$1"
  local runs="${!per_target:-${FUZZ_RUNS:-}}"
  if [[ -n "$runs" ]]; then
    budget=(-seed="$seed" -runs="$runs")
    budget_text="$runs inputs from seed $seed"
  else
    budget=(-max_total_time="$seconds")
    budget_text="${seconds}s"
  fi
}

if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz: clang not found; fuzzing skipped (scripts/setup.sh installs it)"
  exit 0
fi

if (($#)); then
  targets=("$@")
else
  targets=()
  for src in "$root"/tests/fuzz/fuzz_*.c; do
    name="$(basename "$src" .c)"
    targets+=("${name#fuzz_}")
  done
fi

if ! CC=clang CXX=clang++ cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
       -DTESSERA_WERROR="${TESSERA_WERROR:-OFF}" -DTESSERA_FUZZ=ON -DTESSERA_SANITIZE=ON \
       -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF -DTESSERA_BUILD_LEGACY_EXAMPLES=OFF >/dev/null ||
   ! cmake --build "$build_dir" -j"$(nproc)" --target "${targets[@]/#/fuzz_}" >/dev/null; then
  echo "fuzz: building the fuzz targets FAILED" >&2
  exit 1
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
artifacts="$build_dir/artifacts"
mkdir -p "$artifacts"
failed=()
for name in "${targets[@]}"; do
  scratch="$(mktemp -d)"
  seeds=("$root/tests/fuzz/corpus/$name")
  [[ -d "$root/tests/fuzz/regressions/$name" ]] && seeds+=("$root/tests/fuzz/regressions/$name")
  budget_of "$name"
  echo "== fuzz $name ($budget_text)"
  # Inputs up to 64 KiB; one input may take 10 s; 2 GiB of memory at most.
  "$build_dir/fuzz/fuzz_$name" "${budget[@]}" -max_len=65536 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$name-" \
      "$scratch" "${seeds[@]}" >"$build_dir/fuzz-$name.log" 2>&1
  status=$?
  grep -E "^(stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb)" \
      "$build_dir/fuzz-$name.log" | sed 's/^/   /'
  if ((status != 0)); then
    failed+=("$name")
    tail -n 60 "$build_dir/fuzz-$name.log"
    echo "fuzz: $name FAILED; the input is in $artifacts/ (fix it, then add it to" \
         "tests/fuzz/regressions/$name/)"
  fi
  rm -rf "$scratch"
done

if ((${#failed[@]})); then
  echo "fuzz: FAILED (${failed[*]})"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran without a crash"
