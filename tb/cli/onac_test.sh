#!/usr/bin/env bash
# A slice of scripts/onac (issue 16, Awatramani 4.4.3-4.4.4): FWT cut to a few waves on the 32-core GPU of
# Table 4.3, written as an experiment file (analysis awatramani-onac) and run by `gpumux experiment`. Checks
# that the file brackets the oracle's count with `sms:` runs of this workload only, that the report has N_max,
# the oracle, ONAC and Seq-Det with counts within 1..32 and energy figures, that the same inputs give the same
# report, and that an unknown kernel is refused.
#   tb/cli/onac_test.sh GPUMUX SOURCE_DIR
set -euo pipefail
gpumux="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
run() {
  "$src/scripts/onac" --gpumux "$gpumux" --kernels FWT --waves 6 --jobs 2 --out "$work/out$1" "${@:2}" \
    >"$work/log$1" 2>&1 || { cat "$work/log$1"; fail "scripts/onac exited $?"; }
}
run 1
python3 - "$work/out1/report.json" "$work/out1/inputs/experiments/awatramani-onac.yaml" <<'PY' || fail "report.json"
import json, sys
import yaml
report = json.load(open(sys.argv[1]))
experiment = yaml.safe_load(open(sys.argv[2]))
assert report["analysis"] == "awatramani-onac", report["analysis"]
rows = {r["name"]: r for r in report["rows"]}
n_oracle = rows["FWT/n_oracle"]["model"]
assert n_oracle is not None and 1 <= n_oracle <= 32, rows["FWT/n_oracle"]
# The oracle runs are N_oracle and N_oracle - 1 (below 32, whose run is N_max), of FWT only.
oracle_runs = [r for r in experiment["runs"] if "sms" in r]
assert sorted(r["sms"] for r in oracle_runs) == [n for n in (n_oracle - 1, n_oracle) if 1 <= n < 32], oracle_runs
assert all(r["workloads"] == ["onac-FWT"] for r in oracle_runs), oracle_runs
assert experiment["workloads"] == [{"file": "../workloads/awatramani-onac/FWT.yaml", "group": "A"}], experiment
for det in ("onac", "seq_det"):
    assert 1 <= rows[f"FWT/n_opt_{det}"]["model"] <= 32, det
    assert rows[f"FWT/energy_percent_{det}"]["model"] > 0, det
    assert rows[f"FWT/ipc_percent_{det}"]["model"] > 0, det
assert rows["type_a/energy_saving_percent_onac"]["paper"] == 20, rows["type_a/energy_saving_percent_onac"]
runs = {r["label"]: r for r in report["runs"]}
for label, second in (("onac", 1), ("seq-det", 31)):
    rec = runs[label]["active_cores"][0]
    assert rec["samples"][0]["active_cores"] == 32, rec  # both sample every core first (4.4.2.2)
    assert len(rec["samples"]) < 2 or rec["samples"][1]["active_cores"] == second, rec
    assert rec["detected"] == (rec["ended_by"] == "detected"), rec
    assert runs[label]["power"]["total_j"] > 0, runs[label]
assert "active_cores" not in runs["n-max"] and runs["n-max"]["power"]["total_j"] > 0, runs["n-max"]
PY
grep -qE "^\| FWT \| A \| 576 \|" "$work/out1/report.md" || { cat "$work/out1/report.md"; fail "no FWT row"; }
# The experiment again from the same inputs (the search's runs reused: its answer is in the file).
mkdir -p "$work/out2" && cp -r "$work/out1/search" "$work/out2/search"
run 2 --reuse
cmp -s "$work/out1/inputs/experiments/awatramani-onac.yaml" "$work/out2/inputs/experiments/awatramani-onac.yaml" ||
  fail "the same search wrote another experiment file"
cmp -s "$work/out1/report.json" "$work/out2/report.json" || fail "the same inputs gave another report"
cmp -s "$work/out1/report.md" "$work/out2/report.md" || fail "the same inputs gave another report.md"
if "$src/scripts/onac" --gpumux "$gpumux" --kernels NOPE --out "$work/bad" >"$work/bad.log" 2>&1; then
  fail "an unknown kernel was accepted"
fi
grep -q "unknown kernel" "$work/bad.log" || fail "no message for an unknown kernel"
echo "onac slice: ok"
