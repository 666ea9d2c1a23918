#!/usr/bin/env bash
# Build Tessera, call every bundled plugin through the `tessera` command line
# with a sample payload, then measure the in-process call overhead.
#   scripts/main.sh            (BUILD_DIR may be overridden, as for setup.sh)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
export BUILD_DIR="$build_dir"

"$root/scripts/setup.sh"

tessera="$build_dir/bin/tessera"
plugins="$build_dir/plugins"

# show ARGS...: print the command as it could be typed, then run it.
show() {
  local a line="\$ tessera"
  for a in "$@"; do
    if [[ "$a" =~ [[:space:]\"{}] ]]; then line+=" '$a'"; else line+=" $a"; fi
  done
  printf '\n%s\n' "$line"
  "$tessera" "$@"
}

echo
echo "== the bundled plugins"
show schema "$plugins/noop.so"
show apply "$plugins/noop.so" '{"inputs": {"x": [1.5, -2, 3]}}'

show apply "$plugins/vectoradd.so" '{"inputs": {"a": [1, 2, 3], "b": [10, 20, 30], "s": 2}}'
show jvp "$plugins/vectoradd.so" '{"inputs": {"a": [1, 2, 3], "b": [10, 20, 30], "s": 2},
  "jvp_inputs": ["s"], "jvp_outputs": ["result"], "tangent_vector": {"s": 1}}'

show apply "$plugins/rosenbrock.so" '{"inputs": {"x": [0.5, 1.5], "a": 1, "b": 100}}'
show vjp "$plugins/rosenbrock.so" '{"inputs": {"x": [0.5, 1.5], "a": 1, "b": 100},
  "vjp_inputs": ["x"], "vjp_outputs": ["value"], "cotangent_vector": {"value": 1}}'

matrix="$root/plugins/linear/example_matrix.txt"
show apply --config "matrix=$matrix" "$plugins/linear.so" '{"inputs": {"x": [1, 1, 1, 1]}}'
show jacobian --config "matrix=$matrix" "$plugins/linear.so" \
  '{"inputs": {"x": [1, 1, 1, 1]}, "jac_inputs": ["x"], "jac_outputs": ["y"]}'

echo "== in-process call overhead (bench/README.md explains the table)"
"$build_dir/bin/bench_inproc"
