#!/usr/bin/env bash
# The gpumux command line end to end: exit codes, error messages, outputs and determinism.
# usage: run_cli_tests.sh GPUMUX_BINARY SOURCE_DIR
set -uo pipefail
gpumux="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GPUMUX_CACHE_DIR="$work/cache"
# shellcheck source=check_lib.sh
source "$src/tb/cli/check_lib.sh"

expect_text() {  # expect_text NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: '$3' not in $2:"
    head -20 "$2" | sed 's/^/  /'
  fi
}

expect_no_text() {  # expect_no_text NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then
    failed=$((failed + 1))
    echo "FAIL $1: '$3' in $2:"
    grep -F -- "$3" "$2" | head -5 | sed 's/^/  /'
  else
    passed=$((passed + 1))
  fi
}

gpu="$src/configs/gpus/kepler-k20c.yaml"
sgemm="$src/configs/workloads/sgemm-3x.yaml"

check help 0 "$gpumux" --help
expect_text help-usage "$work/out" "gpumux run --gpu FILE --workload FILE"
check no-args 2 "$gpumux"
check unknown-command 2 "$gpumux" frobnicate
check run-help 0 "$gpumux" run --help
check run-missing-workload 2 "$gpumux" run --gpu "$gpu"
expect_text run-missing-workload-msg "$work/err" "workload"
check run-unknown-option 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --bogus
check run-unknown-policy 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy nope --out "$work/x"
expect_text run-unknown-policy-msg "$work/err" "unknown policy 'nope'"
check run-missing-file 2 "$gpumux" run --gpu "$work/none.yaml" --workload "$sgemm"
expect_text run-missing-file-msg "$work/err" "none.yaml"

# Bad workload: unknown key, with file and line in the message.
cat >"$work/bad.yaml" <<YAML
kernel_libraries: [$src/configs/kernels/parboil.yaml]
processes:
  - name: a
    streams:
      - - kernel: {name: mysgemmNT, lanches: 2}
YAML
check run-bad-key 2 "$gpumux" run --gpu "$gpu" --workload "$work/bad.yaml" --out "$work/x"
expect_text run-bad-key-msg "$work/err" "bad.yaml:5"
expect_text run-bad-key-name "$work/err" "lanches"

check list-policies 0 "$gpumux" list policies
expect_text list-policies-fcfs "$work/out" "fcfs"
# Options, their ranges and defaults come from each policy's declaration (core/typed_options.h).
expect_text list-policies-option-range "$work/out" "threshold     a finite number from 0 to 1000000; default 0.5"
expect_text list-policies-option-auto "$work/out" "token_bits           an integer from 2 to 31, or auto; default auto"
# The DMA engines' copy policies (frontend/copy_policy.h) close the list.
expect_text list-policies-copy "$work/out" "copy policies (the DMA engines): --copy-policy NAME (gpumux run), copy_policy: NAME"
expect_text list-policies-copy-npq "$work/out" "npq              non-preemptive priority queues: a free DMA engine takes"
# docs/user-guide.md ("Policy options") shows this output verbatim.
awk '/END gpumux list policies/ {f = 0} f && !/^```/ {print} /BEGIN gpumux list policies/ {f = 1}' \
  "$src/docs/user-guide.md" >"$work/list-docs"
cp "$work/out" "$work/list-out"
check list-policies-in-user-guide 0 diff -u "$work/list-docs" "$work/list-out"
# Warp schedulers (sm/warp_scheduler/registry.h): all six, with the two-level option; docs/config.md
# ("Warp schedulers") shows the output verbatim.
check list-warp-schedulers 0 "$gpumux" list warp-schedulers
cp "$work/out" "$work/list-out"
expect_text list-warp-schedulers-inner "$work/list-out" "inner  lrr or gto; default lrr"
names="$(awk '/^[a-z]/ {print $1}' "$work/list-out" | tr '\n' ' ')"
check list-warp-schedulers-all-six 0 test "$names" = "gto lrr phase-aware two-level-gto two-level-lrr two-level-phase-aware "
awk '/END gpumux list warp-schedulers/ {f = 0} f && !/^```/ {print} /BEGIN gpumux list warp-schedulers/ {f = 1}' \
  "$src/docs/config.md" >"$work/list-docs"
check list-warp-schedulers-in-config-doc 0 diff -u "$work/list-docs" "$work/list-out"
check list-gpus 0 "$gpumux" list gpus
expect_text list-gpus-k20c "$work/out" "kepler-k20c.yaml"
check list-kernels 0 "$gpumux" list kernels
expect_text list-kernels-sgemm "$work/out" "mysgemmNT"
check list-unknown 2 "$gpumux" list nothing

# gpumux phases: the phase analysis of a kernel program (Awatramani Fig. 3.2's vector add: two phases,
# 20 and 10 cycles on the default Tesla M2090 (ALU 4 cycles, 2 issue cycles per global access), 18 and 9
# on the GTX 480 file (1 issue cycle)).
cat >"$work/programs.yaml" <<'YAML'
kernels:
  - name: vadd
    thread_blocks: 64
    threads_per_tb: 256
    registers_per_tb: 2560
    tb_time: {mean_us: 5}
    program:
      - alu r2 <- r0, r1
      - alu r3 <- r2
      - alu r4 <- r3
      - alu r5 <- r3
      - ldg r6 <- r4 128B
      - ldg r7 <- r5 128B
      - alu r8 <- r6, r7
      - alu r9 <- r3
      - stg r8, r9 128B
  - {name: tb_only, thread_blocks: 1, threads_per_tb: 32, registers_per_tb: 32, tb_time: {mean_us: 1}}
YAML
check phases-text 0 "$gpumux" phases --kernels "$work/programs.yaml"
expect_text phases-text-header "$work/out" "kernel vadd ($work/programs.yaml:2): 9 instructions, 2 phases"
expect_text phases-text-gpu "$work/out" "phases on tesla-m2090"
expect_text phases-text-phase2 "$work/out" "      1            6:14            8:16       10            3"
expect_text phases-text-consumer "$work/out" "      6     14     1       10  alu r8 <- r6, r7"
expect_text phases-text-no-program "$work/out" "kernel tb_only ($work/programs.yaml:17): no program (TB-level only)"
check phases-json 0 "$gpumux" phases --kernels "$work/programs.yaml" --kernel vadd --json \
  --gpu "$src/configs/gpus/fermi-gtx480.yaml"
cp "$work/out" "$work/phases.json"
check phases-json-shape 0 python3 - "$work/phases.json" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
assert out["gpu"] == "fermi-gtx480", out["gpu"]
assert out["latencies"]["alu"] == 4 and out["latencies"]["global_issue"] == 1, out["latencies"]
(k,) = out["kernels"]
p = k["program"]
assert [(ph["first_pc"], ph["last_pc"], ph["length"]) for ph in p["phases"]] == [(0, 5, 18), (6, 8, 9)], p["phases"]
assert [c["phase_distance"] for c in p["code"]] == [18, 14, 10, 6, 2, 1, 9, 5, 1]
assert p["code"][4]["text"] == "ldg r6 <- r4 128B coalesced" and p["code"][4]["line"] == 12
PY
check phases-no-program 2 "$gpumux" phases --kernels "$work/programs.yaml" --kernel tb_only
expect_text phases-no-program-msg "$work/err" "programs.yaml:17:5: kernel 'tb_only' has no program"
check phases-unknown-kernel 2 "$gpumux" phases --kernels "$work/programs.yaml" --kernel vad
expect_text phases-unknown-kernel-msg "$work/err" "no kernel 'vad' (did you mean 'vadd'?)"
check phases-missing-kernels 2 "$gpumux" phases
expect_text phases-missing-kernels-msg "$work/err" "--kernels FILE is required"
sed 's/alu r8 <- r6, r7/alu r8 <- r6, r17/' "$work/programs.yaml" >"$work/bad-program.yaml"
check phases-bad-program 2 "$gpumux" phases --kernels "$work/bad-program.yaml"
expect_text phases-bad-program-msg "$work/err" \
  "bad-program.yaml:14:9: 'kernels[0].program[6]': reads r17 before any instruction writes it"
sed 's/ldg r6 <- r4 128B/ldg r6 <- r4 128B scattered within 12KB/' "$work/programs.yaml" >"$work/bad-table.yaml"
check phases-bad-scatter-table 2 "$gpumux" phases --kernels "$work/bad-table.yaml"
expect_text phases-bad-scatter-table-msg "$work/err" \
  "bad-table.yaml:12:9: 'kernels[0].program[4]': 'scattered within' needs the bytes of the table the threads index, written like 324800B, got '12KB'"
sed 's/ldg r6 <- r4 128B/ldg r6 <- r4 128B scattered within 4096B/' "$work/programs.yaml" >"$work/table.yaml"
check phases-scatter-table 0 "$gpumux" phases --kernels "$work/table.yaml" --json
expect_text phases-scatter-table-text "$work/out" "ldg r6 <- r4 128B scattered within 4096B"

# A real run, its outputs, and determinism.
check run-sgemm 0 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --out "$work/a" --timeline "$work/a/timeline.json" \
  --vcd "$work/a/trace.vcd"
expect_text run-prints-stp "$work/out" "STP"
check stats-json-shape 0 python3 - "$work/a/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for key in ("stp", "antt", "fairness"):
    assert key in s["metrics"], key
p = s["processes"][0]
for key in ("name", "isolated_ns", "turnaround_ns", "ntt", "runs"):
    assert key in p, key
assert p["runs"] == 3
k = s["kernels"][0]
for key in ("name", "process", "launch_ns", "start_ns", "end_ns", "thread_blocks"):
    assert key in k, key
for key in ("id", "busy_ns", "thread_blocks"):
    assert key in s["sms"][0], key
inv = s["invariants"]
assert inv["thread_blocks_issued"] == inv["thread_blocks_completed"] == 3 * 528
# Alone is alone: a single process's NTT is 1.
assert abs(p["ntt"] - 1.0) < 1e-12, p["ntt"]
PY
check timeline-json 0 python3 - "$work/a/timeline.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
slices = [e for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "thread block"]
assert len(slices) == 3 * 528, len(slices)
PY
expect_text vcd-header "$work/a/trace.vcd" "\$enddefinitions"
expect_text vcd-sm "$work/a/trace.vcd" "resident_tbs"
check run-sgemm-again 0 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --out "$work/b" --quiet
check deterministic 0 cmp "$work/a/stats.json" "$work/b/stats.json"
check run-sgemm-nocache 0 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --out "$work/c" --quiet --no-cache
check cache-matches-fresh 0 cmp "$work/a/stats.json" "$work/c/stats.json"
# What shaped a run is recorded (issue 18): stats.json names the preemption mechanism, the input files
# and the hashes of the effective configuration; the summary's second line names the policy with its
# options, the mechanism, the SM model and the version; --replay repeats the run from stats.json alone,
# byte for byte, and refuses when an input changed or is also given on the command line.
cp "$sgemm" "$work/sgemm-copy.yaml"
sed -i "s|\.\./kernels/|$src/configs/kernels/|" "$work/sgemm-copy.yaml"
check run-recorded 0 "$gpumux" run --gpu "$gpu" --workload "$work/sgemm-copy.yaml" --policy ppq \
  --policy-opt access=exclusive --preemption drain --seed 11 --out "$work/rec"
expect_text run-recorded-summary "$work/out" "policy ppq (access=exclusive), preemption drain, copy policy fcfs, SM model tb, gpumux "
check run-recorded-fields 0 python3 - "$work/rec/stats.json" "$gpu" "$work/sgemm-copy.yaml" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))
assert s["preemption"] == "drain" and s["seed"] == 11 and s["policy_options"] == {"access": "exclusive"}, s
assert s["copy_policy"] == "fcfs", s["copy_policy"]
assert s["inputs"]["gpu_file"] == sys.argv[2] and s["inputs"]["workload_file"] == sys.argv[3], s["inputs"]
for key in (s["inputs"]["gpu_sha1"], s["inputs"]["workload_sha1"], s["config_sha1"]):
    assert re.fullmatch("[0-9a-f]{40}", key), key
PY
# --dump-config: the effective configuration, every default filled in; its "gpu" member, as a GPU file,
# is the same GPU (same gpu_sha1 and config_sha1 in stats.json).
check dump-config 0 "$gpumux" run --gpu "$gpu" --workload "$work/sgemm-copy.yaml" --policy ppq \
  --policy-opt access=exclusive --preemption drain --seed 11 --out "$work/dump" --quiet \
  --dump-config "$work/dump/config.json"
check dump-config-fields 0 python3 - "$work/dump/config.json" "$work/dump-gpu.yaml" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["seed"] == 11 and c["policy"] == "ppq" and c["preemption"] == "drain", c
assert c["policy_options"] == {"access": "exclusive"}, c["policy_options"]
assert c["gpu"]["sm"]["registers"] > 0 and "scheduler_options" in c["gpu"]["sm"]["warp"], c["gpu"]["sm"]
assert c["workload"]["processes"], c["workload"]
json.dump(c["gpu"], open(sys.argv[2], "w"), indent=2)
PY
check dump-config-gpu-reloads 0 "$gpumux" run --gpu "$work/dump-gpu.yaml" --workload "$work/sgemm-copy.yaml" \
  --policy ppq --policy-opt access=exclusive --preemption drain --seed 11 --out "$work/dump2" --quiet
check dump-config-same-gpu 0 python3 -c "
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a['inputs']['gpu_sha1'] == b['inputs']['gpu_sha1'] and a['config_sha1'] == b['config_sha1'], (a['inputs'], b['inputs'])
" "$work/rec/stats.json" "$work/dump2/stats.json"
touch "$work/dump-file"
check dump-config-bad-path 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --out "$work/x" \
  --dump-config "$work/dump-file/sub/config.json"
expect_text dump-config-bad-path-msg "$work/err" "--dump-config"
check replay 0 "$gpumux" run --replay "$work/rec/stats.json" --out "$work/rec2" --quiet
check replay-identical 0 cmp "$work/rec/stats.json" "$work/rec2/stats.json"
check replay-other-seed 0 "$gpumux" run --gpu "$gpu" --workload "$work/sgemm-copy.yaml" --policy ppq \
  --policy-opt access=exclusive --preemption drain --seed 12 --out "$work/rec3" --quiet
check replay-config-hash-follows-seed 0 python3 -c "
import json
a, b = (json.load(open(f)) for f in ('$work/rec/stats.json', '$work/rec3/stats.json'))
assert a['inputs'] == b['inputs'], 'same files, same effective GPU and workload'
assert a['config_sha1'] != b['config_sha1'], 'the seed is part of the configuration'
"
check replay-with-input 2 "$gpumux" run --replay "$work/rec/stats.json" --seed 3 --out "$work/rec2"
expect_text replay-with-input-msg "$work/err" "--seed cannot be given with it"
# The copy policy (--copy-policy, Tanasic 4.2's NPQ on the DMA engines) is recorded, part of config_sha1,
# repeated by --replay and, like every input, not to be given beside it.
check run-copy-npq 0 "$gpumux" run --gpu "$gpu" --workload "$work/sgemm-copy.yaml" --policy ppq \
  --policy-opt access=exclusive --preemption drain --copy-policy npq --seed 11 --out "$work/rec-npq"
expect_text run-copy-npq-summary "$work/out" "preemption drain, copy policy npq, SM model tb"
check run-copy-npq-fields 0 python3 -c "
import json
a, b = (json.load(open(f)) for f in ('$work/rec/stats.json', '$work/rec-npq/stats.json'))
assert b['copy_policy'] == 'npq', b['copy_policy']
assert a['inputs'] == b['inputs'], 'same files, same effective GPU and workload'
assert a['config_sha1'] != b['config_sha1'], 'the copy policy is part of the configuration'
"
check replay-copy-npq 0 "$gpumux" run --replay "$work/rec-npq/stats.json" --out "$work/rec-npq2" --quiet
check replay-copy-npq-identical 0 cmp "$work/rec-npq/stats.json" "$work/rec-npq2/stats.json"
check replay-with-copy-policy 2 "$gpumux" run --replay "$work/rec-npq/stats.json" --copy-policy fcfs --out "$work/rec2"
expect_text replay-with-copy-policy-msg "$work/err" "--copy-policy cannot be given with it"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['copy_policy']='lifo'; json.dump(d, open(sys.argv[2], 'w'))" \
  "$work/rec-npq/stats.json" "$work/bad-copy-stats.json"
check replay-bad-copy-policy 2 "$gpumux" run --replay "$work/bad-copy-stats.json" --out "$work/rec2"
expect_text replay-bad-copy-policy-msg "$work/err" "bad-copy-stats.json: key 'copy_policy' must be fcfs or npq, not 'lifo'"
sed -i "s/repeat: 3/repeat: 2/" "$work/sgemm-copy.yaml"
check replay-changed-workload 2 "$gpumux" run --replay "$work/rec/stats.json" --out "$work/rec2"
expect_text replay-changed-workload-msg "$work/err" "cannot replay: the workload ('$work/sgemm-copy.yaml'"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); del d['inputs']; json.dump(d, open(sys.argv[2], 'w'))" \
  "$work/rec/stats.json" "$work/old-stats.json"
check replay-old-stats 2 "$gpumux" run --replay "$work/old-stats.json"
expect_text replay-old-stats-msg "$work/err" "old-stats.json: key 'inputs.gpu_file' missing"
# The carve-out rule never costs occupancy silently: the demo's histo 'main' gets 32 of the K20c's
# 48 KB under Kepler's smallest-fitting rule (1 thread block per SM where 48 KB holds 2).
check run-carveout-warning 0 "$gpumux" run --gpu "$gpu" --workload "$src/configs/workloads/demo-parboil-4proc.yaml" \
  --out "$work/cw"
expect_text run-carveout-warning-msg "$work/err" \
  "gpumux: warning: kernel 'main' on GPU 'kepler-k20c': carve-out rule smallest-fitting gives it 32 KB of shared memory and 1 thread block per SM; the largest carve-out (48 KB) allows 2 thread blocks per SM"
check list-kernels-carveout 0 "$gpumux" list kernels --gpu "$gpu"
expect_text list-kernels-carveout-mark "$work/out" "* kernel 'genhists' on GPU 'kepler-k20c'"
check list-kernels-no-carveout-loss 0 "$gpumux" list kernels --gpu "$src/configs/gpus/hopper-h100-like.yaml"
expect_no_text list-kernels-no-carveout-loss-mark "$work/out" "* kernel"
# gpumux list reads the configs of the working directory first (docs/user-guide.md "Where gpumux finds
# configs"): a folder with one GPU file of its own lists that file only.
mkdir -p "$work/mine/configs/gpus" "$work/mine/configs/kernels"
sed 's/^name: kepler-k20c/name: my-gpu/' "$gpu" >"$work/mine/configs/gpus/my-gpu.yaml"
cp "$src/configs/kernels/parboil.yaml" "$work/mine/configs/kernels/"
gpumux_abs="$(readlink -f "$gpumux")"
check list-gpus-cwd 0 bash -c "cd '$work/mine' && '$gpumux_abs' list gpus"
expect_text list-gpus-cwd-mine "$work/out" "configs/gpus/my-gpu.yaml"
expect_no_text list-gpus-cwd-not-shipped "$work/out" "kepler-k20c.yaml"
check list-kernels-cwd 0 bash -c "cd '$work/mine' && '$gpumux_abs' list kernels --gpu configs/gpus/my-gpu.yaml"
expect_text list-kernels-cwd-dir "$work/out" "kernel libraries in configs/kernels"
expect_no_text list-kernels-cwd-no-ercbench "$work/out" "aesEncrypt128"
# The demo with a waveform: its times are not whole nanoseconds (1 ps timescale), nothing warns, the
# hierarchy follows the blocks, the GTKWave save file and filters sit beside it, and the summary names
# the files written (issue 17).
check run-demo-vcd 0 "$gpumux" run --gpu "$gpu" --workload "$src/configs/workloads/demo-parboil-4proc.yaml" \
  --out "$work/v" --vcd "$work/v/trace.vcd" --quiet
expect_no_text run-demo-vcd-no-warning "$work/err" "Warning"
expect_no_text run-demo-vcd-no-warning-stdout "$work/out" "Warning"
expect_text run-demo-vcd-ps "$work/v/trace.vcd" '$timescale 1ps $end'
expect_text run-demo-vcd-scope "$work/v/trace.vcd" '$scope module sm_00 $end'
expect_text run-demo-vcd-gtkw "$work/v/trace.gtkw" "gpu.sm_12.activity[2:0]"
expect_text run-demo-vcd-filter "$work/v/trace.sm_activity.txt" "7 saving"
check run-demo-vcd-summary 0 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --out "$work/v2" --vcd "$work/v2/t.vcd"
expect_text run-demo-vcd-summary-names "$work/out" "waveform: $work/v2/t.vcd (gtkwave $work/v2/t.vcd $work/v2/t.gtkw)"
# FST: --vcd FILE.fst writes FST (vcd2fst, package gtkwave), named as given; fst2vcd reads it back.
check run-fst 0 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --out "$work/f" --vcd "$work/f/t.fst"
expect_text run-fst-summary "$work/out" "waveform: $work/f/t.fst"
check run-fst-exists 0 test -s "$work/f/t.fst"
check run-fst-no-vcd 1 test -e "$work/f/t.fst.vcd"
check run-fst-reads 0 bash -c "fst2vcd '$work/f/t.fst' | grep -q 'resident_tbs'"
# Warp level: per SM, active warps, instructions issued and the units they went to, decoded.
check run-warp-vcd 0 "$gpumux" run --gpu "$src/configs/gpus/tesla-m2090.yaml" \
  --workload "$src/configs/workloads/awatramani/LUD.yaml" --sm-model warp --warp-scheduler two-level-gto \
  --out "$work/wv" --vcd "$work/wv/t.vcd" --quiet
expect_text run-warp-vcd-warps "$work/wv/t.vcd" "active_warps"
expect_text run-warp-vcd-units "$work/wv/t.gtkw" "gpu.sm_00.issue_units[3:0]"
expect_text run-warp-vcd-filter "$work/wv/t.issue_units.txt" "5 alu+ldst"
check run-other-seed 0 "$gpumux" run --gpu "$gpu" --workload "$src/configs/workloads/demo-parboil-4proc.yaml" \
  --out "$work/d" --quiet --seed 5
check bench-json 0 "$gpumux" bench --json --tbs 20000
cp "$work/out" "$work/bench.json"
check bench-json-keys 0 python3 -c "import json; d=json.load(open('$work/bench.json')); assert d['tb_per_s']>0 and d['bare_events_per_s']>0 and d['ratio']>0 and d['processes']==8"
# Issue 20: cost against the number of kernels (--processes; each one launch sharing the thread blocks).
check bench-processes 0 "$gpumux" bench --json --tbs 6400 --processes 64
cp "$work/out" "$work/bench-processes.json"
check bench-processes-count 0 python3 -c "import json; d=json.load(open('$work/bench-processes.json')); assert d['processes']==64 and d['thread_blocks']==6400, d"
check bench-processes-bad 2 "$gpumux" bench --processes 65
expect_text bench-processes-bad-msg "$work/err" "--processes must be an integer from 1 to 64"
# --rounds: medians and ranges over rounds of one deterministic run; --against-fcfs: the policy's rate as a
# share of fcfs's in the same rounds (issue 20 item 3's bar for DSS). Speed is reported, not asserted.
check bench-rounds 0 "$gpumux" bench --json --tbs 20000 --rounds 3 --policy dss --against-fcfs
cp "$work/out" "$work/bench-rounds.json"
check bench-rounds-keys 0 python3 -c "
import json
d = json.load(open('$work/bench-rounds.json'))
assert d['rounds'] == 3 and d['policy'] == 'dss', d
assert d['tb_per_s_min'] <= d['tb_per_s'] <= d['tb_per_s_max'], d
assert d['ratio_min'] <= d['ratio'] <= d['ratio_max'], d
assert d['fcfs_tb_per_s'] > 0 and d['share_of_fcfs_min'] <= d['share_of_fcfs'] <= d['share_of_fcfs_max'], d
"
check bench-rounds-text 0 "$gpumux" bench --tbs 20000 --rounds 2 --policy dss --against-fcfs
expect_text bench-rounds-text-median "$work/out" "medians of 2 rounds"
expect_text bench-rounds-text-share "$work/out" "dss keeps"
cp "$work/bench.json" "$work/bench-one.json"  # bench-json above: one round
check bench-rounds-one-key 0 python3 -c "import json; d=json.load(open('$work/bench-one.json')); assert d['rounds']==1 and 'tb_per_s_min' not in d and 'share_of_fcfs' not in d, d"
check bench-rounds-zero 2 "$gpumux" bench --rounds 0
expect_text bench-rounds-zero-msg "$work/err" "--rounds must be an integer from 1 to 101"
check bench-against-fcfs-fcfs 2 "$gpumux" bench --against-fcfs
expect_text bench-against-fcfs-fcfs-msg "$work/err" "--against-fcfs compares another policy with fcfs"
check bench-against-fcfs-memory 2 "$gpumux" bench --memory --against-fcfs
expect_text bench-against-fcfs-memory-msg "$work/err" "--against-fcfs compares TB-level policies; not with --memory"
check bench-rounds-warp 2 "$gpumux" bench --sm-model warp --rounds 3
expect_text bench-rounds-warp-msg "$work/err" "--rounds measures the TB-level model and --memory; not the warp-level SM"
check bench-memory-rounds 0 "$gpumux" bench --memory --json --tbs 20000 --gpu "$src/configs/gpus/kepler-k20c.yaml" --rounds 3
cp "$work/out" "$work/bench-memory-rounds.json"
check bench-memory-rounds-keys 0 python3 -c "
import json
d = json.load(open('$work/bench-memory-rounds.json'))
assert d['rounds'] == 3 and len(d['runs']) == 2, d
for r in d['runs']:
    assert r['requests_per_s_min'] <= r['requests_per_s'] <= r['requests_per_s_max'], r
    assert r['bandwidth_gb_per_s'] > 0 and 'wall_seconds' not in r, r
"
# Warp level (docs/performance.md "Warp level"): the named fields; speed is measured, not asserted.
# Every warp runs the whole bench program (configs/kernels/bench.yaml: 1 + 50 x (11 + the loop-back)
# = 601 instructions), 8 warps per thread block, on the full GPU and on 13 SMs alike.
check bench-warp-json 0 "$gpumux" bench --sm-model warp --json --tbs 264
cp "$work/out" "$work/bench-warp.json"
check bench-warp-json-keys 0 python3 -c "
import json
d = json.load(open('$work/bench-warp.json'))
assert d['sm_model'] == 'warp' and d['sms'] == 132 and d['small_sms'] == 13, d
assert d['warp_instructions'] == 264 * 8 * 601, d['warp_instructions']
assert [r['warp_instructions'] for r in d['runs']] == [264 * 8 * 601] * 2, d['runs']
for key in ('warp_instr_per_s', 'warp_instr_per_cpu_s', 'small_warp_instr_per_s', 'small_warp_instr_per_cpu_s',
            'sm_scaling_ratio', 'wall_seconds', 'cpu_seconds'):
    assert d[key] > 0, key
assert 'load_average_before' in d and d['warp_scheduler'] == 'gto', d
"
check bench-warp-scheduler 0 "$gpumux" bench --sm-model warp --warp-scheduler two-level-lrr --tbs 100
expect_text bench-warp-scheduler-text "$work/out" "warp scheduler two-level-lrr"
check bench-warp-tbs-too-small 2 "$gpumux" bench --sm-model warp --tbs 99
expect_text bench-warp-tbs-too-small-msg "$work/err" "--tbs must be an integer from 100 to 10000000"
check bench-bad-sm-model 2 "$gpumux" bench --sm-model cycle
expect_text bench-bad-sm-model-msg "$work/err" "--sm-model must be tb or warp"

# Experiments: the smoke experiment (fcfs and fifo only) end to end, its reports, determinism, errors.
smoke="$src/configs/experiments/smoke.yaml"
check experiment-help 0 "$gpumux" experiment --help
expect_text experiment-help-usage "$work/out" "gpumux experiment FILE --out DIR"
check experiment-smoke 0 "$gpumux" experiment "$smoke" --out "$work/exp" --jobs 2
expect_text experiment-prints-plan "$work/out" "= 4 simulations"
expect_text experiment-prints-rows "$work/out" "fifo/antt"
# An experiment that extends another (docs/config.md "Extending an experiment"): smoke.yaml with npq for
# fifo and one workload fewer.
check experiment-extends 0 "$gpumux" experiment "$src/configs/experiments/smoke-extended.yaml" --out "$work/expx" --jobs 2
expect_text experiment-extends-plan "$work/out" "experiment smoke-extended: 1 workloads x 2 runs x 1 seed = 2 simulations"
check experiment-extends-report 0 python3 -c "
import json
r = json.load(open('$work/expx/report.json'))
assert r['experiment'] == 'smoke-extended' and r['extends'] == ['smoke'], (r['experiment'], r['extends'])
assert [run['label'] for run in r['grid']['runs']] == ['fcfs', 'npq'], r['grid']['runs']
"
# A run's copy_policy (Tanasic 4.2: NPQ on the DMA engines) reaches report.json and report.md.
cat >"$work/exp-copy.yaml" <<YAML
gpu: $gpu
analysis: summary
workloads: [$sgemm]
runs:
  - {label: fcfs, policy: fcfs}
  - {label: npq, policy: npq, copy_policy: npq}
YAML
check experiment-copy-policy 0 "$gpumux" experiment "$work/exp-copy.yaml" --out "$work/expc" --jobs 2 --quiet
check experiment-copy-policy-report 0 python3 -c "
import json
r = json.load(open('$work/expc/report.json'))
assert [run['copy_policy'] for run in r['grid']['runs']] == ['fcfs', 'npq'], r['grid']['runs']
assert [run['copy_policy'] for run in r['runs']] == ['fcfs', 'npq'], [run['label'] for run in r['runs']]
"
expect_text experiment-copy-policy-md "$work/expc/report.md" "\`npq\` = npq, copies npq"
check experiment-report-json 0 python3 - "$work/exp/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["experiment"] == "smoke" and r["analysis"] == "summary"
assert r["rows"], "no rows"
for row in r["rows"]:
    for key in ("name", "model", "paper", "unit"):
        assert key in row, (key, row)
    assert isinstance(row["model"], float) and row["model"] > 0, row
    assert row["paper"] is None, row
names = {row["name"] for row in r["rows"]}
assert {"fcfs/stp", "fcfs/antt", "fcfs/fairness", "fifo/stp", "fifo/antt", "fifo/fairness"} <= names, names
assert len(r["runs"]) == 4, len(r["runs"])
for run in r["runs"]:
    for key in ("workload", "label", "policy", "preemption", "copy_policy", "seed", "stp", "antt", "fairness", "processes"):
        assert key in run, key
    for p in run["processes"]:
        assert p["ntt"] >= 1.0 - 1e-9, p
# A workload of one process is alone: STP = ANTT = fairness = 1.
alone = [run for run in r["runs"] if run["workload"] == "sgemm-3x"]
assert len(alone) == 2 and all(abs(run["antt"] - 1) < 1e-12 for run in alone), alone
PY
expect_text experiment-report-md "$work/exp/report.md" "| fifo |"
check experiment-smoke-again 0 "$gpumux" experiment "$smoke" --out "$work/exp2" --quiet --no-cache
check experiment-deterministic 0 cmp "$work/exp/report.json" "$work/exp2/report.json"
check experiment-dry-run 0 "$gpumux" experiment "$smoke" --dry-run
expect_text experiment-dry-run-rows "$work/out" "fcfs/stp"
check experiment-missing-out 2 "$gpumux" experiment "$smoke"
expect_text experiment-missing-out-msg "$work/err" "--out"
cat >"$work/bad-exp.yaml" <<YAML
gpu: $gpu
analysis: summary
workloads: [$sgemm]
runs:
  - {label: a, policy: fcfs, polcy: fifo}
YAML
check experiment-bad-key 2 "$gpumux" experiment "$work/bad-exp.yaml" --out "$work/x"
expect_text experiment-bad-key-msg "$work/err" "bad-exp.yaml:5"
expect_text experiment-bad-key-name "$work/err" "runs[0].polcy"

# Preemption and policy options.
check preemption-bad 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --preemption sometimes --out "$work/p"
expect_text preemption-bad-msg "$work/err" "--preemption must be context-switch or drain"
check copy-policy-bad 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --copy-policy ppq --out "$work/p"
expect_text copy-policy-bad-msg "$work/err" "--copy-policy must be fcfs or npq, not 'ppq'"
check policy-opt-malformed 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy ppq --policy-opt access --out "$work/p"
check policy-opt-unknown 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy fcfs --policy-opt access=shared --out "$work/p"
expect_text policy-opt-unknown-msg "$work/err" "policy fcfs takes no options (got 'access')"
check policy-opt-unknown-name 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy ppq --policy-opt acess=shared --out "$work/p"
expect_text policy-opt-unknown-name-msg "$work/err" "policy ppq: unknown option 'acess' (known: access)"
check policy-opt-out-of-range 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy dss --policy-opt token_bits=32 --out "$work/p"
expect_text policy-opt-out-of-range-msg "$work/err" "policy dss: option token_bits must be an integer from 2 to 31, or auto, not '32'"
check policy-opt-list-element 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy leaky-bucket --policy-opt shares=3:0 --out "$work/p"
expect_text policy-opt-list-element-msg "$work/err" "option shares must be integers from 1 to 255 separated by ':', not '3:0'"
# Detected only once the model is built (13 SMs need more than 2-bit tokens): still bad input.
check policy-opt-too-small-for-gpu 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy dss \
  --policy-opt token_bits=2 --out "$work/p"
expect_text policy-opt-too-small-msg "$work/err" "token_bits"
check run-ppq-drain 0 "$gpumux" run --gpu "$gpu" --workload "$src/configs/workloads/demo-parboil-4proc.yaml" \
  --policy ppq --policy-opt access=exclusive --preemption drain --out "$work/ppq" --quiet
check run-dss-cs 0 "$gpumux" run --gpu "$gpu" --workload "$src/configs/workloads/demo-parboil-4proc.yaml" \
  --policy dss --out "$work/dss" --quiet
check dss-preemptions-listed 0 python3 -c "import json; s=json.load(open('$work/dss/stats.json')); assert len(s['preemptions'])>0 and s['preemptions'][0]['mechanism']=='context-switch'"
# Effective option values, defaults filled in.
check ppq-policy-options 0 python3 -c "import json; s=json.load(open('$work/ppq/stats.json')); assert s['policy_options']=={'access': 'exclusive'}, s['policy_options']"
check dss-policy-options 0 python3 -c "import json; s=json.load(open('$work/dss/stats.json')); assert s['policy_options']=={'token_bits': 'auto', 'preempt_done_starts': 'on', 'tokens': 'process', 'latency': 'instant', 'search_width': 1}, s['policy_options']"

# A DSS search wider than the entries it compares is a configuration mistake, not a silent clamp.
check dss-search-width-too-wide 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy dss \
  --policy-opt latency=hardware --policy-opt search_width=4096 --out "$work/n"
expect_text dss-search-width-too-wide-msg "$work/err" "search_width 4096 is more than the"

# Bad command-line input: exit 2, naming the option and its range, before any simulation.
check seed-negative 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --seed -1 --out "$work/n"
expect_text seed-negative-msg "$work/err" "--seed must be an integer from 0 to 18446744073709551615, not '-1'"
check seed-too-big 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --seed 18446744073709551616 --out "$work/n"
expect_text seed-too-big-msg "$work/err" "--seed must be an integer from 0 to"
check jobs-negative 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --jobs -2 --out "$work/n"
expect_text jobs-negative-msg "$work/err" "--jobs must be an integer from 1 to 1024, not '-2'"
check jobs-zero 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --jobs 0 --out "$work/n"
expect_text jobs-zero-msg "$work/err" "--jobs must be an integer from 1 to 1024, not '0'"
check jobs-text 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --jobs two --out "$work/n"
expect_text jobs-text-msg "$work/err" "--jobs must be an integer from 1 to 1024, not 'two'"
check timeout-negative 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --timeout -5 --out "$work/n"
expect_text timeout-negative-msg "$work/err" "--timeout must be an integer from 0 to 604800, not '-5'"
check timeout-too-big 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --timeout 604801 --out "$work/n"
expect_text timeout-too-big-msg "$work/err" "--timeout must be an integer from 0 to 604800"
check bench-tbs-negative 2 "$gpumux" bench --tbs -5
expect_text bench-tbs-negative-msg "$work/err" "--tbs must be an integer from 1000 to 100000000, not '-5'"
check bench-tbs-too-big 2 "$gpumux" bench --tbs 100000001
expect_text bench-tbs-too-big-msg "$work/err" "--tbs must be an integer from 1000 to 100000000"
check bench-tbs-too-small 2 "$gpumux" bench --tbs 999
check experiment-jobs-negative 2 "$gpumux" experiment "$src/configs/experiments/smoke.yaml" --out "$work/n" --jobs -2
expect_text experiment-jobs-negative-msg "$work/err" "--jobs must be an integer from 1 to 1024, not '-2'"
check experiment-jobs-zero 2 "$gpumux" experiment "$src/configs/experiments/smoke.yaml" --out "$work/n" --jobs 0
expect_text experiment-jobs-zero-msg "$work/err" "--jobs must be an integer from 1 to 1024, not '0'"
check experiment-timeout-negative 2 "$gpumux" experiment "$src/configs/experiments/smoke.yaml" --dry-run --timeout -5
expect_text experiment-timeout-negative-msg "$work/err" "--timeout must be an integer from 0 to 604800, not '-5'"
# Extra positional arguments are errors, not ignored.
check run-extra-argument 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" extra --out "$work/n"
expect_text run-extra-argument-msg "$work/err" "unexpected argument 'extra': gpumux run takes no such argument"
check bench-extra-argument 2 "$gpumux" bench extra
expect_text bench-extra-argument-msg "$work/err" "unexpected argument 'extra': gpumux bench"
check experiment-extra-argument 2 "$gpumux" experiment "$src/configs/experiments/smoke.yaml" extra --dry-run
expect_text experiment-extra-argument-msg "$work/err" "unexpected argument 'extra': gpumux experiment"
check experiment-missing-file 2 "$gpumux" experiment --dry-run
expect_text experiment-missing-file-msg "$work/err" "the experiment FILE is missing"
check list-extra-argument 2 "$gpumux" list policies extra
expect_text list-extra-argument-msg "$work/err" "unexpected argument 'extra'"

# A long workload (200 million thread blocks, half a minute or more of simulation): output paths
# are checked before simulating (exit 2 at once, where checking afterwards would hit the 1 s timeout:
# exit 1), the wall-clock limit fires, and killing the parent leaves no child and no temporary file.
mkdir -p "$work/long" "$work/tmp"
long="$work/long/gpumux-cli-long-$$.yaml"  # unique: marks this test's processes
cat >"$long" <<YAML
name: long
kernel_libraries: [$src/configs/kernels/parboil.yaml]
processes:
  - name: spin
    repeat: 20
    streams:
      - - kernel: {name: mysgemmNT, launches: 20000}
YAML
touch "$work/a-file"
check out-under-file 2 "$gpumux" run --gpu "$gpu" --workload "$long" --timeout 1 --out "$work/a-file/out"
expect_text out-under-file-msg "$work/err" "--out: cannot create output directory '$work/a-file/out'"
check vcd-under-file 2 "$gpumux" run --gpu "$gpu" --workload "$long" --timeout 1 --out "$work/o" \
  --vcd "$work/a-file/trace.vcd"
expect_text vcd-under-file-msg "$work/err" "--vcd: cannot create directory '$work/a-file'"
check timeline-under-file 2 "$gpumux" run --gpu "$gpu" --workload "$long" --timeout 1 --out "$work/o" \
  --timeline "$work/a-file/sub/timeline.json"
expect_text timeline-under-file-msg "$work/err" "--timeline: cannot create directory '$work/a-file/sub'"
check timeline-is-dir 2 "$gpumux" run --gpu "$gpu" --workload "$long" --timeout 1 --out "$work/o" --timeline "$work"
expect_text timeline-is-dir-msg "$work/err" "--timeline: '$work' is a directory, not a file"
check experiment-out-under-file 2 "$gpumux" experiment "$src/configs/experiments/smoke.yaml" --out "$work/a-file/x"
expect_text experiment-out-under-file-msg "$work/err" "--out: cannot create output directory '$work/a-file/x'"
# A directory where no file can be created, even by root.
check vcd-unwritable-proc 2 "$gpumux" run --gpu "$gpu" --workload "$long" --timeout 1 --out "$work/o" \
  --vcd /proc/self/trace.vcd
expect_text vcd-unwritable-proc-msg "$work/err" "--vcd: cannot write in directory '/proc/self'"
check experiment-out-unwritable-proc 2 "$gpumux" experiment "$src/configs/experiments/smoke.yaml" --out /proc/self
expect_text experiment-out-unwritable-proc-msg "$work/err" "--out: cannot write in output directory '/proc/self'"
expect_no_text experiment-out-checked-before-plan "$work/out" "simulations"
if [ "$(id -u)" -ne 0 ]; then  # root writes anywhere
  mkdir -p "$work/readonly" && chmod 555 "$work/readonly"
  check vcd-unwritable 2 "$gpumux" run --gpu "$gpu" --workload "$long" --timeout 1 --out "$work/o" \
    --vcd "$work/readonly/trace.vcd"
  expect_text vcd-unwritable-msg "$work/err" "--vcd: cannot write in directory '$work/readonly'"
  check out-unwritable 2 "$gpumux" run --gpu "$gpu" --workload "$long" --timeout 1 --out "$work/readonly"
  expect_text out-unwritable-msg "$work/err" "--out: cannot write in output directory '$work/readonly'"
fi
# A missing directory of --vcd and --timeline is created, as --out is.
check vcd-new-dir 0 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --out "$work/nd" --quiet \
  --vcd "$work/nd/new/deeper/trace.vcd" --timeline "$work/nd/other/timeline.json"
check vcd-new-dir-written 0 test -s "$work/nd/new/deeper/trace.vcd" -a -s "$work/nd/other/timeline.json"

# The default output folder out/<name> never leaves out/ (the loader rejects the name; run_command
# refuses such a default too).
mkdir -p "$work/cwd/sub"
cat >"$work/escape.yaml" <<YAML
name: ../../escaped
kernel_libraries: [$src/configs/kernels/parboil.yaml]
processes:
  - name: a
    streams:
      - - kernel: {name: mysgemmNT}
YAML
# shellcheck disable=SC2016 # the inner script's arguments
check name-escapes-out 2 bash -c 'cd "$1" && exec "$2" run --gpu "$3" --workload "$4"' _ "$work/cwd/sub" \
  "$(realpath "$gpumux")" "$gpu" "$work/escape.yaml"
expect_text name-escapes-out-msg "$work/err" "'../../escaped'"
expect_text name-escapes-out-folder "$work/err" "output folder"
check name-escapes-out-nothing-written 1 test -e "$work/cwd/escaped"

# The wall-clock limit covers the isolated baselines (of run and experiment): exit 1 naming the
# simulation, the limit and how far it got.
check run-timeout 1 env TMPDIR="$work/tmp" "$gpumux" run --gpu "$gpu" --workload "$long" --out "$work/o" \
  --no-cache --timeout 1
expect_text run-timeout-workload "$work/err" "workload 'long/spin (isolated)', policy fcfs, seed 1"
expect_text run-timeout-limit "$work/err" "no result within the wall-clock limit of 1 s (--timeout 1)"
expect_text run-timeout-simulated "$work/err" "ms simulated"
cat >"$work/long-exp.yaml" <<YAML
gpu: $gpu
analysis: summary
workloads: [$long]
runs:
  - {label: fcfs, policy: fcfs}
YAML
check experiment-timeout 1 env TMPDIR="$work/tmp" "$gpumux" experiment "$work/long-exp.yaml" --out "$work/le" \
  --no-cache --timeout 1 --quiet
expect_text experiment-timeout-workload "$work/err" "workload 'long/spin (isolated)', policy fcfs, seed 1"
expect_text experiment-timeout-limit "$work/err" "wall-clock limit of 1 s"
check tmpdir-empty-after-timeouts 0 test -z "$(ls -A "$work/tmp")"
# Results go through $TMPDIR.
check tmpdir-respected 1 env TMPDIR="$work/missing-tmp" "$gpumux" run --gpu "$gpu" --workload "$sgemm" \
  --out "$work/o" --no-cache --quiet
expect_text tmpdir-respected-msg "$work/err" "in '$work/missing-tmp' (\$TMPDIR)"

alive() {  # alive PID: the process exists and is not a zombie
  [ -r "/proc/$1/stat" ] && ! awk '{exit ($3 == "Z") ? 0 : 1}' "/proc/$1/stat" 2>/dev/null
}

kill_parent() {  # kill_parent NAME SIGNAL COMMAND...: start, kill the parent mid-simulation, check
  local name="$1" signal="$2"
  shift 2
  set -m  # job control: a background job does not ignore SIGINT
  TMPDIR="$work/tmp" "$@" >/dev/null 2>&1 &
  local parent=$!
  set +m
  local children="" _
  for _ in $(seq 200); do
    children="$(pgrep -P "$parent")" && break
    sleep 0.05
  done
  sleep 0.5
  kill -"$signal" "$parent"
  wait "$parent" 2>/dev/null
  local left="$children"
  for _ in $(seq 100); do
    left=""
    for c in $children; do alive "$c" && left="$left $c"; done
    [ -z "$left" ] && break
    sleep 0.05
  done
  if [ -n "$children" ] && [ -z "$left" ] && ! pgrep -f "gpumux-cli-long-$$" >/dev/null &&
    [ -z "$(ls -A "$work/tmp")" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: children '$children', still running '$left', temp files: $(ls -A "$work/tmp")"
    pgrep -af "gpumux-cli-long-$$" | sed 's/^/  /'
    for c in $left; do kill -KILL "$c"; done
  fi
}
kill_parent kill-run-sigkill KILL "$gpumux" run --gpu "$gpu" --workload "$long" --out "$work/o" --no-cache
kill_parent kill-run-sigterm TERM "$gpumux" run --gpu "$gpu" --workload "$long" --out "$work/o" --no-cache
kill_parent kill-run-sigint INT "$gpumux" run --gpu "$gpu" --workload "$long" --out "$work/o" --no-cache
kill_parent kill-experiment-sigkill KILL "$gpumux" experiment "$work/long-exp.yaml" --out "$work/le" --no-cache
kill_parent kill-experiment-sigterm TERM "$gpumux" experiment "$work/long-exp.yaml" --out "$work/le" --no-cache

# Warp-level SMs in a run (docs/user-guide.md "Choosing a fidelity"): a small kernel with a program,
# deterministic stats with the warp figures, and the errors of --sm-model and --warp-scheduler.
cat >"$work/warp-kernels.yaml" <<'YAML'
name: warp-cli
kernels:
  - name: stream
    thread_blocks: 32
    threads_per_tb: 128
    registers_per_tb: 2048
    tb_time: {mean_us: 2}
    program:
      - alu r2 <- r0, r1
      - loop: 4
        body:
          - ldg r3 <- r2 128B coalesced
          - alu r4 <- r3, r2
          - stg r4, r2 128B coalesced
  - name: no_program
    thread_blocks: 8
    threads_per_tb: 128
    registers_per_tb: 2048
    tb_time: {mean_us: 2}
YAML
printf 'name: warp-cli\nkernel_libraries: [warp-kernels.yaml]\nprocesses:\n  - name: a\n    streams: [[{kernel: {name: stream}}]]\n  - name: b\n    arrival_ns: 500\n    streams: [[{kernel: {name: stream}}]]\n' >"$work/warp-w.yaml"
printf 'name: warp-cli-np\nkernel_libraries: [warp-kernels.yaml]\nprocesses:\n  - name: a\n    streams: [[{kernel: {name: no_program}}]]\n' >"$work/warp-np.yaml"
check run-warp 0 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model warp --warp-scheduler gto \
  --policy dss --out "$work/warp1" -q
check run-warp-again 0 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model warp --warp-scheduler gto \
  --policy dss --out "$work/warp2" -q
check run-warp-deterministic 0 cmp "$work/warp1/stats.json" "$work/warp2/stats.json"
check run-warp-stats 0 python3 -c "
import json
d = json.load(open('$work/warp1/stats.json'))
assert d['sm_model'] == 'warp' and d['warp_scheduler'] == 'gto', d['sm_model']
assert [k['instructions'] for k in d['kernels']] == [32 * 4 * (1 + 4 * 4)] * 2, d['kernels']
w = d['sms'][0]['warp']
assert w['instructions'] > 0 and 0 < w['ipc'] and w['issue_slots'] >= w['instructions'], w
assert sum(s['warp']['instructions'] for s in d['sms']) == 2 * 32 * 4 * 17
assert d['invariants']['thread_blocks_completed'] == 64
"
check run-sm-model-bad 2 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model cycle -q
expect_text run-sm-model-bad-msg "$work/err" "--sm-model must be tb or warp, not 'cycle'"
check run-warp-scheduler-bad 2 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model warp \
  --warp-scheduler gtx -q
expect_text run-warp-scheduler-bad-msg "$work/err" "unknown warp scheduler 'gtx' (known: gto, lrr,"
check run-warp-no-program 2 "$gpumux" run --gpu "$gpu" --workload "$work/warp-np.yaml" --sm-model warp -q
expect_text run-warp-no-program-msg "$work/err" "warp-kernels.yaml:15:5: 'program': kernel 'no_program' has no program"
sed '/^  warp:/,/^[a-z]/{/^[a-z]/!d}' "$gpu" >"$work/no-warp-gpu.yaml"
check run-warp-no-section 2 "$gpumux" run --gpu "$work/no-warp-gpu.yaml" --workload "$work/warp-w.yaml" \
  --sm-model warp -q
expect_text run-warp-no-section-msg "$work/err" "has no sm.warp section"
# Warps per phase over time (docs/user-guide.md "Warps per phase over time"): the trace of the run above
# with its named fields, counts within the GPU's resident-warp limit and conserved per sample, the
# same stats.json as without it, and the errors of --phase-trace and --phase-trace-interval.
check run-phase-trace 0 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model warp \
  --warp-scheduler gto --policy dss --out "$work/warp3" --phase-trace "$work/phases.json" --phase-trace-interval 50 -q
check run-phase-trace-same-stats 0 cmp "$work/warp1/stats.json" "$work/warp3/stats.json"
check run-phase-trace-fields 0 python3 -c "
import json
t = json.load(open('$work/phases.json'))
assert t['format'] == 'gpumux-phase-trace' and t['interval_cycles'] == 50 and t['sms'] == 13, t['format']
assert t['max_warps_per_sm'] == 64 and t['warp_scheduler'] == 'gto' and t['core_clock_mhz'] == 706, t
assert [(k['kernel'], k['name'], k['process']) for k in t['kernels']] == [(0, 'stream', 0), (1, 'stream', 1)], t['kernels']
phases = t['kernels'][0]['phases']
assert phases >= 2 and t['kernels'][1]['phases'] == phases, t['kernels']
s = t['samples']
assert [x['cycle'] for x in s] == list(range(0, 50 * len(s), 50)), 'cycles not 0, 50, 100, ...'
assert s[-1]['time_ps'] <= t['end_ps'] < s[-1]['time_ps'] + 50 * 1416.5, (s[-1], t['end_ps'])
limit = t['sms'] * t['max_warps_per_sm']
seen = set()
for x in s:
    assert set(x) == {'cycle', 'time_ps', 'active_warps', 'alu_in_flight', 'loads_in_flight', 'kernels'}, x
    total = 0
    for k in x['kernels']:
        assert set(k) == {'kernel', 'warps_by_phase'} and len(k['warps_by_phase']) == phases, k
        assert sum(k['warps_by_phase']) > 0 and min(k['warps_by_phase']) >= 0, x
        total += sum(k['warps_by_phase'])
        seen.add(k['kernel'])
    assert total == x['active_warps'] <= min(limit, 2 * 32 * 4), x
assert max(x['active_warps'] for x in s) > 0 and seen == {0, 1}, seen
assert max(x['loads_in_flight'] for x in s) > 0 and max(x['alu_in_flight'] for x in s) > 0
assert s[0]['active_warps'] == 0 and s[0]['kernels'] == [], s[0]  # before the first thread block
"
# Every cycle: each phase is seen (phase 0 is one 4-cycle instruction) and, at the cycles both traces
# sample, the same counts: a sample does not depend on when the next one is due.
check run-phase-trace-every-cycle 0 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model warp \
  --warp-scheduler gto --policy dss --out "$work/warp4" --phase-trace "$work/phases1.json" --phase-trace-interval 1 -q
check run-phase-trace-every-cycle-same-stats 0 cmp "$work/warp1/stats.json" "$work/warp4/stats.json"
check run-phase-trace-every-cycle-counts 0 python3 -c "
import json
every = json.load(open('$work/phases1.json'))
s = every['samples']
phases = every['kernels'][0]['phases']
assert [x['cycle'] for x in s] == list(range(len(s))), 'cycles not 0, 1, 2, ...'
assert all(max([k['warps_by_phase'][p] for x in s for k in x['kernels']]) > 0 for p in range(phases)), 'a phase never seen'
coarse = json.load(open('$work/phases.json'))['samples']
assert len(coarse) > 10 and all(x == s[x['cycle']] for x in coarse), 'the 50-cycle samples differ from the 1-cycle ones'
"
check run-phase-trace-tb 2 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model tb \
  --phase-trace "$work/phases-tb.json" -q
expect_text run-phase-trace-tb-msg "$work/err" "--phase-trace needs warp-level SMs (--sm-model warp, or a GPU whose sm.model is warp)"
check run-phase-trace-tb-gpu 2 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --phase-trace "$work/phases-tb.json" -q
expect_text run-phase-trace-tb-gpu-msg "$work/err" "this run's SMs are thread-block level"
check run-phase-trace-no-file 0 test ! -e "$work/phases-tb.json"
check run-phase-trace-interval-0 2 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model warp \
  --phase-trace "$work/phases0.json" --phase-trace-interval 0 -q
expect_text run-phase-trace-interval-0-msg "$work/err" "--phase-trace-interval must be an integer from 1 to 1000000000, not '0'"
check run-phase-trace-interval-big 2 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model warp \
  --phase-trace "$work/phases0.json" --phase-trace-interval 1000000001 -q
check run-phase-trace-interval-alone 2 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model warp \
  --phase-trace-interval 100 -q
expect_text run-phase-trace-interval-alone-msg "$work/err" "--phase-trace-interval needs --phase-trace FILE"
check run-phase-trace-dir 2 "$gpumux" run --gpu "$gpu" --workload "$work/warp-w.yaml" --sm-model warp \
  --phase-trace "$work" -q
expect_text run-phase-trace-dir-msg "$work/err" "--phase-trace: '$work' is a directory, not a file"

# Experiments on warp-level SMs (docs/config.md "Experiment files": a run's sm_model and warp_scheduler;
# docs/user-guide.md "Analyses": awatramani-warp-schedulers): a cut of
# configs/experiments/awatramani-warp-schedulers.yaml (two kernels x three schedulers, a few seconds),
# its named rows and per-run warp figures, the same figures as `gpumux run` of one of its runs (what
# scripts/awatramani-warp-schedulers' tail runs read), and the errors of the two run keys.
aw="$src/configs/workloads/awatramani"
cat >"$work/aw.yaml" <<YAML
gpu: $src/configs/gpus/tesla-m2090.yaml
analysis: awatramani-warp-schedulers
workloads: [$aw/Heart.yaml, $aw/HIST.yaml]
runs:
  - {label: rr, policy: fcfs, sm_model: warp, warp_scheduler: lrr}
  - {label: greedy, policy: fcfs, sm_model: warp, warp_scheduler: gto}
  - {label: pa, policy: fcfs, sm_model: warp, warp_scheduler: phase-aware}
paper:
  B/single/rr_over_gto: 1.092
YAML
check experiment-warp 0 "$gpumux" experiment "$work/aw.yaml" --out "$work/aw" --jobs 2
expect_text experiment-warp-plan "$work/out" "2 workloads x 3 runs x 1 seed = 6 simulations, plus 0 isolated baselines"
expect_text experiment-warp-md "$work/aw/report.md" "| Heart | B | 56 |"
expect_text experiment-warp-md-paper "$work/aw/report.md" "| B/single/rr_over_gto |"
expect_text experiment-warp-md-missing "$work/aw/report.md" "No run for two-level-lrr, two-level-gto, two-level-phase-aware"
check experiment-warp-run-gto 0 "$gpumux" run --gpu "$src/configs/gpus/tesla-m2090.yaml" --workload "$aw/Heart.yaml" \
  --sm-model warp --warp-scheduler gto --out "$work/aw-run" -q
check experiment-warp-report 0 python3 - "$work/aw/report.json" "$work/aw-run/stats.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
stats = json.load(open(sys.argv[2]))
assert r["analysis"] == "awatramani-warp-schedulers" and r["gpu"] == "tesla-m2090", r["analysis"]
assert [(x["label"], x["sm_model"], x["warp_scheduler"]) for x in r["grid"]["runs"]] == [
    ("rr", "warp", "lrr"), ("greedy", "warp", "gto"), ("pa", "warp", "phase-aware")], r["grid"]["runs"]
rows = {x["name"]: x for x in r["rows"]}
m = {k: v["model"] for k, v in rows.items()}
# Heartwall (type B): RR well ahead of GTO single-level, phase-aware between them (validation.md).
assert m["Heart/single/gto_over_rr"] < 0.95 and m["Heart/single/pa_over_gto"] > 1.0, m["Heart/single/gto_over_rr"]
assert abs(m["Heart/single/gto_over_rr"] - m["Heart/lrr/cycles"] / m["Heart/gto/cycles"]) < 1e-12
assert abs(m["Heart/single/pa_over_rr"] - m["Heart/lrr/cycles"] / m["Heart/phase-aware/cycles"]) < 1e-12
assert m["Heart/single/idle_gto_vs_rr_pct"] > 0 and m["Heart/gto/idle_share"] > m["Heart/lrr/idle_share"]
# HIST (type A): GTO ahead single-level.
assert m["HIST/single/gto_over_rr"] > 1.02, m["HIST/single/gto_over_rr"]
# No two-level runs in this grid: those rows are null, and there is no per-scheduler row for them.
assert m["Heart/two/gto_over_rr"] is None and m["B/two/rr_over_gto"] is None
assert "Heart/two-level-gto/cycles" not in rows
# Type averages: Heart is the only type-B kernel, HIST the only type-A one.
assert m["B/single/kernels"] == 1 and m["A/single/kernels"] == 1 and m["A/two/kernels"] == 1
assert abs(m["B/single/rr_over_gto"] - 1 / m["Heart/single/gto_over_rr"]) < 1e-12
assert rows["B/single/rr_over_gto"]["paper"] == 1.092 and rows["A/single/gto_over_rr"]["paper"] is None
assert m["B/single/model_type_agrees"] == 1 and m["A/single/model_type_agrees"] == 1
runs = {(x["workload"], x["label"]): x for x in r["runs"]}
assert len(runs) == 6
for (w, label), x in runs.items():
    assert x["sm_model"] == "warp" and x["stp"] is None and x["antt"] is None, x
    warp = x["warp"]
    idle = sum(warp["idle_slots"][c] for c in ("memory", "barrier", "no_warp", "other"))
    assert warp["instructions"] > 0 and 0 < idle < warp["issue_slots"], warp
    assert abs(m[w + "/" + x["warp_scheduler"] + "/idle_share"] - idle / warp["issue_slots"]) < 1e-12
    (k,) = x["kernels"]
    assert k["name"] == w and k["thread_blocks"] == {"Heart": 56, "HIST": 256}[w], k
    assert abs(m[w + "/" + x["warp_scheduler"] + "/cycles"] - (k["end_ns"] - k["start_ns"]) * 1.3) < 1e-6
# The experiment's run equals `gpumux run` of the same kernel and scheduler.
x = runs[("Heart", "greedy")]
(k,) = stats["kernels"]
assert (k["start_ns"], k["end_ns"], k["instructions"]) == (x["kernels"][0]["start_ns"], x["kernels"][0]["end_ns"],
                                                             x["kernels"][0]["instructions"]), (k, x["kernels"])
assert sum(s["warp"]["issue_slots"] for s in stats["sms"]) == x["warp"]["issue_slots"]
assert sum(s["warp"]["idle_slots"]["memory"] for s in stats["sms"]) == x["warp"]["idle_slots"]["memory"]
assert stats["memory"]["busy_ns"] == x["memory_busy_ns"]
PY
check experiment-awatramani-dry-run 0 "$gpumux" experiment "$src/configs/experiments/awatramani-warp-schedulers.yaml" --dry-run
expect_text experiment-awatramani-dry-run-plan "$work/out" "14 workloads x 6 runs x 1 seed = 84 simulations, plus 0 isolated baselines"
expect_text experiment-awatramani-dry-run-rows "$work/out" "LUD/two/gto_over_rr"
check gen-awatramani-workloads-check 0 "$src/scripts/gen-awatramani-workloads" --check
bad_warp_exp() {  # bad_warp_exp NAME GPU WORKLOAD RUN EXPECTED_TEXT...: exit 2, file:line (line 5) and the texts
  local name="$1" gpu_file="$2" workload="$3" run="$4"
  shift 4
  printf 'gpu: %s\nanalysis: summary\nworkloads: [%s]\nruns:\n  - %s\n' "$gpu_file" "$workload" "$run" \
    >"$work/aw-bad.yaml"
  check "$name" 2 "$gpumux" experiment "$work/aw-bad.yaml" --dry-run
  expect_text "$name-line" "$work/err" "aw-bad.yaml:5:"
  local text
  for text in "$@"; do expect_text "$name-msg" "$work/err" "$text"; done
}
m2090="$src/configs/gpus/tesla-m2090.yaml"
bad_warp_exp experiment-warp-scheduler-unknown "$m2090" "$aw/Heart.yaml" \
  "{label: a, policy: fcfs, sm_model: warp, warp_scheduler: gtx}" "'runs[0].warp_scheduler'" \
  "unknown warp scheduler 'gtx' (did you mean 'gto'?); known: gto, lrr, phase-aware"
bad_warp_exp experiment-copy-policy-unknown "$m2090" "$aw/Heart.yaml" "{label: a, policy: npq, copy_policy: priority}" \
  "'runs[0].copy_policy'" "unknown copy policy 'priority'; expected fcfs (copies in arrival order) or npq"
bad_warp_exp experiment-sm-model-unknown "$m2090" "$aw/Heart.yaml" "{label: a, policy: fcfs, sm_model: cycle}" \
  "'runs[0].sm_model'" "unknown SM model 'cycle'; expected tb"
bad_warp_exp experiment-warp-scheduler-with-tb "$m2090" "$aw/Heart.yaml" \
  "{label: a, policy: fcfs, sm_model: tb, warp_scheduler: gto}" "'runs[0].warp_scheduler'" \
  "a warp scheduler needs warp-level SMs, but this run sets sm_model: tb"
bad_warp_exp experiment-warp-scheduler-tb-gpu "$m2090" "$aw/Heart.yaml" "{label: a, policy: fcfs, warp_scheduler: gto}" \
  "'runs[0].warp_scheduler'" "its SMs are thread-block level (GPU 'tesla-m2090' has sm.model tb"
bad_warp_exp experiment-warp-no-section "$work/no-warp-gpu.yaml" "$work/warp-w.yaml" \
  "{label: a, policy: fcfs, sm_model: warp}" "'runs[0].sm_model'" "has no sm.warp section"
printf 'gpu: %s\nanalysis: summary\nworkloads: [%s]\nruns:\n  - {label: a, policy: fcfs}\n  - {label: w, policy: fcfs, sm_model: warp}\n' \
  "$gpu" "$work/warp-np.yaml" >"$work/aw-np.yaml"
check experiment-warp-no-program 2 "$gpumux" experiment "$work/aw-np.yaml" --dry-run
expect_text experiment-warp-no-program-msg "$work/err" \
  "warp-kernels.yaml:15:5: 'program': kernel 'no_program' (workload 'warp-cli-np') has no program, which run 'w' ($work/aw-np.yaml:6) executes on warp-level SMs"

# Config values outside their physical range, and files that are not configs, through the binary:
# exit 2 with file:line and key (each once gave exit 0 with a wrong result, a hang or exit 1).
bad_gpu() {  # bad_gpu NAME SED_EXPR EXPECTED_TEXT
  sed "$2" "$gpu" >"$work/bad-gpu.yaml"
  check "$1" 2 "$gpumux" run --gpu "$work/bad-gpu.yaml" --workload "$sgemm" --out "$work/bad" -q
  expect_text "$1-msg" "$work/err" "$3"
}
bad_gpu range-bandwidth 's/bandwidth_gb_per_s: [0-9]*/bandwidth_gb_per_s: 1e-300/' \
  "bad-gpu.yaml:42:23: 'memory.bandwidth_gb_per_s': must be between 0.1 and 100000 GB/s, got 1e-300"
bad_gpu range-mem-latency 's/^  latency_ns: 400 /  latency_ns: 1e17 /' \
  "'memory.latency_ns': must be between 0 and 1e+06 ns, got 1e17"
bad_gpu range-pcie-clock 's/^  clock_mhz: 500 /  clock_mhz: 1e-300 /' "'pcie.clock_mhz': must be between 1 and 100000 MHz"
bad_gpu range-sms 's/^sms: 13 /sms: 4294967295 /' "'sms': must be between 1 and 1024 SMs, got 4294967295"
bad_gpu range-queues 's/command_queues: 32 /command_queues: 4294967295 /' "'frontend.command_queues': must be between 1 and 1024"
bad_gpu range-burst 's/^  burst_bytes: 4096 /  burst_bytes: 4294967295 /' "'pcie.burst_bytes': must be between 1 and 1048576 bytes"
bad_gpu name-not-utf8 "s/^name: .*/name: k$(printf '\xff')20c/" "bad-gpu.yaml:3:7: 'name': is not valid UTF-8 at byte 1"
{ cat "$gpu"; printf -- '---\nsms: 4\n'; } >"$work/two-docs.yaml"
check two-documents 2 "$gpumux" run --gpu "$work/two-docs.yaml" --workload "$sgemm" --out "$work/bad" -q
expect_text two-documents-msg "$work/err" "2 YAML documents"
check gpu-dev-zero 2 timeout 20 "$gpumux" run --gpu /dev/zero --workload "$sgemm" --out "$work/bad" -q
expect_text gpu-dev-zero-msg "$work/err" "/dev/zero: is not a regular file"
mkdir -p "$work/lib"
cat >"$work/lib/long.yaml" <<'YAML'
kernels:
  - {name: long, thread_blocks: 13, threads_per_tb: 256, registers_per_tb: 8192, tb_time: {mean_us: 5e7}}
YAML
cat >"$work/lib/slow.yaml" <<'YAML'
kernel_libraries: [long.yaml]
processes:
  - name: p
    repeat: 25
    streams:
      - - kernel: {name: long, launches: 10000}
YAML
check horizon 2 "$gpumux" run --gpu "$gpu" --workload "$work/lib/slow.yaml" --out "$work/bad" -q
expect_text horizon-msg "$work/err" "slow.yaml:6:19: process 'p' (25 run(s)): with this command the workload's time passes the model's horizon"
sed 's/^    repeat: 25/    repeat: 1/; s/launches: 1000000/launches: 1/; s/^  - name: p/  - name: p\n    tokens: 300/' \
  "$work/lib/slow.yaml" >"$work/lib/tokens.yaml"
check dss-tokens-beyond-counter 2 "$gpumux" run --gpu "$gpu" --workload "$work/lib/tokens.yaml" --policy dss --out "$work/bad" -q
expect_text dss-tokens-beyond-counter-msg "$work/err" "300 tokens, more than the 8-bit token counter holds (at most 127)"
check adaptive-threshold-inf 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy srtf-adaptive --policy-opt threshold=inf --out "$work/bad" -q
expect_text adaptive-threshold-inf-msg "$work/err" "option threshold must be a finite number"

# Perf-Sat (Awatramani 4.3) needs warp-level SMs: with TB-level ones exit 2 naming the file, the line and
# the key; with --sm-model warp the run goes, and its summary and stats.json carry the detection.
m2090="$src/configs/gpus/tesla-m2090.yaml"
{ cat "$m2090"; printf 'perf_sat:\n  enabled: on\n'; } >"$work/perf-sat.yaml"
ps_line=$(($(wc -l <"$m2090") + 2))
lud="$src/configs/workloads/awatramani/LUD.yaml"
check perf-sat-tb-level 2 "$gpumux" run --gpu "$work/perf-sat.yaml" --workload "$lud" --out "$work/bad" -q
expect_text perf-sat-tb-level-msg "$work/err" "perf-sat.yaml:$ps_line:12: 'perf_sat.enabled': Perf-Sat reads each SM's stalled cycles"
check perf-sat-warp 0 "$gpumux" run --gpu "$work/perf-sat.yaml" --workload "$lud" --sm-model warp \
  --warp-scheduler gto --out "$work/perf-sat"
expect_text perf-sat-summary "$work/out" "Perf-Sat (Awatramani 4.3)"
python3 - "$work/perf-sat/stats.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ps = d["perf_sat"]
assert ps["sample_period_cycles"] == 0 and ps["max_toggles"] == 3, ps
records = [k for s in ps["sms"] for k in s["kernels"]]
assert len(records) == 16 and all(1 <= r["detected"] <= r["n_max"] == 6 for r in records), records
assert all(r["samples"] and r["limit_over_time"][0]["limit"] == r["start"] == 3 for r in records)
k = d["kernels"][0]
assert k["perf_sat"]["sms"] == 16 and k["workload_class"]["class"] in ("C-strong", "C-weak", "MEM"), k
PY
check perf-sat-stats 0 test $? -eq 0

# Active cores (Awatramani 4.4): a detector with TB-level SMs, and under a policy that keeps its own record of
# the SMs it assigned, exits 2 naming the file, the line and the key; under fcfs at warp level the run goes
# and stats.json carries the detection and the power report.
{ cat "$m2090"; printf 'active_cores:\n  detector: onac\npower:\n  enabled: on\n'; } >"$work/onac.yaml"
ac_line=$(($(wc -l <"$m2090") + 2))
check onac-tb-level 2 "$gpumux" run --gpu "$work/onac.yaml" --workload "$lud" --out "$work/bad" -q
expect_text onac-tb-level-msg "$work/err" "onac.yaml:$ac_line:13: 'active_cores.detector': active-core detection samples"
check onac-dss 2 "$gpumux" run --gpu "$work/onac.yaml" --workload "$lud" --sm-model warp --policy dss \
  --out "$work/bad" -q
expect_text onac-dss-msg "$work/err" "onac.yaml:$ac_line:13: 'active_cores.detector': active-core detection runs under the fcfs and fifo policies only"
check onac-warp 0 "$gpumux" run --gpu "$work/onac.yaml" --workload "$lud" --sm-model warp --policy fcfs \
  --out "$work/onac" -q
python3 - "$work/onac/stats.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ac = d["active_cores"]
assert ac["detector"] == "onac" and ac["sampling_period_waves"] == 4 and ac["tolerance"] == 0.02, ac
r = ac["records"][0]
assert r["cores"] == 16 and 1 <= r["n_opt"] <= 16 and r["samples"][0]["active_cores"] == 16, r
p = d["power"]
assert p["enabled"] and len(p["sms"]) == 16 and abs(p["total_j"] - p["static_j"] - p["dynamic_j"]) < 1e-12, p
PY
check onac-stats 0 test $? -eq 0

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
