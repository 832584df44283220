#!/usr/bin/env bash
# GTKWave opens the waveform of a preemptive run with its save file and translate filters (issue 17
# items 2 and 6), headless under Xvfb: the view holds every trace of the save file, and at a time
# inside the first context save of stats.json the preempted SM's activity reads "saving", its SMST
# entry "reserved" and its next kernel a decoded name (name#launch(process)), not a number.
#   gtkwave_test.sh GPUMUX_BINARY SOURCE_DIR
set -euo pipefail
gpumux=$1
src=$2
for tool in gtkwave xvfb-run python3; do
  command -v "$tool" > /dev/null || { echo "gtkwave_test: $tool is missing (scripts/setup installs it)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$gpumux" run --gpu "$src/configs/gpus/kepler-k20c.yaml" --workload "$src/configs/workloads/demo-parboil-4proc.yaml" \
  --policy dss --preemption context-switch --seed 1 --out "$work/run" --vcd "$work/run/trace.vcd" --quiet

# The first preemption: its SM and a time inside its context save.
read -r sm t scope < <(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["preemptions"][0]
print(p["sm"], round(p["save_start_ns"] * 1000) + 1, "sm_%02d" % p["sm"])' "$work/run/stats.json")
{
  echo 'puts "displayed [llength [gtkwave::getDisplayedSignals]]"'
  echo "gtkwave::setMarker $t"
  for signal in 'activity\[2:0\]' 'smst_state\[1:0\]' 'smst_next\[31:0\]'; do
    echo "puts \"${signal%%\\*} [gtkwave::getTraceValueAtMarkerFromName gpu.$scope.$signal]\""
  done
  echo 'gtkwave::/File/Quit'
} > "$work/check.tcl"
timeout 120 xvfb-run -a -s "-screen 0 1600x900x24" gtkwave -S "$work/check.tcl" "$work/run/trace.vcd" \
  "$work/run/trace.gtkw" > "$work/gtkwave.out" 2>&1
cat "$work/gtkwave.out"

# Every trace of the save file is displayed (group labels are not counted as signals).
traces=$(grep -c '^gpu\.' "$work/run/trace.gtkw")
fail=0
expect() {  # expect WHAT REGEX: a whole line of GTKWave's output
  if ! grep -qxE "$2" "$work/gtkwave.out"; then
    echo "FAIL $1: want a line matching '$2' in GTKWave's output" >&2
    fail=1
  fi
}
expect displayed "displayed $traces"
expect activity "activity saving"
expect smst_state "smst_state reserved"
expect smst_next 'smst_next [A-Za-z_][A-Za-z0-9_]*#[0-9]+\(.+\)'
if [ "$fail" -eq 0 ]; then echo "gtkwave_test: SM $sm at $t ps reads as expected"; fi
exit "$fail"
