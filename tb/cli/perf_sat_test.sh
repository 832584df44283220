#!/usr/bin/env bash
# A slice of scripts/perf-sat (issue 16, Awatramani 4.3.3): CFD (Table 4.2: Max 3) cut to 8 waves. Checks
# that the kernel built from Table 4.2's registers and threads has the table's Max on the M2090, that the
# sweep runs every limit 1..Max, that Perf-Sat's detection is within 1..Max on 16 SMs, that the same
# inputs give the same report, and that an unknown kernel is refused.
#   tb/cli/perf_sat_test.sh GPUMUX SOURCE_DIR
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
  "$src/scripts/perf-sat" --gpumux "$gpumux" --kernels CFD --waves 8 --jobs 2 --out "$work/out$1" \
    >"$work/log$1" 2>&1 || { cat "$work/log$1"; fail "scripts/perf-sat exited $?"; }
}
run 1
python3 - "$work/out1/report.json" <<'PY' || fail "report.json"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert len(rows) == 1, rows
r = rows[0]
assert r["kernel"] == "CFD" and r["max"] == 3, r
assert sorted(r["time_ns"]) == ["1", "2", "3"], r["time_ns"]
assert 1 <= r["opt"] <= 3 and 1 <= r["detected_mean"] <= 3 and r["sms"] == 16, r
assert r["sweep_type"] in ("C-strong", "C-weak", "MEM"), r
PY
grep -qE "^\| CFD \| 3 \| 3 \| [123] \|" "$work/out1/report.md" || { cat "$work/out1/report.md"; fail "no CFD row"; }
run 2
cmp -s "$work/out1/report.json" "$work/out2/report.json" || fail "the same inputs gave another report"
if "$src/scripts/perf-sat" --gpumux "$gpumux" --kernels NOPE --out "$work/bad" >"$work/bad.log" 2>&1; then
  fail "an unknown kernel was accepted"
fi
grep -q "unknown kernel" "$work/bad.log" || fail "no message for an unknown kernel"
echo "perf-sat slice: ok"
