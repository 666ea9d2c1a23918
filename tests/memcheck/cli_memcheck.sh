#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The command line end to end under valgrind memcheck: every command on one
# bundled component of each backend (a plugin, a manifest, a Python
# component, a served component reached by URL), in each mode the command
# takes, with requests that fail next to those that succeed (error paths
# leak most). A memcheck error (invalid access, use of uninitialised
# memory, a definite or indirect leak) in any traced process fails the run;
# so does an exit status other than the one expected.
#   cli_memcheck.sh TESSERA_CLI PLUGIN_DIR SOURCE_DIR [short|full]
# short (ctest cli_memcheck) runs every command once on the plugin and a
# few on each other backend; full (scripts/memcheck_cli.sh) runs the whole
# matrix: every command on every backend in every mode.
set -uo pipefail

cli=$1 plugins=$2 src=$3 form=${4:-short}
here=$(cd "$(dirname "$0")" && pwd)
payloads=$src/tests/payloads
matrix=$src/plugins/linear/example_matrix.txt
tmp=$(mktemp -d /tmp/cli_memcheck.XXXXXX)
server_pid=
cleanup() {
    [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

# Each process writes its own log (%p), so a traced worker's findings are
# read as well as the command's. memcheck.supp says why each entry is there.
memcheck=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect
          --suppressions="$here/memcheck.supp" --child-silent-after-fork=yes)
runs=0 failed=0 start=$SECONDS

# Valgrind before 3.20 does not know pidfd_open, without which no worker
# starts (the host needs a pidfd of the worker, the worker one of the
# host): worker mode is then checked on its failure path only, the worker
# itself untraced. A valgrind that knows it traces the workers too.
trace=(--trace-children=no)
worker_ok=ok
probe=$(valgrind --trace-children=yes "$cli" schema "$plugins/noop.so" --mode worker 2>&1 >/dev/null)
if [[ $probe == *"pidfd_open of the worker failed"* ]]; then
    echo "cli_memcheck: this valgrind lacks pidfd_open; worker mode is checked on its failure path"
    worker_ok=any
else
    trace=(--trace-children=yes "--trace-children-skip=*/python*,*/pip*,/bin/*,/usr/bin/*")
fi

# check WANT LOGDIR STATUS WHAT: judge one finished run by its status and
# by every memcheck log it left (the command's and its children's).
check() {
    local want=$1 dir=$2 status=$3 what=$4 bad
    bad=$(grep -L "ERROR SUMMARY: 0 errors" "$dir"/vg.* 2>/dev/null)
    if [[ -n $bad ]] || ((status == 99)); then
        echo "memcheck found errors in: $what"
        for f in $bad; do
            grep -A24 -E "== (Invalid|Conditional|Use of|Syscall param|Mismatched|Source and|[0-9,]+ (\(.*\) )?bytes in [0-9,]+ blocks are (definitely|indirectly))" "$f" | head -80
        done
    elif [[ $want == ok && $status -ne 0 ]] || [[ $want == fail && $status -eq 0 ]]; then
        echo "exit status $status ($want expected) of: $what"
        cat "$dir/err"
    else
        return 0
    fi
    failed=$((failed + 1))
}

# run ok|fail|any ARGS...: tessera ARGS under memcheck, its stdout in $tmp/out.
run() {
    local want=$1 dir status
    shift
    runs=$((runs + 1))
    dir=$tmp/run$runs
    mkdir -p "$dir"
    "${memcheck[@]}" "${trace[@]}" --log-file="$dir/vg.%p" "$cli" "$@" >"$tmp/out" 2>"$dir/err" </dev/null
    status=$?
    check "$want" "$dir" "$status" "tessera $*"
}

# serve WANT SIGNAL COMPONENT ARGS...: tessera serve under memcheck, a few
# requests good and bad, then stopped by SIGNAL as a user stops it.
serve() {
    local want=$1 sig=$2 comp=$3 dir pid port status url
    shift 3
    runs=$((runs + 1))
    dir=$tmp/run$runs
    mkdir -p "$dir"
    "${memcheck[@]}" "${trace[@]}" --log-file="$dir/vg.%p" "$cli" serve "$comp" --port 0 "$@" \
        >/dev/null 2>"$dir/err" </dev/null &
    pid=$!
    port=
    for ((i = 0; i < 1200; i++)); do
        port=$(sed -n 's|.* on http://127.0.0.1:\([0-9]*\) .*|\1|p' "$dir/err" 2>/dev/null)
        [[ -n $port ]] || ! kill -0 "$pid" 2>/dev/null && break
        sleep 0.1
    done
    if [[ -n $port ]]; then
        url=http://127.0.0.1:$port
        curl -sS -o /dev/null "$url/health"
        curl -sS -o /dev/null "$url/openapi.json"
        curl -sS -o /dev/null "$url/docs"
        curl -sS -o /dev/null -H 'Content-Type: application/json' -d "{\"inputs\": $inputs}" "$url/apply"
        curl -sS -o /dev/null -H 'Content-Type: application/json' \
            -H 'Accept: application/json+base64' -d "{\"inputs\": $inputs}" "$url/apply"
        curl -sS -o /dev/null -H 'Content-Type: application/json' -d '{"inputs": {"x": [1' "$url/apply"
        curl -sS -o /dev/null -H 'Content-Type: application/json' -d '{"inputs": {}}' "$url/apply"
        curl -sS -o /dev/null "$url/no_such_endpoint"
        kill -s "$sig" "$pid"
    else
        kill "$pid" 2>/dev/null
    fi
    wait "$pid"
    status=$?
    check "$want" "$dir" "$status" "tessera serve $comp $* (stopped by SIG$sig)"
}

# The payloads of one component: inputs, and the derivative requests
# built from them.
payloads_for() {
    inputs=$1 wrt=$2 out=$3 seed=$4 cot=$5 abstract=$6
    apply="{\"inputs\": $inputs}"
    jvp="{\"inputs\": $inputs, \"jvp_inputs\": [\"$wrt\"], \"jvp_outputs\": [\"$out\"], \"tangent_vector\": {\"$wrt\": $seed}}"
    vjp="{\"inputs\": $inputs, \"vjp_inputs\": [\"$wrt\"], \"vjp_outputs\": [\"$out\"], \"cotangent_vector\": {\"$out\": $cot}}"
    jac="{\"inputs\": $inputs, \"jac_inputs\": [\"$wrt\"], \"jac_outputs\": [\"$out\"]}"
    aeval="{\"inputs\": $abstract}"
}

# A regression case for `tessera test`: the answer of apply, run
# untraced, is the expected output; a second case expects a refusal.
write_cases() {
    local comp=$1 dir=$2
    mkdir -p "$dir"
    printf '{"endpoint": "apply", "payload": %s, "expected_outputs": %s}\n' \
        "$apply" "$("$cli" apply "$comp" "$apply")" >"$dir/apply.json"
    printf '{"endpoint": "apply", "payload": {"inputs": {}}, "expected_exception": "pydantic.ValidationError"}\n' \
        >"$dir/refused.json"
}

# calls COMPONENT MODE_ARGS...: every call command on one component, good
# requests and bad ones.
calls() {
    local comp=$1
    shift
    run ok schema "$comp" "$@"
    run ok apply "$comp" "$apply" "$@"
    run ok apply "$comp" "$apply" -f json+base64 "$@"
    run ok jvp "$comp" "$jvp" "$@"
    run ok vjp "$comp" "$vjp" "$@"
    run ok jacobian "$comp" "$jac" "$@"
    run ok abstract-eval "$comp" "$aeval" "$@"
    run fail apply "$comp" '{"inputs": {"x": [1' "$@"
    run fail apply "$comp" '{"inputs": {}}' "$@"
    run fail vjp "$comp" "{\"inputs\": $inputs, \"vjp_inputs\": [\"nope\"], \"vjp_outputs\": [], \"cotangent_vector\": {}}" "$@"
    run fail apply "$comp" "@$tmp/no/such/payload.json" "$@"
}

# tools COMPONENT MODE_ARGS...: the commands that judge a component.
tools() {
    local comp=$1
    shift
    run ok check-gradients "$comp" "$apply" "$@"
    run ok test "$comp" "$cases/apply.json" "$cases/refused.json" "$@"
    run fail test "$comp" "$tmp/no/such/case.json" "$@"
    run ok docs "$comp" -o "$tmp/page.html" "$@"
}

modes=(inproc)
[[ $form == full ]] && modes=(inproc isolated worker)
mode_ok() { [[ $1 == worker ]] && echo "$worker_ok" || echo ok; }

# --- commands that take no component, and usage errors -------------------
run ok help
run ok help apply
run ok help options
run ok --version
run ok info
run ok config --prefix --cflags --libs --cmake-dir
run ok init "$tmp/init_plugin" --kind plugin
run fail init "$tmp/init_plugin" --kind plugin
run fail init "$tmp/init_bad" --kind cobol
run fail config --no-such-option
run fail no-such-command
run fail apply --no-such-option "$plugins/rosenbrock.so" '{}'
run fail apply /nonexistent/plugin.so '{"inputs": {}}'
if [[ $form == full ]]; then
    for c in schema info apply jvp vjp jacobian abstract-eval check-gradients check-manifest \
        test docs serve init config; do
        run ok "$c" --help
    done
    run ok init "$tmp/init_python" --kind python
    run ok init "$tmp/init_manifest" --kind manifest
fi

# --- a plugin ---------------------------------------------------------------
plugin=$plugins/rosenbrock.so
payloads_for '{"x": [1.0, 2.0, 0.5], "a": 1.0, "b": 100.0}' x value '[1.0, 0.0, 0.5]' 1.0 \
    '{"x": {"shape": [3], "dtype": "float64"}, "a": {"shape": [], "dtype": "float64"}, "b": {"shape": [], "dtype": "float64"}}'
plugin_inputs=$inputs
cases=$tmp/cases_plugin
write_cases "$plugin" "$cases"
for mode in "${modes[@]}"; do
    want=$(mode_ok "$mode")
    if [[ $want == ok ]]; then
        calls "$plugin" --mode "$mode"
        tools "$plugin" --mode "$mode"
    else
        run any apply "$plugin" "$apply" --mode "$mode"
        run any test "$plugin" "$cases/apply.json" --mode "$mode"
    fi
    serve "$want" TERM "$plugin" --mode "$mode"
done
serve ok INT "$plugin" --quiet
# the older matrix: each response encoding, shapes that disagree, a plugin
# that refuses its payload
for mode in "${modes[@]}"; do
    ok=$(mode_ok "$mode")
    for format in json json+base64; do
        run $ok apply "$plugins/vectoradd.so" "@$payloads/vectoradd_apply.json" --mode "$mode" -f "$format"
        run $ok jacobian "$plugins/linear.so" "@$payloads/linear_jacobian.json" --mode "$mode" \
            -f "$format" --config "matrix=$matrix"
    done
    run fail apply "$plugins/vectoradd.so" '{"inputs": {"a": [1], "b": [1, 2], "s": 1}}' --mode "$mode"
    run fail apply "$plugins/linear.so" '{"inputs": {"x": [1, 2]}}' --mode "$mode" --config "matrix=$matrix"
done

# --- a manifest ---------------------------------------------------------------
manifest=$plugins/rdstep.json
payloads_for '{"u": [0.1, 0.2, 0.3, 0.4], "dt": 0.01, "k": 0.5}' u u_next '[1.0, 0.0, 0.0, 0.0]' \
    '[1.0, 1.0, 1.0, 1.0]' \
    '{"u": {"shape": [4], "dtype": "float64"}, "dt": {"shape": [], "dtype": "float64"}, "k": {"shape": [], "dtype": "float64"}}'
cases=$tmp/cases_manifest
write_cases "$manifest" "$cases"
# check-manifest runs the routine in a worker
run "$worker_ok" check-manifest "$manifest"
run "$worker_ok" check-manifest "$manifest" "$apply"
run fail check-manifest "$tmp/no/such/manifest.json"
if [[ $form == full ]]; then
    for mode in "${modes[@]}"; do
        want=$(mode_ok "$mode")
        if [[ $want == ok ]]; then
            calls "$manifest" --mode "$mode"
            tools "$manifest" --mode "$mode"
        else
            run any apply "$manifest" "$apply" --mode "$mode"
        fi
    done
    serve ok TERM "$manifest"
else
    run ok apply "$manifest" "$apply"
    run ok vjp "$manifest" "$vjp"
    run ok jvp "$manifest" "$jvp"
    run fail apply "$manifest" '{"inputs": {"u": [1, 2], "dt": "x", "k": 1}}'
fi

# --- a Python component (the embedded CPython) ------------------------------
# PYTHONMALLOC=malloc: every Python object is a malloc block memcheck
# tracks, instead of a pymalloc arena it cannot see into.
python_comp=$src/tests/pycomponents/affine
payloads_for '{"x": [1.0, 2.0, 3.0], "a": 2.0}' x y '[1.0, 0.0, 0.0]' '[1.0, 1.0, 1.0]' \
    '{"x": {"shape": [3], "dtype": "float64"}, "a": {"shape": [], "dtype": "float64"}}'
export PYTHONMALLOC=malloc
if [[ $form == full ]]; then
    cases=$tmp/cases_python
    write_cases "$python_comp" "$cases"
    calls "$python_comp" --mode inproc
    tools "$python_comp" --mode inproc
    serve ok TERM "$python_comp"
else
    run ok apply "$python_comp" "$apply"
    run fail apply "$python_comp" '{"inputs": {"x": "no"}}'
fi
unset PYTHONMALLOC

# --- a served component, by URL (the server itself untraced) ----------------
payloads_for "$plugin_inputs" x value '[1.0, 0.0, 0.5]' 1.0 \
    '{"x": {"shape": [3], "dtype": "float64"}, "a": {"shape": [], "dtype": "float64"}, "b": {"shape": [], "dtype": "float64"}}'
"$cli" serve "$plugin" --port 0 --quiet 2>"$tmp/server.err" &
server_pid=$!
port=
for ((i = 0; i < 300; i++)); do
    port=$(sed -n 's|.* on http://127.0.0.1:\([0-9]*\) .*|\1|p' "$tmp/server.err")
    [[ -n $port ]] && break
    sleep 0.1
done
url=http://127.0.0.1:$port
cases=$tmp/cases_remote
write_cases "$url" "$cases"
if [[ $form == full ]]; then
    calls "$url"
    tools "$url"
else
    run ok schema "$url"
    run ok apply "$url" "$apply"
    run ok vjp "$url" "$vjp"
    run fail apply "$url" '{"inputs": {}}'
fi
kill "$server_pid"
wait "$server_pid" 2>/dev/null
server_pid=
run fail apply "$url" "$apply"   # nobody listens there any more

echo "cli_memcheck ($form): $runs runs under memcheck in $((SECONDS - start)) s, $failed failed"
((failed == 0))
