#!/usr/bin/env bash
# The RTL cross-check runner's command line (tb/rtl/rtl_main.cpp):
#  - a --scenario outside the run is an error: exit 2, a message naming the option and the valid range,
#    no VCD written;
#  - a failure's printed rerun command reproduces it exactly (--inject-mismatch makes one, in a
#    scenario and with a --scenarios the defaults would not reach), and the rerun's VCD carries the
#    reference model's expected values beside the RTL's and the mismatch marker at the reported time.
# usage: crosscheck_cli_test.sh GPUMUX_RTL_TESTS SOURCE_DIR
set -uo pipefail
tests="$1"
probe="$2/tb/rtl/vcd_probe.py"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# shellcheck source=../cli/check_lib.sh
source "$2/tb/cli/check_lib.sh"

expect() {  # expect NAME CONDITION-COMMAND...
  local name="$1"
  shift
  if "$@" >/dev/null; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: $*"
  fi
}

has() { grep -qF -- "$2" "$1"; }

# --scenario outside the run: 300 scenarios give the leaky bucket's tests (3 parameter sets) 100 each,
# the DSS ones (5 sets) 60.
check scenario-out-of-range 2 "$tests" --scenarios 300 --scenario 100 --wave "$work/range.vcd"
expect scenario-out-of-range-msg has "$work/err" \
  "gpumux_rtl_tests: --scenario 100 is outside the run: --scenarios 300 spreads"
expect scenario-out-of-range-range has "$work/err" "so --scenario must be 0 to 99"
expect scenario-out-of-range-no-vcd test -z "$(find "$work" -name 'range*')"
check scenario-out-of-range-default 2 "$tests" --scenario 1000
expect scenario-out-of-range-default-msg has "$work/err" "--scenario 1000 is outside the run: --scenarios 300"
# Inside the run, but outside the one test selected (7 scenarios: RandomGtx480, the fifth set, has one).
check scenario-outside-selected 2 "$tests" --scenarios 7 --scenario 1 --gtest_filter='*.RandomGtx480'
expect scenario-outside-selected-msg has "$work/err" \
  "--scenario 1 is outside the run of every random test selected (--scenarios 7: DssRtlCrosscheck.RandomGtx480 has 0 to 0)"
check scenario-last 0 "$tests" --scenarios 300 --scenario 99 --gtest_filter='*.RandomK4'
expect scenario-last-ran has "$work/out" "leaky_bucket: 1 random scenarios"
check bad-injection 2 "$tests" --inject-mismatch 3

# A passing run's VCD: the reference's expected values equal the RTL's where the cross-check compares
# them (outputs at each cycle's start, tables after each rising edge), and mismatch stays 0.
check wave-agrees 0 "$tests" --scenarios 900 --scenario 7 --wave "$work/pass.vcd" \
  --gtest_filter='*.RandomK20c:*.RandomK13:*.TwoThenThreeKernelsRebalanceByReservation'
for vcd in "$work/pass.dss_k20c_random.vcd" "$work/pass.dss_k20c_rebalance.vcd"; do
  for signal in busy assign_valid assign_sm assign_slot reserve_valid reserve_sm reserve_next; do
    expect "wave-agrees-$(basename "$vcd")-$signal" "$probe" "$vcd" same "exp_$signal" "${signal}_o" low
  done
  for signal in slot_valid slot_tokens slot_has_tbs sm_state sm_kernel_valid sm_kernel sm_next_valid sm_next; do
    expect "wave-agrees-$(basename "$vcd")-$signal" "$probe" "$vcd" same "exp_$signal" "${signal}_o" high
  done
  expect "wave-no-mismatch-$(basename "$vcd")" test "$("$probe" "$vcd" changes mismatch | awk '{print $2}' | sort -u)" = 0
done
vcd="$work/pass.bucket_k13_random.vcd"
expect wave-agrees-bucket-grant "$probe" "$vcd" same exp_grant_valid grant_valid_o low
expect wave-agrees-bucket-kernel "$probe" "$vcd" same exp_grant_kernel grant_kernel_o low
expect wave-agrees-bucket-active "$probe" "$vcd" same exp_active active_o high
expect wave-agrees-bucket-level "$probe" "$vcd" same exp_level level_o high

# A failure, its rerun command, the rerun and its VCD. failure FILE: the report without the VCD time
# (the first run's VCD would hold every scenario before the failing one).
report() { sed -n '/first mismatch/,/rerun:/p' "$1" | sed 's/ (in the --wave VCD at [0-9]* ps,/ (VCD time,/'; }
rerun_case() {  # rerun_case NAME FILTER SCENARIOS INJECTION EXPECTED_OPTIONS EXPECTED_SIGNAL RTL_SIGNAL
  local name="$1" filter="$2" scenarios="$3" inject="$4" options="$5" exp="$6" rtl="$7"
  check "$name-fails" 1 "$tests" --gtest_filter="$filter" --scenarios "$scenarios" --inject-mismatch "$inject"
  cp "$work/out" "$work/$name.first"
  local rerun
  rerun="$(sed -n 's/^  rerun: //p' "$work/$name.first")"
  expect "$name-rerun-options" has "$work/$name.first" "--gtest_filter=$filter $options --wave out.vcd"
  # The printed command, with the VCD in the work folder.
  check "$name-rerun-fails" 1 bash -c "${rerun% --wave out.vcd} --wave $work/$name.vcd"
  cp "$work/out" "$work/$name.rerun"
  expect "$name-rerun-same-report" cmp -s <(report "$work/$name.first") <(report "$work/$name.rerun")
  expect "$name-rerun-one-scenario" has "$work/$name.rerun" ": 0 random scenarios"
  local vcd reported marked
  vcd="$(ls "$work/$name".*.vcd)"
  reported="$(sed -n 's/.* (in the --wave VCD at \([0-9]*\) ps, where mismatch goes to 1).*/\1/p' "$work/$name.rerun")"
  marked="$("$probe" "$vcd" first mismatch 1)"
  expect "$name-vcd-mismatch-at-reported-time" test "$marked" = "$reported"
  expect "$name-vcd-expected-differs" test "$("$probe" "$vcd" at "$exp" "$marked")" != \
    "$("$probe" "$vcd" at "$rtl" "$marked")"
  expect "$name-vcd-agrees-before" test "$("$probe" "$vcd" at "$exp" $((marked - 1)))" = \
    "$("$probe" "$vcd" at "$rtl" $((marked - 1)))"
}
# DSS: scenario 150 of RandomK20c exists with --scenarios 1000 (200 per test) but not with the default.
rerun_case dss DssRtlCrosscheck.RandomK20c 1000 150:40 "--scenarios 1000 --seed 1 --scenario 150 --inject-mismatch 150:40" \
  exp_busy busy_o
rerun_case bucket LeakyBucketRtlCrosscheck.RandomK13 900 250:100 \
  "--scenarios 900 --seed 1 --scenario 250 --inject-mismatch 250:100" exp_grant_valid grant_valid_o
# A seed is part of the command too.
check seed-fails 1 "$tests" --gtest_filter=DssRtlCrosscheck.RandomPow2 --scenarios 400 --seed 7 --inject-mismatch 70:5
expect seed-rerun-options has "$work/out" "--scenarios 400 --seed 7 --scenario 70 --inject-mismatch 70:5"

echo "rtl cross-check command line: $passed checks passed, $failed failed"
[ "$failed" -eq 0 ]
