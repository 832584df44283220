#!/usr/bin/env bash
# Co-simulation: gpumux (DSS decided by the C++ reference model) and gpumux-cosim-rtl (decided by the
# Verilated rtl/dss_token_policy.sv, checked against the reference in every cycle) must write
# byte-identical stats.json for the same runs. Usage: cosim_test.sh GPUMUX GPUMUX_COSIM_RTL SOURCE_DIR
set -euo pipefail
gpumux="$1"
cosim="$2"
root="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
runs=0

same() {
  local name="$1"
  shift
  "$gpumux" run "$@" --out "$work/$name/reference" --quiet
  "$cosim" run "$@" --out "$work/$name/rtl" --quiet
  if ! cmp -s "$work/$name/reference/stats.json" "$work/$name/rtl/stats.json"; then
    echo "cosim: $name: stats.json differs between gpumux and gpumux-cosim-rtl:"
    diff "$work/$name/reference/stats.json" "$work/$name/rtl/stats.json" | head -20
    exit 1
  fi
  runs=$((runs + 1))
}

gpus="$root/configs/gpus"
workloads="$root/configs/workloads"
same k20c-demo --gpu "$gpus/kepler-k20c.yaml" --workload "$workloads/demo-parboil-4proc.yaml" --policy dss --seed 1
same k20c-demo-drain --gpu "$gpus/kepler-k20c.yaml" --workload "$workloads/demo-parboil-4proc.yaml" --policy dss \
  --preemption drain --seed 2
same gtx480-ercbench --gpu "$gpus/fermi-gtx480.yaml" --workload "$workloads/ercbench-pair.yaml" --policy dss --seed 1
# The parallel search (policy option search_width = the RTL's EntriesPerCycle): a non-divisor of N and
# the full tree, with decisions at once and with the search's cycles charged in simulated time
# (latency=hardware), where the RTL is clocked cycle by cycle as the model's time advances.
same k20c-demo-width5 --gpu "$gpus/kepler-k20c.yaml" --workload "$workloads/demo-parboil-4proc.yaml" --policy dss \
  --policy-opt search_width=5 --seed 1
same k20c-demo-width13-hw --gpu "$gpus/kepler-k20c.yaml" --workload "$workloads/demo-parboil-4proc.yaml" --policy dss \
  --policy-opt search_width=13 --policy-opt latency=hardware --seed 1
same gtx480-ercbench-width4-hw --gpu "$gpus/fermi-gtx480.yaml" --workload "$workloads/ercbench-pair.yaml" --policy dss \
  --policy-opt search_width=4 --policy-opt latency=hardware --seed 1
same k20c-demo-serial-hw --gpu "$gpus/kepler-k20c.yaml" --workload "$workloads/demo-parboil-4proc.yaml" --policy dss \
  --policy-opt latency=hardware --seed 1

# --wave: the RTL's waveform of a co-simulated run, on the model's time axis. The run is the k20c
# demo's again (its stats.json must not change with --wave): its first DSS reservation, made at model
# time M (stats.json: the first preemption's requested_ns), is in the RTL VCD at M plus the search's
# core cycles: the batch of events carries model_time M and starts at the first core clock edge at or
# after M (within one period), and reserve_valid_o rises a whole number of core cycles later, before
# the search could have ended ((N_SM + 1)^2 cycles).
"$cosim" run --gpu "$gpus/kepler-k20c.yaml" --workload "$workloads/demo-parboil-4proc.yaml" --policy dss --seed 1 \
  --out "$work/wave" --quiet --wave "$work/wave/dss.vcd"
if ! cmp -s "$work/k20c-demo/reference/stats.json" "$work/wave/stats.json"; then
  echo "cosim: --wave changed stats.json"
  exit 1
fi
probe="$root/tb/rtl/vcd_probe.py"
vcd="$work/wave/dss.vcd"
model_ps="$(python3 -c 'import json, sys
first = min(json.load(open(sys.argv[1]))["preemptions"], key=lambda p: (p["requested_ns"], p["id"]))
print(round(first["requested_ns"] * 1000))' "$work/wave/stats.json")"
reserve_ps="$("$probe" "$vcd" first reserve_valid_o 1)"
batch_model_ps="$("$probe" "$vcd" at model_time "$reserve_ps")"
batch_ps="$("$probe" "$vcd" first model_time "$model_ps")"
if ! python3 - "$model_ps" "$batch_model_ps" "$batch_ps" "$reserve_ps" <<'PY'
import sys
model, batch_model, batch, reserve = (int(x) for x in sys.argv[1:])
period = 1e6 / 706  # kepler-k20c.yaml core_clock_mhz
sms = 13
# reserve_valid_o is a Mealy output: it rises at the rising edge before its decision cycle starts.
cycles = (reserve + period / 2 - batch) / period
ok = (batch_model == model and model <= batch < model + period and abs(cycles - round(cycles)) < 0.01
      and 1 <= round(cycles) <= (sms + 1) ** 2)
print(f"cosim: first reservation: model time {model} ps (stats.json), RTL VCD: its events from {batch} ps "
      f"(model_time {batch_model}), reserve_valid_o at {reserve} ps, {round(cycles)} core cycles later")
sys.exit(0 if ok else 1)
PY
then
  echo "cosim: the RTL VCD is not on the model's time axis"
  exit 1
fi

# The save file and translate filters beside the VCD (tb/rtl/rtl_gtkwave.h) in GTKWave under Xvfb:
# the batch that makes the first reservation starts with a kernel insertion, the FSM decides after the
# edge where reserve_valid_o rises, and the SM's SMST entry (RTL and reference model) reads reserved
# after the decision cycle's edge, a core cycle later.
for tool in gtkwave xvfb-run; do
  command -v "$tool" > /dev/null || { echo "cosim: $tool is missing (scripts/setup installs it)"; exit 1; }
done
sm="$("$probe" "$vcd" at reserve_sm_o "$reserve_ps")"
reserved_ps="$(python3 -c "print($reserve_ps + round(1.25e6 / 706))")"
tb=dss_token_policy.dss_token_policy_tb
cat > "$work/check.tcl" <<TCL
puts "displayed [llength [gtkwave::getDisplayedSignals]]"
gtkwave::setMarker $batch_ps
puts "kind [gtkwave::getTraceValueAtMarkerFromName {$tb.event_kind_i[2:0]}]"
gtkwave::setMarker $((reserve_ps + 100))
puts "phase [gtkwave::getTraceValueAtMarkerFromName {$tb.dut.phase_q[1:0]}]"
gtkwave::setMarker $reserved_ps
puts "state [gtkwave::getTraceValueAtMarkerFromName {$tb.smst_state[$sm][1:0]}]"
puts "exp_state [gtkwave::getTraceValueAtMarkerFromName {$tb.smst_exp_state[$sm][1:0]}]"
gtkwave::/File/Quit
TCL
timeout 120 xvfb-run -a -s "-screen 0 1600x900x24" gtkwave -S "$work/check.tcl" "$vcd" "$work/wave/dss.gtkw" \
  > "$work/gtkwave.out" 2>&1
for line in "displayed $(grep -c '^dss_token_policy\.' "$work/wave/dss.gtkw")" "kind EvKernelInsert" \
  "phase PhaseDecide" "state SmReserved" "exp_state SmReserved"; do
  if ! grep -qxF "$line" "$work/gtkwave.out"; then
    echo "cosim: GTKWave with dss.gtkw: want '$line' in its output:"
    cat "$work/gtkwave.out"
    exit 1
  fi
done
echo "cosim: GTKWave reads SM $sm as SmReserved at $reserved_ps ps through dss.gtkw"
echo "cosim: $runs runs byte-identical (stats.json), VCD of the RTL on the model's time axis"
