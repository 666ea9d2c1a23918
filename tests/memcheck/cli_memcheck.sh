#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The command line end to end under valgrind memcheck: the bundled
# plugins' payloads in each response encoding, in process, isolated and in
# a worker (the worker process itself is not traced), then requests that
# fail. A memcheck error (invalid access, use of uninitialised memory, a
# definite or indirect leak) fails the run; so does an exit status other
# than the one expected.
#   cli_memcheck.sh TESSERA_CLI PLUGIN_DIR SOURCE_DIR
set -uo pipefail

cli=$1 plugins=$2 src=$3
payloads=$src/tests/payloads
matrix=$src/plugins/linear/example_matrix.txt
memcheck=(valgrind --quiet --error-exitcode=99 --leak-check=full
          --errors-for-leak-kinds=definite,indirect --trace-children=no)
runs=0 failed=0

# run ok|fail|any ARGS...: tessera ARGS under memcheck.
run() {
    local want=$1 out status
    shift
    runs=$((runs + 1))
    out=$("${memcheck[@]}" "$cli" "$@" 2>&1 >/dev/null)
    status=$?
    if ((status == 99)); then
        echo "memcheck found errors in: tessera $*"
    elif [[ $want == ok && $status -ne 0 ]] || [[ $want == fail && $status -eq 0 ]]; then
        echo "exit status $status ($want expected) of: tessera $*"
    else
        return 0
    fi
    echo "$out"
    failed=$((failed + 1))
}

# Valgrind before 3.20 does not know pidfd_open, without which no worker
# starts: worker-mode calls then fail cleanly, and are still checked for
# errors and leaks on that path.
worker_ok=ok
probe=$("${memcheck[@]}" "$cli" schema "$plugins/noop.so" --mode worker 2>&1 >/dev/null)
if [[ $probe == *"pidfd_open of the worker failed"* ]]; then
    echo "cli_memcheck: this valgrind lacks pidfd_open; worker mode is checked on its failure path"
    worker_ok=any
fi

for mode in inproc isolated worker; do
    ok=ok
    [[ $mode == worker ]] && ok=$worker_ok
    for format in json json+base64; do
        run $ok apply "$plugins/vectoradd.so" "@$payloads/vectoradd_apply.json" --mode "$mode" -f "$format"
        run $ok jvp "$plugins/rosenbrock.so" "@$payloads/rosenbrock_jvp.json" --mode "$mode" -f "$format"
        run $ok jacobian "$plugins/linear.so" "@$payloads/linear_jacobian.json" --mode "$mode" \
            -f "$format" --config "matrix=$matrix"
    done
    run $ok abstract-eval "$plugins/vectoradd.so" "@$payloads/vectoradd_apply.json" --mode "$mode"
    run $ok schema "$plugins/heat.so" --mode "$mode"
    # refused: shapes that disagree, malformed JSON, a plugin that fails
    run fail apply "$plugins/vectoradd.so" '{"inputs": {"a": [1], "b": [1, 2], "s": 1}}' --mode "$mode"
    run fail apply "$plugins/vectoradd.so" '{"inputs": {"a": [1' --mode "$mode"
    run fail apply "$plugins/linear.so" '{"inputs": {"x": [1, 2]}}' --mode "$mode" --config "matrix=$matrix"
done
run fail apply /nonexistent/plugin.so '{"inputs": {}}'

echo "cli_memcheck: $runs runs under memcheck, $failed failed"
((failed == 0))
