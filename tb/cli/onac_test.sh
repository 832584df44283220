#!/usr/bin/env bash
# A slice of scripts/onac (issue 16, Awatramani 4.4.3-4.4.4): FWT cut to a few waves on the 32-core GPU of
# Table 4.3. Checks that the report has N_max, the oracle, ONAC and Seq-Det with counts within 1..32 and
# energy and power figures, that the same inputs give the same report, and that an unknown kernel is refused.
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
  "$src/scripts/onac" --gpumux "$gpumux" --kernels FWT --waves 6 --jobs 2 --out "$work/out$1" \
    >"$work/log$1" 2>&1 || { cat "$work/log$1"; fail "scripts/onac exited $?"; }
}
run 1
python3 - "$work/out1/report.json" <<'PY' || fail "report.json"
import json, sys
report = json.load(open(sys.argv[1]))
rows = report["rows"]
assert len(rows) == 1, rows
r = rows[0]
assert r["kernel"] == "FWT" and r["type"] == "A" and r["tbs_per_sm"] == 3, r
assert 1 <= r["n_oracle"] <= 32, r
for det in ("onac", "seq-det"):
    d = r[det]
    assert 1 <= d["n_opt"] <= 32, d
    assert d["samples"] and d["samples"][0][0] == 32, d  # both sample every core first (4.4.2.2)
    assert d["energy_rel"] > 0 and d["power_rel"] > 0 and d["ipc_rel"] > 0, d
    assert d["detected"] == (d["ended_by"] == "detected"), d
assert r["onac"]["samples"][1][0] == 1 if len(r["onac"]["samples"]) > 1 else True, r["onac"]
assert r["seq-det"]["samples"][1][0] == 31 if len(r["seq-det"]["samples"]) > 1 else True, r["seq-det"]
assert r["oracle"]["energy_rel"] > 0, r
PY
grep -qE "^\| FWT \| A \| 576 \|" "$work/out1/report.md" || { cat "$work/out1/report.md"; fail "no FWT row"; }
run 2
cmp -s "$work/out1/report.json" "$work/out2/report.json" || fail "the same inputs gave another report"
if "$src/scripts/onac" --gpumux "$gpumux" --kernels NOPE --out "$work/bad" >"$work/bad.log" 2>&1; then
  fail "an unknown kernel was accepted"
fi
grep -q "unknown kernel" "$work/bad.log" || fail "no message for an unknown kernel"
echo "onac slice: ok"
