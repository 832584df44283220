#!/usr/bin/env bash
# Kernelet on the command line (issue 15): gpumux characterise writes a characterisation file
# (deterministically) with a memory-bound and a compute-bound kernel told apart by PUR and MUR, the slicing
# sweep and the pair measurements; gpumux kernelet reads it (text and JSON); the kernelet policy runs from it
# under every choice, in an experiment with the kernelet analysis too; every bad input exits 2 naming what
# is wrong.
#   tb/cli/kernelet_test.sh GPUMUX SOURCE_DIR
set -uo pipefail
gpumux="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=tb/cli/check_lib.sh
. "$src/tb/cli/check_lib.sh"
gpu="$src/configs/gpus/fermi-gtx480.yaml"

# Two small warp-level kernels: a streaming one (loads and a store per element) and a compute-only one.
cat >"$work/lib.yaml" <<'YAML'
name: kernelettest
kernels:
  - name: stream
    thread_blocks: 120
    threads_per_tb: 256
    registers_per_tb: 4096
    tb_time: {mean_us: 5}
    program:
      - alu r2 <- r0, r1
      - loop: 8
        body:
          - ldg r3 <- r2 128B coalesced
          - alu r4 <- r3
          - stg r4, r2 128B coalesced
  - name: math
    thread_blocks: 120
    threads_per_tb: 256
    registers_per_tb: 4096
    tb_time: {mean_us: 5}
    program:
      - alu r2 <- r0, r1
      - loop: 64
        body:
          - alu r2 <- r2, r0
          - alu r3 <- r2
YAML
cat >"$work/pair.yaml" <<YAML
name: kernelet-pair
kernel_libraries: [$work/lib.yaml]
processes:
  - {name: a, streams: [[{kernel: {name: stream, launches: 1}}]]}
  - {name: b, streams: [[{kernel: {name: math, launches: 1}}]]}
YAML
opts=(--gpu "$gpu" --kernels "$work/lib.yaml" --memory-model dram --jobs 2)

check "characterise writes a file" 0 "$gpumux" characterise "${opts[@]}" --slicing --pairs --pair-waves 1 \
  --out "$work/c1.yaml" --report "$work/r1.json"
grep -q "PUR" "$work/out" || { echo "FAIL characterise: no table"; failed=$((failed + 1)); }
check "characterise again" 0 "$gpumux" characterise "${opts[@]}" --slicing --pairs --pair-waves 1 \
  --out "$work/c2.yaml" --quiet
cmp -s "$work/c1.yaml" "$work/c2.yaml" || { echo "FAIL characterise: two runs differ"; failed=$((failed + 1)); }
python3 - "$work/c1.yaml" "$work/r1.json" <<'PY' || failed=$((failed + 1))
import json, sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
k = {x["kernel"]: x for x in c["kernels"]}
# The streaming kernel is the memory-bound one, the compute-only kernel the pipeline-bound one (4.3).
assert k["stream"]["mur"] > 10 * k["math"]["mur"], (k["stream"]["mur"], k["math"]["mur"])
assert k["math"]["pur"] > k["stream"]["pur"], (k["math"]["pur"], k["stream"]["pur"])
assert k["math"]["memory_ratio"] == 0 and k["math"]["mur"] == 0
# Rm from the program: per warp 1 + 8 x (3 + loop-back) = 33 instructions, 16 of them global.
assert abs(k["stream"]["memory_ratio"] - 16 / 33) < 1e-12, k["stream"]["memory_ratio"]
assert k["stream"]["instructions_per_tb"] == 33 * 8
assert c["model"]["latency_cycles"] > 0 and c["model"]["requests_per_cycle"] > 0
# The latency probes: more warps in flight, never a shorter latency than one alone.
points = r["latency_probe"]["points"]
assert points[-1]["latency_cycles"] >= points[0]["latency_cycles"], points
# Slicing: every size measured, the smallest within 2% recorded (a multiple of the 15 SMs).
for s in r["slicing"]:
    assert len(s["curve"]) == k[s["kernel"]]["tbs_per_sm"], s
    assert k[s["kernel"]]["min_slice_tbs"] % 15 == 0 and k[s["kernel"]]["min_slice_tbs"] > 0
# Pairs: every ratio measured, positive IPCs.
assert len(c["pairs"]) > 0 and all(p["first_ipc"] > 0 and p["second_ipc"] > 0 for p in c["pairs"])
PY

check "kernelet report" 0 "$gpumux" kernelet --profiles "$work/c1.yaml" --gpu "$gpu"
grep -q "FindCoSchedule over all: " "$work/out" || { echo "FAIL kernelet: no decision"; failed=$((failed + 1)); }
grep -q "Table 6" "$work/out" || { echo "FAIL kernelet: no Table 6"; failed=$((failed + 1)); }
check "kernelet report json" 0 "$gpumux" kernelet --profiles "$work/c1.yaml" --gpu "$gpu" --json
python3 - "$work/out" <<'PY' || failed=$((failed + 1))
import json, sys
r = json.load(open(sys.argv[1]))
assert {k["kernel"] for k in r["kernels"]} == {"stream", "math"}
assert r["pairs_measured"] == 1 and len(r["pairs"]) == 1, r["pairs"]
p = r["pairs"][0]
assert "ipc_measured" in p and p["balanced"]["first_per_sm"] >= 1
assert len(r["table6"]) == 10 and all(len(row["either_close"]) == 10 for row in r["table6"])
PY
check "kernelet: another GPU" 2 "$gpumux" kernelet --profiles "$work/c1.yaml" --gpu "$src/configs/gpus/kepler-k20c.yaml"
grep -q "was measured on fermi-gtx480" "$work/err" || { echo "FAIL kernelet: GPU message"; failed=$((failed + 1)); }
check "kernelet: bad threshold" 2 "$gpumux" kernelet --profiles "$work/c1.yaml" --gpu "$gpu" --alpha-p x
check "characterise: unknown kernel" 2 "$gpumux" characterise "${opts[@]}" --kernel strem --out "$work/c3.yaml"
grep -q "did you mean 'stream'" "$work/err" || { echo "FAIL characterise: did-you-mean"; failed=$((failed + 1)); }
check "characterise: bad waves" 2 "$gpumux" characterise "${opts[@]}" --waves 0 --out "$work/c3.yaml"

run=(run --gpu "$gpu" --workload "$work/pair.yaml" --sm-model warp --memory-model dram --no-cache --quiet)
for choice in model measured random serial; do
  check "run kernelet choice=$choice" 0 "$gpumux" "${run[@]}" --policy kernelet \
    --policy-opt "profiles=$work/c1.yaml" --policy-opt "choice=$choice" --out "$work/run-$choice"
done
check "run kernelet choice=fixed" 0 "$gpumux" "${run[@]}" --policy kernelet --policy-opt choice=fixed \
  --policy-opt ratio=2:3 --out "$work/run-fixed"
check "run kernelet without profiles" 2 "$gpumux" "${run[@]}" --policy kernelet --out "$work/run-bad"
grep -q "profiles=FILE is required" "$work/err" || { echo "FAIL run: message"; failed=$((failed + 1)); }
"$gpumux" characterise "${opts[@]}" --kernel stream --out "$work/only-stream.yaml" --quiet
check "run kernelet with a kernel not characterised" 2 "$gpumux" "${run[@]}" --policy kernelet \
  --policy-opt "profiles=$work/only-stream.yaml" --out "$work/run-bad2"
grep -q "only-stream.yaml: no characterisation of kernel 'math'" "$work/err" ||
  { echo "FAIL run: missing kernel message"; cat "$work/err"; failed=$((failed + 1)); }
check "run kernelet measured without pairs" 2 "$gpumux" "${run[@]}" --policy kernelet \
  --policy-opt "profiles=$work/only-stream.yaml" --policy-opt choice=measured --out "$work/run-bad3"
sed 's/memory_ratio: 0/memory_ratio: 7/' "$work/c1.yaml" >"$work/bad.yaml"
check "run kernelet with a bad file" 2 "$gpumux" "${run[@]}" --policy kernelet --policy-opt "profiles=$work/bad.yaml" \
  --out "$work/run-bad4"
grep -q "bad.yaml:[0-9]*:[0-9]*: 'kernels\[[0-9]\].memory_ratio'" "$work/err" ||
  { echo "FAIL run: bad file message"; cat "$work/err"; failed=$((failed + 1)); }

# An experiment with the kernelet analysis: BASE, Kernelet, OPT and two MC samples.
mkdir -p "$work/exp"
cp "$work/c1.yaml" "$work/exp/c.yaml"
cat >"$work/exp/e.yaml" <<YAML
name: kernelet-exp
gpu: $gpu
analysis: kernelet
workloads: [$work/pair.yaml]
runs:
  - {label: base, policy: fifo, sm_model: warp}
  - {label: kernelet, policy: kernelet, sm_model: warp, options: {profiles: c.yaml}}
  - {label: opt, policy: kernelet, sm_model: warp, options: {profiles: c.yaml, choice: measured}}
  - {label: mc1, policy: kernelet, sm_model: warp, options: {profiles: c.yaml, choice: random, draw_seed: 1}}
  - {label: mc2, policy: kernelet, sm_model: warp, options: {profiles: c.yaml, choice: random, draw_seed: 2}}
paper:
  kernelet/over_base/max: 31.1
YAML
check "experiment: kernelet analysis" 0 "$gpumux" experiment "$work/exp/e.yaml" --out "$work/exp/out" --quiet
python3 - "$work/exp/out/report.json" <<'PY' || failed=$((failed + 1))
import json, sys
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))["rows"]}
for name in ["base/kernelet-pair/time_ms", "kernelet/kernelet-pair/over_base", "kernelet/kernelet-pair/from_opt",
             "mc/kernelet-pair/median_over_base", "mc/better_than_kernelet", "kernelet/over_base/max"]:
    assert rows[name]["model"] is not None, name
assert rows["kernelet/over_base/max"]["paper"] == 31.1
t = rows["kernelet/kernelet-pair/time_ms"]["model"]
base = rows["base/kernelet-pair/time_ms"]["model"]
assert abs(rows["kernelet/kernelet-pair/over_base"]["model"] - 100 * (base / t - 1)) < 1e-9
PY

echo "kernelet command line: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
