#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Building against Tessera where it is: a plugin (plugins/first_plugin,
# copied) built against the build tree by find_package and by pkg-config,
# and `tessera config` answering for the build tree, for an install prefix
# (also once moved) and refusing bad command lines. Each CASE is one ctest
# test (tests/CMakeLists.txt):
#   tests/sdk/test_sdk.sh CASE SOURCE_DIR BUILD_DIR CLI
set -uo pipefail

case_name="$1" src="$2" build="$3" cli="$4"
work="$(mktemp -d "${TMPDIR:-/tmp}/tessera-sdk.XXXXXX")"
# shellcheck source=../shell_checks.sh
source "$(dirname "${BASH_SOURCE[0]}")/../shell_checks.sh"
trap 'rm -rf "$work"' EXIT




# loads TESSERA PLUGIN LABEL: the plugin is called by that command line in
# process and in a worker, with the results of scale.c (y = alpha x).
loads() {
  local t="$1" so="$2" label="$3" mode out
  for mode in inproc worker; do
    out="$("$t" apply --mode "$mode" "$so" '{"inputs": {"x": [1, 2, 3], "alpha": 2.5}}' |
      buffer_values)"
    same "$label: tessera apply --mode $mode" "$out" "2.5 5 7.5"
  done
}

host_expected=$'y = [2.5 5 7.5]\nd(sum y)/d alpha = 6'
plugin="$work/first_plugin"
cp -r "$src/plugins/first_plugin" "$plugin"
rm -rf "$plugin/build"

# The paths that `tessera config` gives must be there: -I dirs with the
# headers, -L with the library, the CMake dir with tesseraConfig.cmake.
config_paths_exist() {
  local t="$1" word
  for word in $("$t" config --cflags); do
    [[ "$word" == -I* ]] && [[ -d "${word#-I}" ]] || { echo "bad --cflags word $word"; return 1; }
  done
  [[ -e "$(echo $("$t" config --cflags) | sed 's/^-I//; s/ .*//')/tessera/plugin.h" ]] || return 1
  local inc found=0
  for inc in $("$t" config --cflags); do [[ -e "${inc#-I}/tessera/version.h" ]] && found=1; done
  ((found)) || { echo "no version.h under --cflags"; return 1; }
  local libs; libs="$("$t" config --libs)"
  [[ "$libs" == "-L"*" -Wl,-rpath,"*" -ltessera" ]] || { echo "bad --libs $libs"; return 1; }
  libs="${libs#-L}"
  [[ -e "${libs%% *}/libtessera.so" ]] || { echo "no libtessera.so in ${libs%% *}"; return 1; }
  [[ -e "$("$t" config --cmake-dir)/tesseraConfig.cmake" ]] || return 1
  [[ -e "$("$t" config --pkgconfig-dir)/tessera.pc" ]] || return 1
  [[ -e "$("$t" config --pkgconfig-dir)/tessera-plugin.pc" ]] || return 1
}

# with_config TESSERA LABEL: a plugin and a host built with the flags of
# `tessera config`, and first_plugin configured with --cmake-args.
with_config() {
  local t="$1" label="$2"
  check "$label: every path tessera config gives exists" config_paths_exist "$t"
  same "$label: --cmake-args is -Dtessera_DIR=<cmake-dir>" "$("$t" config --cmake-args)" \
    "-Dtessera_DIR=$("$t" config --cmake-dir)"
  same "$label: values on one line in the order asked" "$("$t" config --cmake-dir --prefix)" \
    "$("$t" config --cmake-dir) $("$t" config --prefix)"
  check "$label: plugin built with \$(tessera config --cflags --libs)" bash -c \
    "cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden -o '$work/$label-scale.so' \
       '$plugin/scale.c' \$('$t' config --cflags --libs) -lm"
  loads "$t" "$work/$label-scale.so" "$label"
  check "$label: host built with \$(tessera config --cflags --libs)" bash -c \
    "cc -std=c11 -Wall -Werror -o '$work/$label-host' '$plugin/host.c' \$('$t' config --cflags --libs)"
  same "$label: the host runs" "$("$work/$label-host" "$work/$label-scale.so" 2>&1)" "$host_expected"
  check "$label: cmake \$(tessera config --cmake-args) configures and builds first_plugin" bash -c \
    "cmake -S '$plugin' -B '$work/$label-cmake' \$('$t' config --cmake-args) &&
     cmake --build '$work/$label-cmake'"
}

case "$case_name" in
build_tree_find_package)
  check "find_package(tessera) with CMAKE_PREFIX_PATH=<build>: configure" \
    cmake -S "$plugin" -B "$plugin/build" -DCMAKE_PREFIX_PATH="$build" -DCMAKE_C_FLAGS="-Wall -Wextra -Werror"
  check "find_package(tessera) with CMAKE_PREFIX_PATH=<build>: build" cmake --build "$plugin/build"
  check "the package found is the build tree's" \
    grep -qxF "tessera_DIR:PATH=$build/lib/cmake/tessera" "$plugin/build/CMakeCache.txt"
  same "host (shared)" "$("$plugin/build/first_host" "$plugin/build/scale.so" 2>&1)" "$host_expected"
  same "host (static)" "$("$plugin/build/first_host_static" "$plugin/build/scale.so" 2>&1)" \
    "$host_expected"
  loads "$cli" "$plugin/build/scale.so" "find_package plugin"
  ;;
build_tree_pkg_config)
  export PKG_CONFIG_PATH="$build/lib/pkgconfig"
  same "pkg-config --cflags tessera: the sources' and the build's headers" \
    "$(echo $(pkg-config --cflags tessera))" "-I$src/include -I$build/include"
  same "pkg-config --libs tessera: the build's library" "$(echo $(pkg-config --libs tessera))" \
    "-L$build/lib -ltessera"
  same "pkg-config --variable=plugindir tessera: the build's plugins" \
    "$(pkg-config --variable=plugindir tessera)" "$build/plugins"
  check "make with PKG_CONFIG_PATH=<build>/lib/pkgconfig" make -C "$plugin" CFLAGS="-O2 -Wall -Wextra -Werror"
  same "host" "$("$plugin/first_host" "$plugin/scale.so" 2>&1)" "$host_expected"
  loads "$cli" "$plugin/scale.so" "pkg-config plugin"
  ;;
config_build_tree)
  same "--prefix is the build tree" "$("$cli" config --prefix)" "$(realpath "$build")"
  same "--cmake-dir is <build>/lib/cmake/tessera" "$("$cli" config --cmake-dir)" \
    "$(realpath "$build")/lib/cmake/tessera"
  same "--cflags: the sources' include/ and the build's" "$("$cli" config --cflags)" \
    "-I$(realpath "$src")/include -I$(realpath "$build")/include"
  with_config "$cli" build-tree
  ;;
config_install_prefix)
  prefix="$work/prefix"
  check "cmake --install <build> --prefix P --component tessera_sdk" \
    cmake --install "$build" --prefix "$prefix" --component tessera_sdk
  t="$prefix/bin/tessera"
  same "--prefix is P" "$("$t" config --prefix)" "$(realpath "$prefix")"
  same "--cflags is -IP/include" "$("$t" config --cflags)" "-I$(realpath "$prefix")/include"
  with_config "$t" prefix
  # Moved as a whole, the install answers for its new place, and its
  # command line still finds libtessera and tessera-worker.
  mv "$prefix" "$work/moved"
  t="$work/moved/bin/tessera"
  same "moved: --prefix follows the move" "$("$t" config --prefix)" "$(realpath "$work/moved")"
  check "moved: every path exists" config_paths_exist "$t"
  loads "$t" "$work/prefix-scale.so" "moved"
  # A Python component in a worker: the worker finds the bridge from its
  # own place (libexec/tessera), not at the configured prefix.
  if [[ -e "$(find "$work/moved" -name 'libtessera-python.so' | head -n 1)" ]]; then
    for mode in inproc worker; do
      same "moved: a Python component, --mode $mode" "$("$t" apply --mode "$mode" \
        "$src/tests/pycomponents/affine" '{"inputs": {"x": [1, 2], "a": 2}}' | buffer_values)" "3 5"
    done
  fi
  ;;
config_usage_errors)
  # expect_status NAME STATUS STDERR-NEEDLE ARGS...: the status, nothing
  # on stdout, the needle on stderr.
  expect_status() {
    local name="$1" want="$2" needle="$3" rc; shift 3
    "$@" >"$work/out" 2>"$work/err"; rc=$?
    if ((rc == want)) && [[ ! -s "$work/out" ]] && grep -qF -- "$needle" "$work/err"; then
      passed=$((passed + 1)); echo "ok    $name"
    else
      failed=$((failed + 1)); echo "FAIL  $name (status $rc, want $want)"
      cat "$work/out" "$work/err" | sed 's/^/      /'
    fi
  }
  expect_status "an unknown option is a usage error" 2 "unknown option '--bogus'" \
    "$cli" config --bogus
  expect_status "an unknown option after a good one is a usage error" 2 "unknown option '--lbs'" \
    "$cli" config --cflags --lbs
  expect_status "no option is a usage error naming the options" 2 "--cmake-dir" "$cli" config
  expect_status "an argument is a usage error" 2 "unexpected argument 'extra'" \
    "$cli" config --prefix extra
  expect_status "an option with a value is a usage error" 2 "--prefix" "$cli" config --prefix=/usr
  check "--help describes every option" bash -c "'$cli' config --help >'$work/help' &&
    for o in --prefix --cflags --libs --cmake-dir --cmake-args --pkgconfig-dir; do
      grep -qF -- \"\$o\" '$work/help' || exit 1; done &&
    grep -qF 'Exit status (every command):' '$work/help'"
  check "tessera --help is unaffected" "$cli" --help
  # The command line copied where no Tessera is around it: every value is
  # refused with status 1 and the missing file named, none is guessed.
  mkdir -p "$work/lone/bin"
  cp "$cli" "$work/lone/bin/tessera"
  expect_status "alone: --cmake-dir names the missing tesseraConfig.cmake" 1 \
    "no tesseraConfig.cmake in $work/lone/lib/cmake/tessera" "$work/lone/bin/tessera" config --cmake-dir
  expect_status "alone: --cflags names the missing header" 1 "no tessera/tessera.h" \
    "$work/lone/bin/tessera" config --cflags
  expect_status "alone: --libs names the missing library" 1 "no libtessera.so" \
    "$work/lone/bin/tessera" config --libs
  expect_status "alone: --pkgconfig-dir names the missing tessera.pc" 1 "no tessera.pc" \
    "$work/lone/bin/tessera" config --pkgconfig-dir
  expect_status "alone: a missing value among good ones prints nothing" 1 "tesseraConfig.cmake" \
    "$work/lone/bin/tessera" config --prefix --cmake-args
  ;;
*)
  echo "unknown case $case_name"; exit 2 ;;
esac

echo "$passed passed, $failed failed"
((failed == 0 && passed > 0))
