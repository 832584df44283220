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

# --wave: the RTL's waveform of a co-simulated run.
"$cosim" run --gpu "$gpus/kepler-k20c.yaml" --workload "$workloads/sgemm-3x.yaml" --policy dss \
  --out "$work/wave" --quiet --wave "$work/wave/dss.vcd"
if ! grep -q "busy_o" "$work/wave/dss.vcd"; then
  echo "cosim: --wave wrote no VCD of the RTL"
  exit 1
fi
echo "cosim: $runs runs byte-identical (stats.json), VCD of the RTL written"
