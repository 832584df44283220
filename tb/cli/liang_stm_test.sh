#!/usr/bin/env bash
# Liang's experiments (issue 14), a bounded slice: the shipped experiment configs/experiments/liang-stm.yaml
# (TB level, its twelve kernel sets under sequential, default concurrent and STM) and scripts/liang-stm on
# one two-kernel set, without Kepler. Checks the rows and sections exist with numbers, that the measured
# optimum is no worse than STM's schedule, and that bad options exit 2.
#   tb/cli/liang_stm_test.sh GPUMUX SOURCE_DIR
set -euo pipefail
gpumux="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
"$gpumux" experiment "$src/configs/experiments/liang-stm.yaml" --out "$work/exp" --jobs 2 --quiet ||
  fail "gpumux experiment exited $?"
python3 - "$work/exp/report.json" <<'PY' || fail "report rows"
import json, sys
rows = {r["name"]: r for r in json.load(open(sys.argv[1]))["rows"]}
for key in ("stm/mean_improvement", "stm/max_improvement", "default/mean_improvement",
            "stm/over_default/mean_improvement", "stm-dummy/mean_improvement"):
    assert rows[key]["model"] is not None, key
assert rows["stm/mean_improvement"]["paper"] == 26
per_set = [r for n, r in rows.items() if n.startswith("stm/") and n.endswith("/improvement")]
assert len(per_set) == 12, len(per_set)
assert max(r["model"] for r in per_set) == rows["stm/max_improvement"]["model"]
PY
"$src/scripts/liang-stm" --gpumux "$gpumux" --sizes 2 --sets-per-size 1 --optimum-sizes 2 --no-kepler \
  --out "$work/slice" --doc "$work/doc.md" 2>"$work/err" || { cat "$work/err"; fail "scripts/liang-stm exited"; }
for section in "## Profiles" "## Fig. 7" "## STM against the optimum" "## Table 1"; do
  grep -q "^$section" "$work/doc.md" || fail "no section '$section'"
done
[ -s "$work/liang-stm-fig7-tb.png" ] || fail "no Fig. 7 picture beside the document"
grep -q "(liang-stm-fig7-tb.png)" "$work/doc.md" || fail "the document does not show the picture"
grep -qE "^\| stm/mean_improvement \| -?[0-9]+\.[0-9]% \| 26% \|" "$work/doc.md" || fail "no STM mean row"
grep -qE "STM's schedule is on average -?[0-9]+\.[0-9]% from the optimum" "$work/doc.md" || fail "no optimum verdict"
python3 - "$work/doc.md" <<'PY' || fail "optimum above STM"
import re, sys
for line in open(sys.argv[1]):
    m = re.match(r"\| [a-z0-9-]+ \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| \{", line)
    if m:
        seq, stm, best = map(float, m.groups())
        assert best <= stm + 0.05 and best <= seq + 0.05, line
PY
status=0
"$src/scripts/liang-stm" --gpumux "$gpumux" --kernels va,nope --out "$work/bad" 2>"$work/bad-err" || status=$?
[ "$status" = 2 ] || fail "--kernels va,nope exited $status, not 2"
grep -q "nope" "$work/bad-err" || fail "the --kernels error does not name the kernel"
echo "liang-stm slice: passed"
