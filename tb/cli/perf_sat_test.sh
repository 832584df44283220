#!/usr/bin/env bash
# A slice of scripts/perf-sat (issue 16, Awatramani 4.3.3): CFD (Table 4.2: Max 3) cut to 8 waves, through
# the experiment file it writes and the awatramani-perf-sat analysis. Checks that the kernel built from
# Table 4.2's registers and threads has the table's Max on the M2090, that the sweep runs every limit
# 1..Max, that Perf-Sat's detection is within 1..Max, that the same inputs give the same report, and that
# an unknown kernel is refused.
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
report = json.load(open(sys.argv[1]))
assert report["analysis"] == "awatramani-perf-sat", report["analysis"]
rows = {r["name"]: r for r in report["rows"]}
assert rows["CFD/max"]["model"] == 3 and rows["CFD/max"]["paper"] == 3, rows["CFD/max"]
assert 1 <= rows["CFD/opt"]["model"] <= 3 and rows["CFD/opt"]["paper"] == 3, rows["CFD/opt"]
assert 1 <= rows["CFD/detected"]["model"] <= 3, rows["CFD/detected"]
assert rows["all/kernels"]["model"] == 1, rows["all/kernels"]
# The sweep runs every limit 1..Max, then Perf-Sat; every run on 16 SMs' worth of warp-level figures.
labels = [r["label"] for r in report["grid"]["runs"]]
assert labels == ["tb1", "tb2", "tb3", "perf-sat"], labels
assert [r.get("max_thread_blocks") for r in report["grid"]["runs"]] == [1, 2, 3, None], report["grid"]["runs"]
assert report["grid"]["runs"][3]["perf_sat"] == "on", report["grid"]["runs"][3]
assert report["grid"]["memory_model"] == "dram", report["grid"]
PY
grep -qE "^\| CFD \| 3 \| 3 \| [123] \| 3 \|" "$work/out1/report.md" || { cat "$work/out1/report.md"; fail "no CFD row"; }
run 2
cmp -s "$work/out1/report.json" "$work/out2/report.json" || fail "the same inputs gave another report"
if "$src/scripts/perf-sat" --gpumux "$gpumux" --kernels NOPE --out "$work/bad" >"$work/bad.log" 2>&1; then
  fail "an unknown kernel was accepted"
fi
grep -q "unknown kernel" "$work/bad.log" || fail "no message for an unknown kernel"
echo "perf-sat slice: ok"
