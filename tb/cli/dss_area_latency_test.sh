#!/usr/bin/env bash
# A slice of scripts/dss-area-latency (issue 21): 13 SMs, one 2-process Tanasic mix, fcfs, dss-instant and
# dss with every search width (1, 2, 4, 8, 13) and its latency charged. Checks that the table has a row
# per variant with the cycles per decision ceil(13 / P) + 1, that the verdict on the serial scan is
# written, that the same inputs give the same document, and that bad options exit 2.
#   tb/cli/dss_area_latency_test.sh GPUMUX SOURCE_DIR
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
  "$src/scripts/dss-area-latency" --gpumux "$gpumux" --sms 13 --mixes 1 --counts 2 --jobs 2 --no-plot \
    --out "$work/out$1" --doc "$work/doc$1.md" --rtl "$src/docs/rtl-report-dss-variants.json" 2>"$work/err$1" ||
    { cat "$work/err$1"; fail "scripts/dss-area-latency exited $?"; }
}
run 1
for p in 1 2 4 8 13; do
  cycles=$(( (13 + p - 1) / p + 1 ))
  grep -qE "^\| dss-w$p \| $p \| $cycles \|" "$work/doc1.md" || { cat "$work/doc1.md"; fail "no row for width $p with $cycles cycles"; }
done
grep -q "^| fcfs |" "$work/doc1.md" || fail "no fcfs row"
grep -q "^| dss-instant |" "$work/doc1.md" || fail "no dss-instant row"
grep -qE "^\| 13 \| [+-][0-9]+\.[0-9]+% \|" "$work/doc1.md" || fail "no serial-scan verdict row for 13 SMs"
grep -qE "serial scan (first costs|cost)" "$work/doc1.md" || fail "no verdict sentence"
run 2
cmp -s "$work/doc1.md" "$work/doc2.md" || fail "two runs wrote different documents"
status=0
"$src/scripts/dss-area-latency" --gpumux "$gpumux" --sms 13,x --out "$work/bad" 2>"$work/bad-err" || status=$?
[ "$status" = 2 ] || fail "--sms 13,x exited $status, not 2"
grep -q -- "--sms" "$work/bad-err" || fail "the --sms error does not name the option"
echo "dss-area-latency slice: passed"
