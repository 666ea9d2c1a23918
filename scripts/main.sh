#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build Tessera, call every bundled plugin through the `tessera` command line
# with a sample payload, then measure the in-process call overhead.
#   scripts/main.sh            (BUILD_DIR may be overridden, as for setup.sh)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
export BUILD_DIR="$build_dir"

"$root/scripts/setup.sh"

# Where `tessera` is now: the Python package's console script (setup.sh
# installed it), the same command line as the build tree's bin/tessera.
python="${PYTHON:-python3}"
scripts_dir="$("$python" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
echo
if [[ "$(command -v tessera 2>/dev/null)" == "" ]]; then
  echo "== tessera is $scripts_dir/tessera (add $scripts_dir to PATH to type just 'tessera')"
else
  echo "== tessera is on PATH: $(command -v tessera) (pip's console script in $scripts_dir)"
fi

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

# The showcase: every bundled component in every mode, their gradients, a
# short MCMC chain, and the quick transport-cost table (bench/README.md).
export TESSERA_BUILD_DIR="$build_dir"

echo
echo "== every bundled component in every mode (bench/showcase.py)"
"$python" "$root/bench/showcase.py" --build "$build_dir"

echo
echo "== gradients against finite differences"
show check-gradients "$plugins/rosenbrock.so" '{"inputs": {"x": [0.5, 1.5, -0.3], "a": 1, "b": 100}}'
show check-gradients "$plugins/heat.so" '{"inputs": {"conductivity": [1, 1.2, 0.8, 1.5, 1, 0.9, 1.1, 1.3],
  "source": [1, 1, 1, 1, 1, 1, 1, 1], "initial_temperature": [0, 0, 0, 0, 0, 0, 0, 0],
  "observations": [0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1], "dt": 0.01, "steps": 20}}'

echo
echo "== a short MCMC chain (MALA on 2-D rosenbrock, one apply + one vjp per step)"
"$build_dir/bin/bench_mcmc" --steps 100000 --worker-steps 2000

echo
echo "== what a call costs in each mode, quick form (python3 bench/report.py for the full one)"
"$python" "$root/bench/report.py" --quick --out "$build_dir/bench/report-quick"

echo
echo "== Python components: a Tesseract's tesseract_api.py in its own environment"
show apply --mode worker "$root/plugins/python/cumsum_numpy2" '{"inputs": {"y": [1, 2, 3]}}'
"$python" "$root/bindings/python/examples/python_clash.py"

echo
echo "== tessera serve: a component behind Tesseract's REST API, called by tesseract-core's client"
port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$tessera" serve --quiet --port "$port" "$plugins/vectoradd.so" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
"$python" - "$port" <<'PY'
import sys, time
import numpy as np
import requests
from tesseract_core import Tesseract

url = f"http://127.0.0.1:{sys.argv[1]}"
for _ in range(100):
    try:
        if requests.get(url + "/health", timeout=1).ok:
            break
    except requests.ConnectionError:
        time.sleep(0.05)
t = Tesseract.from_url(url)
inputs = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([10.0, 20.0, 30.0]), "s": 2.0}
print(f"Tesseract.from_url({url!r}).available_endpoints = {t.available_endpoints}")
print(f"apply    -> {t.apply(inputs)}")
print(f"jacobian -> {t.jacobian(inputs, jac_inputs=['s'], jac_outputs=['result'])}")
PY
kill "$server"
wait "$server" 2>/dev/null || true
trap - EXIT

echo
echo "== the Tesseract paper's case study: shape optimisation through a FEM solve (docs/guides/shape-optimization.md)"
"$python" "$root/bindings/python/examples/shape_optimization/study.py" --out "$build_dir/shape_optimization"

echo
echo "== FMI 3.0 FMUs (docs/fmi.md): a Co-Simulation trajectory, a Model Exchange right-hand side and simulation"
fmus="$build_dir/fmu"
show apply "$fmus/spring.fmu" '{"inputs": {"t": [0, 0.5, 1.0, 1.5, 2.0], "k": 4, "c": 0.4}}'
show check-gradients "$fmus/vanderpol.fmu#rhs" '{"inputs": {"x": [0.5, -1.0], "mu": 2}}'
# Differences of an adaptive integration are as noisy as its tolerance:
# checked against them, the sensitivities need a tight one.
show check-gradients --config rtol=1e-10 "$fmus/vanderpol.fmu#simulate" \
  '{"inputs": {"t": [0, 0.5, 1.0, 1.5, 2.0], "mu": 1.5}}'

echo
echo "== an FMU inside JAX: fit the spring's stiffness and damping, then sample their posterior with MALA"
"$python" "$root/bindings/python/examples/fmu_fit/fit.py" --out "$build_dir/fmu_fit"

echo
echo "== second derivatives: a Hessian-vector product, then Newton (trust-ncg) with it (docs/guides/second-derivatives.md)"
show hvp "$plugins/rosenbrock.so" '{"inputs": {"x": [0.5, 1.5], "a": 1, "b": 100},
  "hvp_inputs": ["x"], "hvp_outputs": ["value"], "cotangent_vector": {"value": 1},
  "tangent_vector": {"x": [1, 0]}}'
"$python" "$root/bindings/python/examples/newton_trust_ncg.py"

echo
echo "== UM-Bridge: emcee samples a Tessera component's posterior through tessera serve (docs/guides/umbridge.md)"
"$python" "$root/bindings/python/examples/umbridge_emcee.py"
