#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install test: configure, build and install Tessera into a temporary
# prefix, then build plugins/first_plugin against the installed package in
# both supported ways (CMake find_package, pkg-config) and check what the
# example host and the installed `tessera` command print.
#   tests/install/test_install.sh        (KEEP=1 keeps the temporary folder)
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tessera-install.XXXXXX")"
# shellcheck source=../shell_checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../shell_checks.sh"
if [[ "${KEEP:-0}" == 1 ]]; then
  echo "keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi
prefix="$work/prefix"
# The version, written once: project(tessera VERSION ...) in CMakeLists.txt.
version="$(sed -nE 's/^project\(tessera VERSION ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' "$root/CMakeLists.txt")"
IFS=. read -r v_major v_minor _ <<<"$version"
jobs="$(nproc 2>/dev/null || echo 2)"

summary() {
  echo "$passed passed, $failed failed"
  ((failed == 0))
}


# expect NAME EXPECTED-FILE CMD...: CMD must succeed and print every line of
# EXPECTED-FILE (other lines may come between).
expect() {
  local name="$1" want="$2" ok=1 line; shift 2
  "$@" >"$work/out" 2>"$work/err" || ok=0
  while ((ok)) && IFS= read -r line; do
    grep -qxF -- "$line" "$work/out" || ok=0
  done <"$want"
  if ((ok)); then
    passed=$((passed + 1)); echo "ok    $name"
  else
    failed=$((failed + 1)); echo "FAIL  $name"
    echo "      expected lines:"; sed 's/^/        /' "$want"
    echo "      got:"; cat "$work/out" "$work/err" | tail -n 20 | sed 's/^/        /'
  fi
}

# ---- install ------------------------------------------------------------------
check "configure" cmake -S "$root" -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DTESSERA_BUILD_TESTS=OFF -DTESSERA_BUILD_BENCH=OFF
check "build" cmake --build "$work/build" -j"$jobs"
check "install" cmake --install "$work/build"
if ((failed)); then summary; exit 1; fi

libso="$(find "$prefix" -name 'libtessera.so' | head -n 1)"
libdir="$(dirname "${libso:-$prefix/lib/none}")"
for f in include/tessera/tessera.h include/tessera/plugin.h include/tessera/version.h bin/tessera; do
  check "installed $f" test -e "$prefix/$f"
done
for f in libtessera.so libtessera.a pkgconfig/tessera.pc pkgconfig/tessera-plugin.pc cmake/tessera/tesseraConfig.cmake \
         cmake/tessera/tesseraConfigVersion.cmake cmake/tessera/tesseraTargets.cmake \
         tessera/plugins/noop.so tessera/plugins/rdstep.json tessera/plugins/librdstep.so \
         tessera/plugins/dgesv.json tessera/plugins/dgemv.json; do
  check "installed <libdir>/$f" test -e "$libdir/$f"
done

# The soname follows the policy of docs/guides/c-hosts.md: 0.MINOR while 0.x, MAJOR after.
if ((v_major == 0)); then soname="libtessera.so.0.$v_minor"; else soname="libtessera.so.$v_major"; fi
check "soname is $soname" bash -c "readelf -d '$libso' | grep -qF '[$soname]'"
# The installed headers alone (version.h included) give the exported names.
check "the libraries export the public API and nothing else" "$root/tests/check_exports.sh" \
  cc "$prefix/include" "$prefix/include" "$libso" "$libdir/libtessera.a" nm \
  "$root/cmake/libtessera.map" "TESSERA_$v_major.$v_minor"

# What the example host prints for x = [1 2 3], alpha = 2.5.
printf '%s\n' 'y = [2.5 5 7.5]' 'd(sum y)/d alpha = 6' >"$work/host.expected"

# ---- CMake package ------------------------------------------------------------
ex="$work/first_plugin"
cp -r "$root/plugins/first_plugin" "$ex"
rm -rf "$ex/build"
check "find_package: configure" cmake -S "$ex" -B "$ex/build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror"
check "find_package: build" cmake --build "$ex/build" -j"$jobs"
expect "find_package: host (shared)" "$work/host.expected" "$ex/build/first_host" "$ex/build/scale.so"
expect "find_package: host (static)" "$work/host.expected" \
  "$ex/build/first_host_static" "$ex/build/scale.so"
check "static host does not need libtessera.so" \
  bash -c "! readelf -d '$ex/build/first_host_static' | grep -q 'libtessera'"
# The version file admits the same minor only (0.x minors may break the API).
next_minor="$v_major.$((v_minor + 1))"
mkdir -p "$work/ver"
printf 'cmake_minimum_required(VERSION 3.20)\nproject(ver C)\nfind_package(tessera %s REQUIRED)\n' \
  "$next_minor" >"$work/ver/CMakeLists.txt"
check "find_package(tessera $next_minor) is refused" \
  bash -c "! cmake -S '$work/ver' -B '$work/ver/build' -DCMAKE_PREFIX_PATH='$prefix'"

# ---- pkg-config -----------------------------------------------------------------
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pc="$work/pc"
cp -r "$root/plugins/first_plugin" "$pc"
rm -rf "$pc/build"
printf '%s\n' "$version" >"$work/version.expected"
expect "pkg-config: version" "$work/version.expected" pkg-config --modversion tessera
check "pkg-config: make" make -C "$pc" CFLAGS="-O2 -Wall -Wextra -Werror"
expect "pkg-config: host (shared)" "$work/host.expected" "$pc/first_host" "$pc/scale.so"
# The one-line build docs/guides/c-plugins.md shows, and a static link with --static.
check "pkg-config: one-line build" bash -c "cc '$pc/host.c' -o '$pc/host_oneline' \
  \$(pkg-config --cflags --libs tessera) -Wl,-rpath,\$(pkg-config --variable=libdir tessera)"
expect "pkg-config: one-line host" "$work/host.expected" "$pc/host_oneline" "$pc/scale.so"
static_libs="$(pkg-config --static --libs tessera | sed 's/-ltessera\b//')"
check "pkg-config: static link" bash -c "cc '$pc/host.c' -o '$pc/host_static' \
  \$(pkg-config --cflags tessera) '$libdir/libtessera.a' $static_libs"
expect "pkg-config: static host" "$work/host.expected" "$pc/host_static" "$pc/scale.so"
# A host with functions named as the library's internal ones links beside
# libtessera.a (which exports the public tsr_ functions only) and runs, in
# process and in a worker, each side calling its own; beside libtessera.so too.
printf '%s\n' "host: arena_alloc(1) = 2, call_fail() = 42, the host's find_field" \
  "inproc: y = [2.5 5 7.5], library $version" >"$work/clash_inproc.expected"
printf '%s\n' "host: arena_alloc(1) = 2, call_fail() = 42, the host's find_field" \
  "worker: y = [2.5 5 7.5], library $version" >"$work/clash_worker.expected"
check "host with internal names: static link" bash -c "cc -std=c11 -Wall -Wextra -Werror \
  '$root/tests/install/host_clash.c' -o '$pc/host_clash_static' \$(pkg-config --cflags tessera) \
  '$libdir/libtessera.a' $static_libs"
expect "host with internal names: static, inproc" "$work/clash_inproc.expected" \
  "$pc/host_clash_static" "$pc/scale.so" inproc
expect "host with internal names: static, worker" "$work/clash_worker.expected" \
  "$pc/host_clash_static" "$pc/scale.so" worker
check "host with internal names: shared link" bash -c "cc -std=c11 -Wall -Wextra -Werror \
  '$root/tests/install/host_clash.c' -o '$pc/host_clash' \$(pkg-config --cflags --libs tessera) \
  -Wl,-rpath,\$(pkg-config --variable=libdir tessera)"
expect "host with internal names: shared, worker" "$work/clash_worker.expected" \
  "$pc/host_clash" "$pc/scale.so" worker

# ---- the installed command line ------------------------------------------------
# The values of every "buffer" in a JSON response, one per line (expect
# compares lines).
buffer_lines() { buffer_values | tr ' ' '\n'; }
export -f buffer_values buffer_lines
tessera="$prefix/bin/tessera"
check "tessera --version" "$tessera" --version
printf '%s\n' 2.5 5 7.5 >"$work/cli.expected"
expect "tessera apply scale.so" "$work/cli.expected" bash -c \
  "'$tessera' apply '$ex/build/scale.so' '{\"inputs\": {\"x\": [1, 2, 3], \"alpha\": 2.5}}' \
   | buffer_lines"
printf '%s\n' 6 >"$work/vjp.expected"
expect "tessera vjp scale.so" "$work/vjp.expected" bash -c \
  "'$tessera' vjp '$ex/build/scale.so' '{\"inputs\": {\"x\": [1, 2, 3], \"alpha\": 2.5},
     \"vjp_inputs\": [\"alpha\"], \"vjp_outputs\": [\"y\"],
     \"cotangent_vector\": {\"y\": [1, 1, 1]}}' | buffer_lines"
printf '%s\n' 4 -1 0.5 >"$work/noop.expected"
expect "tessera apply <libdir>/tessera/plugins/noop.so" "$work/noop.expected" bash -c \
  "'$tessera' apply '$libdir/tessera/plugins/noop.so' '{\"inputs\": {\"x\": [4, -1, 0.5]}}' \
   | buffer_lines"
# A manifest component: the Fortran routine installed beside its manifest,
# and LAPACK's dgesv from the system.
printf '%s\n' 0.1249 0.4775 -0.2723 >"$work/rdstep.expected"
expect "tessera apply <libdir>/tessera/plugins/rdstep.json" "$work/rdstep.expected" bash -c \
  "'$tessera' apply '$libdir/tessera/plugins/rdstep.json' \
     '{\"inputs\": {\"u\": [0.1, 0.5, -0.3], \"dt\": 0.1, \"k\": 0.5}}' | buffer_lines"
printf '%s\n' 0.1 0.6 >"$work/dgesv.expected"
expect "tessera apply <libdir>/tessera/plugins/dgesv.json" "$work/dgesv.expected" bash -c \
  "'$tessera' apply '$libdir/tessera/plugins/dgesv.json' \
     '{\"inputs\": {\"a\": [[4, 1], [2, 3]], \"b\": [1, 2]}}' | buffer_lines"

# ---- installed with another --prefix than configured ---------------------------
# `cmake --install --prefix ELSEWHERE` of the same build, with the configured
# prefix hidden meanwhile: tessera-worker is found relative to libtessera.so
# (the command line, a shared host) or to the executable of a static host in
# ELSEWHERE/bin, also when that host is started by a bare name through PATH
# from a directory holding another "tessera-worker" (never looked for there);
# a static host outside any prefix fails with an error that names
# TESSERA_WORKER and worker_exe, and works with TESSERA_WORKER set.
other="$work/elsewhere"
check "install --prefix <elsewhere>" cmake --install "$work/build" --prefix "$other"
mv "$prefix" "$prefix.hidden"
other_so="$(find "$other" -name 'libtessera.so' | head -n 1)"
other_libdir="$(dirname "${other_so:-$other/lib/none}")"
other_worker="$(find "$other" -type f -name 'tessera-worker' | head -n 1)"
other_libs="$(PKG_CONFIG_PATH="$other_libdir/pkgconfig" pkg-config --static --libs tessera |
  sed 's/-ltessera\b//')"
printf '%s\n' 4 -1 0.5 >"$work/noop.expected"
expect "elsewhere: tessera apply --mode worker" "$work/noop.expected" bash -c \
  "'$other/bin/tessera' apply --mode worker '$other_libdir/tessera/plugins/noop.so' \
     '{\"inputs\": {\"x\": [4, -1, 0.5]}}' | buffer_lines"
check "elsewhere: shared host" bash -c "cc -std=c11 '$root/tests/install/host_clash.c' \
  -o '$work/host_clash_elsewhere' -I'$other/include' -L'$other_libdir' -ltessera \
  -Wl,-rpath,'$other_libdir'"
expect "elsewhere: shared host, worker" "$work/clash_worker.expected" \
  "$work/host_clash_elsewhere" "$pc/scale.so" worker
check "elsewhere: static host in <elsewhere>/bin" bash -c "cc -std=c11 \
  '$root/tests/install/host_clash.c' -o '$other/bin/host_clash_static' -I'$other/include' \
  '$other_libdir/libtessera.a' $other_libs"
mkdir -p "$work/plant"
printf '#!/bin/sh\ntouch "%s"\nexit 1\n' "$work/plant/ran" >"$work/plant/tessera-worker"
chmod +x "$work/plant/tessera-worker"
expect "elsewhere: static host, by name through PATH, worker" "$work/clash_worker.expected" \
  bash -c "cd '$work/plant' && PATH='$other/bin':\"\$PATH\" host_clash_static '$pc/scale.so' worker"
check "elsewhere: no tessera-worker of the working directory was run" test ! -e "$work/plant/ran"
check "static host outside any prefix: the error names TESSERA_WORKER and worker_exe" bash -c \
  "! '$pc/host_clash_static' '$pc/scale.so' worker 2>'$work/noworker.err' &&
   grep -F TESSERA_WORKER '$work/noworker.err' && grep -F worker_exe '$work/noworker.err'"
expect "static host outside any prefix, TESSERA_WORKER set" "$work/clash_worker.expected" \
  env TESSERA_WORKER="$other_worker" "$pc/host_clash_static" "$pc/scale.so" worker
mv "$prefix.hidden" "$prefix"

summary
