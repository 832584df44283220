#!/usr/bin/env bash
# GTKWave opens the cross-check's RTL waveforms (--wave) with the save file and translate filters
# written beside them (tb/rtl/rtl_gtkwave.h), headless under Xvfb: every trace of each save file is
# displayed, and at times known from the run the enumerations read as names (event kind, the search
# FSM's phase, SM states of the RTL and of the reference model), token counts as signed decimals. The
# phase filter matches phase_e in rtl/dss_token_policy.sv (the other two come from rtl/dss_pkg.sv
# through the generated policy/dss_encoding.h).
#   gtkwave_rtl_test.sh GPUMUX_RTL_TESTS SOURCE_DIR
set -euo pipefail
tests=$1
src=$2
for tool in gtkwave xvfb-run python3; do
  command -v "$tool" > /dev/null || { echo "gtkwave_rtl_test: $tool is missing (scripts/setup installs it)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

"$tests" --gtest_filter='*.SingleKernelTakesEveryIdleSmInOrder:*.TwoThenThreeKernelsRebalanceByReservation:*.RandomK4' \
  --scenarios 30 --wave "$work/out.vcd" > "$work/run.out" 2>&1 || { cat "$work/run.out"; exit 1; }
for f in out.dss_k20c_single.{gtkw,event_kind.txt,sm_state.txt,phase.txt} out.dss_k20c_rebalance.gtkw \
  out.bucket_k4_random.gtkw; do
  [ -s "$work/$f" ] || { echo "FAIL: $f not written beside the VCD" >&2; fail=1; }
done

# The phase filter against the RTL source: "VALUE Name" per item of phase_e.
sed -nE "s/^ *(Phase[A-Za-z]+) *= *2'd([0-9]+),?.*/\2 \1/p" "$src/rtl/dss_token_policy.sv" > "$work/phase.want"
grep -v '^#' "$work/out.dss_k20c_single.phase.txt" > "$work/phase.got"
if [ ! -s "$work/phase.want" ] || ! cmp -s "$work/phase.want" "$work/phase.got"; then
  echo "FAIL phase filter differs from phase_e in rtl/dss_token_policy.sv:" >&2
  diff "$work/phase.want" "$work/phase.got" >&2 || true
  fail=1
fi

tb=dss_token_policy.dss_token_policy_tb
gtkwave_at() {  # gtkwave_at STEM "TIME LABEL SIGNAL" ...: GTKWave's output in $work/STEM.out
  local stem=$1
  shift
  {
    echo 'puts "displayed [llength [gtkwave::getDisplayedSignals]]"'
    for probe in "$@"; do
      read -r t label signal <<< "$probe"
      echo "gtkwave::setMarker $t"
      echo "puts \"$label [gtkwave::getTraceValueAtMarkerFromName {$signal}]\""
    done
    echo 'gtkwave::/File/Quit'
  } > "$work/$stem.tcl"
  timeout 120 xvfb-run -a -s "-screen 0 1600x900x24" gtkwave -S "$work/$stem.tcl" "$work/$stem.vcd" \
    "$work/$stem.gtkw" > "$work/$stem.out" 2>&1
  grep -vE '^$|^GTKWave|^\[|^GTKWAVE|^Exiting' "$work/$stem.out" | sed "s/^/$stem: /"
  expect "$stem" displayed "displayed $(grep -cE '^(dss_token_policy|leaky_bucket)\.' "$work/$stem.gtkw")"
}
expect() {  # expect STEM WHAT LINE: a whole line of GTKWave's output
  if ! grep -qxF "$3" "$work/$1.out"; then
    echo "FAIL $1 $2: want the line '$3' in GTKWave's output" >&2
    fail=1
  fi
}

# One kernel on k20c at 1 GHz (1 ns per cycle, rising edge mid-cycle): reset in cycle 0, the insert in
# cycle 1 (1000 ps); each iteration scans 13 cycles and decides in the 14th, so the first search
# decides in cycle 15 (phase PhaseDecide from the edge at 14500 ps) and SM 0 runs after its edge at
# 15500 ps; 13 decisions leave the kernel's entry at 7 - 13 = -6 tokens.
gtkwave_at out.dss_k20c_single \
  "1200 kind $tb.event_kind_i[2:0]" \
  "1200 phase_idle $tb.dut.phase_q[1:0]" \
  "14600 phase_decide $tb.dut.phase_q[1:0]" \
  "14600 sm0_before $tb.smst_state[0][1:0]" \
  "15600 sm0 $tb.smst_state[0][1:0]" \
  "15600 exp_sm0 $tb.smst_exp_state[0][1:0]" \
  "15600 sm1 $tb.smst_state[1][1:0]" \
  "197000 tokens0 $tb.ksrt_tokens[0][7:0]"
expect out.dss_k20c_single kind "kind EvKernelInsert"
expect out.dss_k20c_single phase "phase_idle PhaseIdle"
expect out.dss_k20c_single phase "phase_decide PhaseDecide"
expect out.dss_k20c_single state "sm0_before SmIdle"
expect out.dss_k20c_single state "sm0 SmRunning"
expect out.dss_k20c_single state "exp_sm0 SmRunning"
expect out.dss_k20c_single state "sm1 SmIdle"
expect out.dss_k20c_single tokens "tokens0 -6"

# A second kernel takes SMs by reservation: the first reserve_valid_o (a Mealy output, up from the
# rising edge that ends the last scan cycle, E) names the SM, whose SMST entry is reserved after the
# decision cycle's edge at E + 1000 ps.
probe="$src/tb/rtl/vcd_probe.py"
vcd="$work/out.dss_k20c_rebalance.vcd"
edge=$("$probe" "$vcd" first reserve_valid_o 1)
sm=$("$probe" "$vcd" at reserve_sm_o "$edge")
gtkwave_at out.dss_k20c_rebalance \
  "$((edge + 100)) phase $tb.dut.phase_q[1:0]" \
  "$((edge + 1250)) reserved $tb.smst_state[$sm][1:0]" \
  "$((edge + 1250)) exp_reserved $tb.smst_exp_state[$sm][1:0]"
expect out.dss_k20c_rebalance phase "phase PhaseDecide"
expect out.dss_k20c_rebalance state "reserved SmReserved"
expect out.dss_k20c_rebalance state "exp_reserved SmReserved"

# The leaky bucket (no enumerations): its save file loads with every trace.
gtkwave_at out.bucket_k4_random

if [ "$fail" -eq 0 ]; then
  echo "gtkwave_rtl_test: the RTL VCDs open with their save files; SM $sm reserved at $((edge + 1250)) ps"
fi
exit "$fail"
