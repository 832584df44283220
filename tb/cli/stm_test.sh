#!/usr/bin/env bash
# Liang's spatial-temporal multitasking on the command line (issue 14): gpumux profile writes a profile
# file (deterministically), gpumux stm reads it (text and JSON; the measured optimum is no worse than any
# schedule it measured), the stm policy runs from it, and every bad input exits 2 naming what is wrong.
#   tb/cli/stm_test.sh GPUMUX SOURCE_DIR
set -uo pipefail
gpumux="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=tb/cli/check_lib.sh
. "$src/tb/cli/check_lib.sh"
gpu="$src/configs/gpus/fermi-gtx480.yaml"

# Two small TB-level kernels: a memory-heavy one and a compute-only one.
cat >"$work/lib.yaml" <<'YAML'
name: stmtest
kernels:
  - name: mem
    thread_blocks: 60
    threads_per_tb: 256
    registers_per_tb: 4096
    tb_time: {mean_us: 20, rsd_percent: 0}
    memory: {bytes_per_tb: 2000000, l2_hit_percent: 0}
    global_memory_bytes: 120000000
  - name: alu
    thread_blocks: 90
    threads_per_tb: 256
    registers_per_tb: 4096
    tb_time: {mean_us: 30, rsd_percent: 0}
YAML
cat >"$work/pair.yaml" <<YAML
name: stm-pair
kernel_libraries: [$work/lib.yaml]
tb_duration: fixed
processes:
  - name: a
    streams:
      - - kernel: {name: mem, launches: 1}
  - name: b
    streams:
      - - kernel: {name: alu, launches: 1}
YAML
opts=(--gpu "$gpu" --kernels "$work/lib.yaml" --sm-model tb --tb-interference on --jobs 2)

check "profile writes a file" 0 "$gpumux" profile "${opts[@]}" --out "$work/p1.yaml"
grep -q "R\[1\] us" "$work/out" || { echo "FAIL profile: no table"; failed=$((failed + 1)); }
check "profile again" 0 "$gpumux" profile "${opts[@]}" --out "$work/p2.yaml" --quiet
cmp -s "$work/p1.yaml" "$work/p2.yaml" || { echo "FAIL profile: two runs differ"; failed=$((failed + 1)); }
[ "$(grep -c '^sms: 15$' "$work/p1.yaml")" = 1 ] || { echo "FAIL profile: sms"; failed=$((failed + 1)); }
python3 - "$work/p1.yaml" <<'PY' || failed=$((failed + 1))
import sys, yaml
p = yaml.safe_load(open(sys.argv[1]))
ks = {k["kernel"]: k for k in p["kernels"]}
assert p["global_memory_bytes"] == 1536 << 20, p["global_memory_bytes"]
assert ks["mem"]["global_memory_bytes"] == 120000000
for k in ks.values():
    assert len(k["latency_ns"]) == 15 and len(k["bandwidth_gb_per_s"]) == 15, k["kernel"]
    assert k["latency_ns"][0] > k["latency_ns"][14], k["kernel"]  # one SM is slower than fifteen
assert ks["alu"]["bandwidth_gb_per_s"][14] == 0, "a kernel without memory traffic has no bandwidth"
assert ks["mem"]["bandwidth_gb_per_s"][14] > ks["mem"]["bandwidth_gb_per_s"][0]
PY
check "profile: --out missing" 2 "$gpumux" profile "${opts[@]}"
check "profile: unknown kernel" 2 "$gpumux" profile "${opts[@]}" --kernel mom --out "$work/x.yaml"
grep -q "did you mean 'mem'" "$work/err" || { echo "FAIL profile: no suggestion"; failed=$((failed + 1)); }
check "profile: warp level without programs" 2 "$gpumux" profile --gpu "$gpu" --kernels "$work/lib.yaml" \
  --sm-model warp --out "$work/x.yaml"
grep -q "has no program" "$work/err" || { echo "FAIL profile: warp error"; failed=$((failed + 1)); }

check "stm text" 0 "$gpumux" stm --profiles "$work/p1.yaml" --set mem,alu --exhaustive
grep -q "STM (estimate)" "$work/out" || { echo "FAIL stm: no STM line"; failed=$((failed + 1)); }
check "stm measure" 0 "$gpumux" stm --profiles "$work/p1.yaml" --set mem,alu --measure --allocations --json \
  --gpu "$gpu" --kernels "$work/lib.yaml" --sm-model tb --tb-interference on --jobs 2
python3 - "$work/out" <<'PY' || failed=$((failed + 1))
import json, sys
r = json.load(open(sys.argv[1]))["sets"][0]
best = r["optimum_measured"]["latency_ns"]
assert best <= r["sequential_measured"] + 1e-6 and best <= r["stm_measured"] + 1e-6, r
assert r["simulations"] == 16, r["simulations"]  # {mem}, {alu}, 14 allocations of both
assert len(r["allocations"]) == 14 and all(a["simulated_ns"] > 0 for a in r["allocations"])
assert r["optimum_estimate"]["latency_ns"] if "optimum_estimate" in r else True
PY
check "stm: unknown kernel" 2 "$gpumux" stm --profiles "$work/p1.yaml" --set mem,alx
check "stm: --measure without --gpu" 2 "$gpumux" stm --profiles "$work/p1.yaml" --set mem,alu --measure
check "stm: --allocations without --measure" 2 "$gpumux" stm --profiles "$work/p1.yaml" --set mem --allocations
sed 's/^sms: 15$/sms: 14/' "$work/p1.yaml" >"$work/short.yaml"
check "stm: lists not of length sms" 2 "$gpumux" stm --profiles "$work/short.yaml" --set mem
grep -q "short.yaml:[0-9]" "$work/err" || { echo "FAIL stm: error without file:line"; failed=$((failed + 1)); }
printf 'gpu: x\nsms: [\n' >"$work/broken.yaml"
check "stm: malformed YAML" 2 "$gpumux" stm --profiles "$work/broken.yaml" --set mem

run=(run --gpu "$gpu" --workload "$work/pair.yaml" --sm-model tb --tb-interference on --no-cache --quiet)
check "run stm" 0 "$gpumux" "${run[@]}" --policy stm --policy-opt "profiles=$work/p1.yaml" --out "$work/run"
check "run stm without profiles" 2 "$gpumux" "${run[@]}" --policy stm --out "$work/run2"
grep -q "profiles=FILE is required" "$work/err" || { echo "FAIL run: message"; failed=$((failed + 1)); }
"$gpumux" profile "${opts[@]}" --kernel mem --out "$work/only-mem.yaml" --quiet
check "run stm with a kernel unprofiled" 2 "$gpumux" "${run[@]}" --policy stm \
  --policy-opt "profiles=$work/only-mem.yaml" --out "$work/run3"
grep -q "only-mem.yaml: no profile of kernel 'alu'" "$work/err" || { echo "FAIL run: unprofiled message"; cat "$work/err"; failed=$((failed + 1)); }

# In an experiment file the profiles are relative to the file, and a missing one is named with its line.
mkdir -p "$work/exp/sub"
cp "$work/p1.yaml" "$work/exp/sub/p.yaml"
cat >"$work/exp/e.yaml" <<YAML
name: stm-exp
gpu: $gpu
analysis: liang-stm
workloads: [$work/pair.yaml]
tb_interference: on
runs:
  - {label: sequential, policy: fcfs, sm_model: tb}
  - {label: stm, policy: stm, sm_model: tb, options: {profiles: sub/p.yaml}}
YAML
check "experiment: profiles relative to the file" 0 "$gpumux" experiment "$work/exp/e.yaml" --out "$work/exp/out" --quiet
sed 's#sub/p.yaml#sub/missing.yaml#' "$work/exp/e.yaml" >"$work/exp/bad.yaml"
check "experiment: missing profiles" 2 "$gpumux" experiment "$work/exp/bad.yaml" --out "$work/exp/out2" --quiet
grep -q "bad.yaml:8:.*runs\[1\].options.profiles.*policy option file 'sub/missing.yaml' not found" "$work/err" ||
  { echo "FAIL experiment: missing profiles message"; cat "$work/err"; failed=$((failed + 1)); }

echo "stm command line: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
