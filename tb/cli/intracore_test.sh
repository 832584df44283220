#!/usr/bin/env bash
# Intra-core concurrent kernels (Awatramani chapter 5) on the command line: a compute-bound and a
# memory-bound kernel launched together finish sooner under `interleaved` than under `fifo` and the
# `leftover` baseline; the awatramani-interleaved analysis reports Table 5.2's columns; bad policy options
# in an experiment exit 2 naming file, line and key. Small grids: seconds.
#   tb/cli/intracore_test.sh GPUMUX SOURCE_DIR
set -uo pipefail
gpumux="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=tb/cli/check_lib.sh
. "$src/tb/cli/check_lib.sh"
gpu="$src/configs/gpus/tesla-m2090-concurrent.yaml"

# The shipped add_10_loops and stream_4_words programs (configs/kernels/awatramani-ch5.yaml) with the grid
# cut from 640 to 320 CTAs (3.3 waves of 6 per core). Measured: interleaved 0.81 of leftover's time and 0.86
# of fifo's (the full grid: 0.78 of leftover's, Table 5.2's add10-stream4 row in docs/validation.md).
sed 's/thread_blocks: 640 /thread_blocks: 320 /' "$src/configs/kernels/awatramani-ch5.yaml" >"$work/lib.yaml"
grep -q "thread_blocks: 320 " "$work/lib.yaml" || { echo "FAIL: grid not cut"; exit 1; }
cat >"$work/pair.yaml" <<YAML
name: pair
kernel_libraries: [$work/lib.yaml]
processes:
  - name: add
    streams:
      - - kernel: {name: add_10_loops}
  - name: stream
    streams:
      - - kernel: {name: stream_4_words}
YAML

ns() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['simulated_ns'])" "$1/stats.json"; }
for p in fifo leftover interleaved; do
  opt=()
  [ "$p" = interleaved ] && opt=(--policy-opt gather_ns=20)
  check "run $p" 0 "$gpumux" run --gpu "$gpu" --workload "$work/pair.yaml" --sm-model warp --policy "$p" \
    "${opt[@]}" --out "$work/$p" --quiet
done
fifo="$(ns "$work/fifo")"
leftover="$(ns "$work/leftover")"
interleaved="$(ns "$work/interleaved")"
echo "pair: fifo $fifo ns, leftover $leftover ns, interleaved $interleaved ns"
# The stream kernel's memory phase hides under the add kernel's compute: at least 10% sooner.
python3 -c "import sys; f, l, i = map(float, sys.argv[1:]); sys.exit(0 if i < 0.9 * f and i < 0.9 * l else 1)" \
  "$fifo" "$leftover" "$interleaved" || { echo "FAIL interleaved not 10% sooner than fifo and leftover"; failed=$((failed + 1)); }

# The analysis: Table 5.2's columns for the pair.
cat >"$work/exp.yaml" <<YAML
name: ch5
gpu: $gpu
analysis: awatramani-interleaved
workloads: [$work/pair.yaml]
runs:
  - {label: sequential, policy: leftover, sm_model: warp}
  - {label: interleaved, policy: interleaved, sm_model: warp, options: {gather_ns: 20}}
YAML
check "experiment" 0 "$gpumux" experiment "$work/exp.yaml" --out "$work/exp" --jobs 2 --quiet
python3 - "$work/exp/report.json" <<'PY' || { echo "FAIL analysis rows"; failed=$((failed + 1)); }
import json, sys
rows = {r["name"]: r["model"] for r in json.load(open(sys.argv[1]))["rows"]}
for key in ("kernel1_cycles", "kernel2_cycles", "sequential_cycles", "interleaved_cycles", "max_speedup",
            "achieved_speedup", "efficiency"):
    assert rows["pair/" + key] is not None, key
assert rows["pair/achieved_speedup"] > 1.0, rows
assert abs(rows["pair/efficiency"] - rows["pair/achieved_speedup"] / rows["pair/max_speedup"]) < 1e-9
PY

# Bad options: exit 2 naming the file, the line and the key.
sed 's/options: {gather_ns: 20}}$/options: {ksb_entries: 0}}/' "$work/exp.yaml" >"$work/bad.yaml"
check "ksb_entries 0" 2 "$gpumux" experiment "$work/bad.yaml" --out "$work/bad" --quiet
grep -q "bad.yaml:[0-9]*:[0-9]*:.*ksb_entries" "$work/err" || { echo "FAIL ksb_entries message: $(cat "$work/err")"; failed=$((failed + 1)); }
sed 's/options: {gather_ns: 20}}$/options: {gather_us: 1}}/' "$work/exp.yaml" >"$work/bad2.yaml"
check "unknown option" 2 "$gpumux" experiment "$work/bad2.yaml" --out "$work/bad2" --quiet
grep -q "bad2.yaml:[0-9]*:[0-9]*:.*gather_us" "$work/err" || { echo "FAIL unknown option message: $(cat "$work/err")"; failed=$((failed + 1)); }
check "gather_ns not a number" 2 "$gpumux" run --gpu "$gpu" --workload "$work/pair.yaml" --sm-model warp \
  --policy interleaved --policy-opt gather_ns=soon --out "$work/bad3" --quiet

echo "intracore_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
