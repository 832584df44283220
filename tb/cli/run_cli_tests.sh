#!/usr/bin/env bash
# The gpumux command line end to end: exit codes, error messages, outputs and determinism.
# usage: run_cli_tests.sh GPUMUX_BINARY SOURCE_DIR
set -uo pipefail
gpumux="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GPUMUX_CACHE_DIR="$work/cache"
passed=0
failed=0

check() {  # check NAME EXPECTED_EXIT COMMAND... ; output in $work/out, $work/err
  local name="$1" expected="$2"
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local code=$?
  if [ "$code" -eq "$expected" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $code, expected $expected"
    sed 's/^/  stdout: /' "$work/out" | head -20
    sed 's/^/  stderr: /' "$work/err" | head -20
  fi
}

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
check list-gpus 0 "$gpumux" list gpus
expect_text list-gpus-k20c "$work/out" "kepler-k20c.yaml"
check list-kernels 0 "$gpumux" list kernels
expect_text list-kernels-sgemm "$work/out" "mysgemmNT"
check list-unknown 2 "$gpumux" list nothing

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
slices = [e for e in t["traceEvents"] if e.get("ph") == "X" and e.get("pid") == 1]
assert len(slices) == 3 * 528, len(slices)
PY
expect_text vcd-header "$work/a/trace.vcd" "\$enddefinitions"
expect_text vcd-sm "$work/a/trace.vcd" "resident_tbs"
check run-sgemm-again 0 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --out "$work/b" --quiet
check deterministic 0 cmp "$work/a/stats.json" "$work/b/stats.json"
check run-sgemm-nocache 0 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --out "$work/c" --quiet --no-cache
check cache-matches-fresh 0 cmp "$work/a/stats.json" "$work/c/stats.json"
# The demo with a VCD: its times are not whole nanoseconds, and SystemC must not warn about them.
check run-demo-vcd 0 "$gpumux" run --gpu "$gpu" --workload "$src/configs/workloads/demo-parboil-4proc.yaml" \
  --out "$work/v" --vcd "$work/v/trace.vcd" --quiet
expect_no_text run-demo-vcd-no-warning "$work/err" "Warning"
expect_no_text run-demo-vcd-no-warning-stdout "$work/out" "Warning"
expect_text run-demo-vcd-ps "$work/v/trace.vcd" "1 ps"
check run-other-seed 0 "$gpumux" run --gpu "$gpu" --workload "$src/configs/workloads/demo-parboil-4proc.yaml" \
  --out "$work/d" --quiet --seed 5
check bench-json 0 "$gpumux" bench --json --tbs 20000
cp "$work/out" "$work/bench.json"
check bench-json-keys 0 python3 -c "import json; d=json.load(open('$work/bench.json')); assert d['tb_per_s']>0 and d['bare_events_per_s']>0 and d['ratio']>0"

# Experiments: the smoke experiment (fcfs and fifo only) end to end, its reports, determinism, errors.
smoke="$src/configs/experiments/smoke.yaml"
check experiment-help 0 "$gpumux" experiment --help
expect_text experiment-help-usage "$work/out" "gpumux experiment FILE --out DIR"
check experiment-smoke 0 "$gpumux" experiment "$smoke" --out "$work/exp" --jobs 2
expect_text experiment-prints-plan "$work/out" "= 4 simulations"
expect_text experiment-prints-rows "$work/out" "fifo/antt"
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
    for key in ("workload", "label", "policy", "preemption", "seed", "stp", "antt", "fairness", "processes"):
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
check policy-opt-malformed 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy ppq --policy-opt access --out "$work/p"
check policy-opt-unknown 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy fcfs --policy-opt access=shared --out "$work/p"
# Detected only once the model is built (13 SMs need more than 2-bit tokens): still bad input.
check policy-opt-too-small-for-gpu 2 "$gpumux" run --gpu "$gpu" --workload "$sgemm" --policy dss \
  --policy-opt token_bits=2 --out "$work/p"
expect_text policy-opt-too-small-msg "$work/err" "token_bits"
check run-ppq-drain 0 "$gpumux" run --gpu "$gpu" --workload "$src/configs/workloads/demo-parboil-4proc.yaml" \
  --policy ppq --policy-opt access=exclusive --preemption drain --out "$work/ppq" --quiet
check run-dss-cs 0 "$gpumux" run --gpu "$gpu" --workload "$src/configs/workloads/demo-parboil-4proc.yaml" \
  --policy dss --out "$work/dss" --quiet
check dss-preemptions-listed 0 python3 -c "import json; s=json.load(open('$work/dss/stats.json')); assert len(s['preemptions'])>0 and s['preemptions'][0]['mechanism']=='context-switch'"

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
