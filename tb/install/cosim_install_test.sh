#!/usr/bin/env bash
# The installed package end to end (issue 13 item 1; docs/cosim.md): `cmake --install` of the build into
# a fresh prefix puts the binary, the model library, its headers, the CMake package, the pkg-config file
# and the configs in place; examples/cosim-testbench builds against it out of tree (CMake package) and
# again with pkg-config's flags, binds its own memory target and host, and passes its own checks; a
# slower memory slows the warp-level kernels (the GPU's memory traffic really goes through the user's
# target); the installed gpumux runs from outside the source tree with the installed configs.
#
#   tb/install/cosim_install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
src="$(cd "$2" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in bin/gpumux lib/libgpumux_model.a include/gpumux/top/gpu_model.h include/gpumux/mem/external_memory.h \
  lib/cmake/gpumux/gpumuxConfig.cmake lib/cmake/gpumux/gpumuxConfigVersion.cmake lib/cmake/gpumux/gpumuxTargets.cmake \
  lib/pkgconfig/gpumux.pc share/gpumux/configs/gpus/fermi-gtx480.yaml share/gpumux/configs/workloads/ercbench-pair.yaml; do
  [ -s "$prefix/$f" ] || fail "cmake --install did not install $f"
done
echo "ok: installed under $prefix"

# Out of tree, through the CMake package.
cmake -S "$src/examples/cosim-testbench" -B "$work/cosim" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure"; }
cmake --build "$work/cosim" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build against the package"; }
echo "ok: examples/cosim-testbench built against find_package(gpumux CONFIG)"

# Out of tree, with pkg-config's flags only.
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
c++ -std=c++17 -O1 -DGPUMUX_CONFIG_DIR="\"$(pkg-config --variable=configdir gpumux)\"" \
  "$src/examples/cosim-testbench/cosim_testbench.cpp" -o "$work/cosim_pc" \
  $(pkg-config --cflags --libs gpumux) || fail "build with pkg-config --cflags --libs gpumux"
echo "ok: examples/cosim-testbench built with pkg-config"

kernel_time() { sed -n 's/^kernel time ps //p' "$1"; }
"$work/cosim/cosim_testbench" 100 >"$work/fast.txt" || { cat "$work/fast.txt"; fail "cosim_testbench 100"; }
cat "$work/fast.txt"
"$work/cosim_pc" 2000 >"$work/slow.txt" || { cat "$work/slow.txt"; fail "cosim_testbench 2000 (pkg-config build)"; }
cat "$work/slow.txt"
fast="$(kernel_time "$work/fast.txt")"
slow="$(kernel_time "$work/slow.txt")"
[ -n "$fast" ] && [ -n "$slow" ] || fail "no kernel time printed"
[ "$slow" -gt "$fast" ] || fail "kernel time with a 2000 ns memory ($slow ps) not above a 100 ns one ($fast ps)"
echo "ok: a slower user memory slows the kernels ($fast ps -> $slow ps)"
"$work/cosim/cosim_testbench" 100 >"$work/again.txt"
cmp -s "$work/fast.txt" "$work/again.txt" || fail "two runs of the testbench differ"
echo "ok: deterministic"

# The installed binary, away from the source tree: lists its installed configs and runs them.
(cd "$work" && env -u GPUMUX_CONFIG_DIR "$prefix/bin/gpumux" list gpus >"$work/list.txt") ||
  fail "installed gpumux list gpus"
grep -q "$prefix/share/gpumux/configs/gpus/fermi-gtx480.yaml" "$work/list.txt" ||
  { cat "$work/list.txt"; fail "installed gpumux list gpus does not list the installed configs"; }
configs="$prefix/share/gpumux/configs"
(cd "$work" && "$prefix/bin/gpumux" run --gpu "$configs/gpus/fermi-gtx480.yaml" \
  --workload "$configs/workloads/ercbench-pair.yaml" --out "$work/run" >"$work/run.txt") ||
  { cat "$work/run.txt"; fail "installed gpumux run"; }
[ -s "$work/run/stats.json" ] || fail "installed gpumux wrote no stats.json"
echo "ok: the installed gpumux lists and runs its installed configs"
echo "cosim install test: all passed"
