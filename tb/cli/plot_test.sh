#!/usr/bin/env bash
# scripts/plot end to end (issue 13 item 2): small real runs and experiments with the given gpumux, every
# kind of picture made from their outputs, each PNG a real, non-blank image and each SVG well-formed XML
# with drawing elements and the run's own names in it; the experiment's report.md links every figure
# (once, however often it is re-run); same inputs give byte-identical files; bad inputs exit 2 naming
# the file. About 30 s of CPU.
#   plot_test.sh GPUMUX_BINARY SOURCE_DIR
set -uo pipefail
gpumux="$1"
src="$2"
plot="$src/scripts/plot"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GPUMUX_CACHE_DIR="$work/cache"
# shellcheck source=check_lib.sh
source "$src/tb/cli/check_lib.sh"

# A Python with matplotlib for the picture checks: scripts/plot finds the distribution's itself.
py=python3
python3 -c 'import matplotlib' 2>/dev/null || py=/usr/bin/python3
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
  echo "plot_test: matplotlib is missing (scripts/setup installs python3-matplotlib)" >&2
  exit 1
fi

fail() {  # fail NAME MESSAGE
  failed=$((failed + 1))
  echo "FAIL $1: $2"
}

# check_picture NAME PREFIX MIN_COLOURFUL [TEXT...] notes a picture to check; check_pictures (at the end,
# one Python for all) checks that PREFIX.png is a PNG of real size with more than a handful of colours,
# ink on more than 1% of it and at least MIN_COLOURFUL percent of its pixels in colour (the data: axes,
# text and ticks are grey; the same picture without its bars or lines has less than a third of it), and
# PREFIX.svg XML with an <svg> root, drawing elements and every TEXT in its text.
check_picture() {
  local IFS=$'\t'
  echo "$*" >>"$work/pictures.tsv"
}
cat >"$work/check_pictures.py" <<'PY'
import os, struct, sys, xml.etree.ElementTree as ET
import numpy as np
from matplotlib import image


def problems_of(prefix, min_colourful, texts):
    for f in (prefix + ".png", prefix + ".svg"):
        if not os.path.isfile(f) or os.path.getsize(f) == 0:
            return [f"{f} is missing or empty"]
    problems = []
    with open(prefix + ".png", "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        problems.append("PNG: no PNG signature and IHDR chunk")
    else:
        width, height = struct.unpack(">II", head[16:24])
        if width < 200 or height < 150:
            problems.append(f"PNG: {width} x {height} pixels")
        pixels = image.imread(prefix + ".png")
        flat = (pixels[..., :3] * 255).round().astype(np.uint8).reshape(-1, 3)
        colours = len(np.unique(flat, axis=0))
        ink = float(np.mean(np.any(flat < 240, axis=1)))
        colourful = float(np.mean(flat.max(axis=1).astype(int) - flat.min(axis=1) > 40)) * 100
        if os.environ.get("PLOT_TEST_VERBOSE"):
            print(f"info {prefix}: colourful {colourful:.2f}%")
        if colourful < min_colourful:
            problems.append(f"PNG: {colourful:.2f}% of the pixels in colour, under {min_colourful}%: no data drawn?")
        if colours <= 8:
            problems.append(f"PNG: only {colours} distinct colours")
        if ink < 0.01:
            problems.append(f"PNG: only {ink:.2%} of the pixels are not white")
    try:
        root = ET.parse(prefix + ".svg").getroot()
    except ET.ParseError as e:
        return problems + [f"SVG: not XML: {e}"]
    if not root.tag.endswith("svg"):
        problems.append(f"SVG: root element {root.tag}")
    local = [el.tag.rsplit("}", 1)[-1] for el in root.iter()]
    drawing = sum(local.count(t) for t in ("path", "rect", "polygon", "polyline", "line", "use", "image"))
    if drawing < 20:
        problems.append(f"SVG: only {drawing} drawing elements")
    text = " ".join("".join(el.itertext()) for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "text")
    problems += [f"SVG: no text '{t}'" for t in texts if t not in text]
    return problems


ok = 0
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        name, prefix, min_colourful, *texts = line.rstrip("\n").split("\t")
        problems = problems_of(prefix, float(min_colourful), texts)
        if os.environ.get("PLOT_TEST_VERBOSE"):
            print(f"info {name}: {problems}")
        if problems:
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            ok += 1
print(f"ok {ok}")
PY

check_pictures() {  # checks every picture check_picture noted; counts each as passed or failed
  local line
  while IFS= read -r line; do
    case "$line" in
      "ok "*) passed=$((passed + ${line#ok })) ;;
      FAIL*) failed=$((failed + 1)); echo "$line" ;;
      info*) echo "$line" ;;
    esac
  done < <("$py" "$work/check_pictures.py" "$work/pictures.tsv" 2>&1 || echo "FAIL check_pictures: the checker failed")
}

expect_text() {  # expect_text NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then
    passed=$((passed + 1))
  else
    fail "$1" "'$3' not in $2: $(head -5 "$2" | tr '\n' ';')"
  fi
}

same_files() {  # same_files NAME FILE FILE
  if cmp -s "$2" "$3"; then passed=$((passed + 1)); else fail "$1" "$2 and $3 differ"; fi
}

json() {  # json FILE PYTHON-EXPRESSION-OF-d: prints its value
  "$py" -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"
}

cfg="$src/configs"

# ---- one run with preemptions: Gantt chart, memory bandwidth and occupancy -----------------------
run="$work/run"
check run-dss 0 "$gpumux" run --gpu "$cfg/gpus/kepler-k20c.yaml" --workload "$cfg/workloads/demo-parboil-4proc.yaml" \
  --policy dss --preemption context-switch --seed 1 --out "$run" --timeline "$run/timeline.json" \
  --vcd "$run/trace.vcd" --quiet --jobs 1
preemptions=$(json "$run/stats.json" 'len(d["preemptions"])')
last_sm=$(json "$run/stats.json" 'len(d["sms"]) - 1')
mapfile -t processes < <(json "$run/stats.json" '"\n".join(p["name"] for p in d["processes"])')
mean_gbps=$(json "$run/stats.json" '"%.1f" % (d["memory"]["bytes"] / d["simulated_ns"])')  # bytes per ns
[ "$preemptions" -gt 0 ] || fail run-has-preemptions "the DSS demo has no preemption to mark"

check gantt 0 "$plot" gantt "$run/timeline.json" --stats "$run/stats.json" --out "$work/pics/gantt"
check_picture gantt-picture "$work/pics/gantt" 6 "SM 0" "SM $last_sm" "$preemptions preemptions" "preemption request" \
  "${processes[@]}"
# A window of it (the same bytes for the same inputs: checked on the Pai figures below).
check gantt-window 0 "$plot" gantt "$run/timeline.json" --from-us 2000 --to-us 2200 --out "$work/pics/window"
check_picture gantt-window-picture "$work/pics/window" 10 "2000 to 2200 us"

check usage 0 "$plot" usage --stats "$run/stats.json" --timeline "$run/timeline.json" --vcd "$run/trace.vcd" \
  --out "$work/pics/usage"
check_picture usage-picture "$work/pics/usage" 6 "memory bandwidth" "SM occupancy" "SM $last_sm" \
  "mean $mean_gbps GB/s over the run"
# The VCD and stats.json of the same run agree on the bytes served (no warning).
if [ -s "$work/err" ]; then
  fail usage-consistent "stderr: $(head -3 "$work/err" | tr '\n' ';')"
else
  passed=$((passed + 1))
fi

# ---- warp level: phase graphs of two warp schedulers ---------------------------------------------
for s in lrr gto; do
  check "run-warp-$s" 0 "$gpumux" run --gpu "$cfg/gpus/tesla-m2090.yaml" \
    --workload "$cfg/workloads/awatramani/HIST.yaml" --sm-model warp --warp-scheduler "$s" --out "$work/warp-$s" \
    --phase-trace "$work/warp-$s/phases.json" --quiet --jobs 1
done
kernel=$(json "$work/warp-lrr/phases.json" 'd["kernels"][0]["name"]')
check phases 0 "$plot" phases "$work/warp-lrr/phases.json" "$work/warp-gto/phases.json" --out "$work/pics/phases"
check_picture phases-picture "$work/pics/phases" 6 "phase 1" "(a) lrr: $kernel" "(b) gto: $kernel" "Awatramani"
check phases-no-such-kernel 2 "$plot" phases "$work/warp-lrr/phases.json" --kernel 7 --out "$work/pics/x"
expect_text phases-no-such-kernel-msg "$work/err" "no kernel launch 7"

# ---- experiments: each analysis's figures, beside report.md and linked from it -------------------
exp="$work/exp"
mkdir -p "$exp"
cat >"$exp/pai.yaml" <<YAML
name: pai-small
description: three Pai pairs at two arrival offsets (plot test)
gpu: $cfg/gpus/fermi-gtx480.yaml
analysis: pai-table
workloads:
  - {file: $cfg/workloads/pai/t6-25/AES-d+AES-e.yaml, group: 25pct}
  - {file: $cfg/workloads/pai/t6-50/AES-d+AES-e.yaml, group: 50pct}
  - {file: $cfg/workloads/pai/t6-25/SAD+NLM2.yaml, group: 25pct}
  - {file: $cfg/workloads/pai/t6-50/SAD+NLM2.yaml, group: 50pct}
runs:
  - {label: fifo, policy: fifo}
  - {label: srtf, policy: srtf}
  - {label: sjf, policy: sjf}
seeds: [1]
paper:
  fifo/25pct/stp: 1.35
YAML
cat >"$exp/tanasic-dss.yaml" <<YAML
name: tanasic-dss-small
description: two mixes of 2 and of 3 Parboil applications (plot test; the shipped grids have 2 to 8)
gpu: $cfg/gpus/kepler-k20c.yaml
analysis: tanasic-dss
workloads:
  generate: tanasic-mixes
  applications: $cfg/workloads/tanasic/parboil-apps.yaml
  process_counts: [2, 3]
  mixes_per_count: 2
  mix_seed: 2014
runs:
  - {label: fcfs, policy: fcfs}
  - {label: dss-cs, policy: dss, preemption: context-switch}
seeds: [1]
paper:
  dss-cs/2proc/antt_improvement: 1.5
YAML
cat >"$exp/tanasic-priority.yaml" <<YAML
name: tanasic-priority-small
description: one mix of 2 and of 3 Parboil applications, the first high priority (plot test)
gpu: $cfg/gpus/kepler-k20c.yaml
analysis: tanasic-priority
workloads:
  generate: tanasic-mixes
  applications: $cfg/workloads/tanasic/parboil-apps.yaml
  process_counts: [2, 3]
  mixes_per_count: 1
  mix_seed: 2014
  high_priority: first
runs:
  - {label: fcfs, policy: fcfs, copy_policy: npq}
  - {label: npq, policy: npq, copy_policy: npq}
  - {label: ppq-cs, policy: ppq, preemption: context-switch, options: {access: exclusive}, copy_policy: npq}
  - {label: ppq-cs-shared, policy: ppq, preemption: context-switch, options: {access: shared}, copy_policy: npq}
seeds: [1]
paper:
  ppq-cs/2proc/hp_improvement: 2.0
YAML
cat >"$exp/awatramani.yaml" <<YAML
name: awatramani-small
description: two of the thesis's kernels under the six warp schedulers (plot test)
gpu: $cfg/gpus/tesla-m2090.yaml
analysis: awatramani-warp-schedulers
workloads:
  - $cfg/workloads/awatramani/FWT.yaml
  - $cfg/workloads/awatramani/HIST.yaml
runs:
  - {label: lrr, policy: fcfs, sm_model: warp, warp_scheduler: lrr}
  - {label: gto, policy: fcfs, sm_model: warp, warp_scheduler: gto}
  - {label: phase-aware, policy: fcfs, sm_model: warp, warp_scheduler: phase-aware}
  - {label: two-level-lrr, policy: fcfs, sm_model: warp, warp_scheduler: two-level-lrr}
  - {label: two-level-gto, policy: fcfs, sm_model: warp, warp_scheduler: two-level-gto}
  - {label: two-level-phase-aware, policy: fcfs, sm_model: warp, warp_scheduler: two-level-phase-aware}
seeds: [1]
paper:
  A/single/idle_gto_vs_rr_pct: -21.56
YAML

# experiment_figures NAME YAML "STEM MIN_COLOURFUL TEXT" ...: runs the experiment, plots it, checks every
# figure (check_picture: its PNG with MIN_COLOURFUL percent in colour, its SVG holding TEXT) and its links
# in report.md, and that report.md has one Figures section linking exactly those figures. For pai it
# plots twice: the second run writes the same bytes and leaves report.md as it was.
experiment_figures() {
  local name="$1" yaml="$2"
  shift 2
  local dir="$exp/$name"
  check "experiment-$name" 0 "$gpumux" experiment "$yaml" --out "$dir" --jobs 1 --quiet
  check "plot-$name" 0 "$plot" experiment "$dir"
  if [ "$name" = pai ]; then  # once is enough for determinism and the section's replacement
    mkdir -p "$dir/first"
    cp "$dir"/*.png "$dir"/*.svg "$dir/report.md" "$dir/first/"
    check "plot-$name-again" 0 "$plot" experiment "$dir"
    same_files "$name-report-md-idempotent" "$dir/first/report.md" "$dir/report.md"
  fi
  local spec stem min text
  for spec in "$@"; do
    read -r stem min text <<<"$spec"
    check_picture "$name-$stem" "$dir/$stem" "$min" "$text"
    expect_text "$name-$stem-linked" "$dir/report.md" "]($stem.png)"
    expect_text "$name-$stem-svg-linked" "$dir/report.md" "($stem.svg)"
    if [ -d "$dir/first" ]; then
      same_files "$name-$stem-png-deterministic" "$dir/first/$stem.png" "$dir/$stem.png"
      same_files "$name-$stem-svg-deterministic" "$dir/first/$stem.svg" "$dir/$stem.svg"
    fi
  done
  local sections
  sections=$(grep -c '^## Figures$' "$dir/report.md")
  if [ "$sections" -eq 1 ]; then
    passed=$((passed + 1))
  else
    fail "$name-one-figures-section" "$sections sections"
  fi
  # Every figure the section links is one the test expected (nothing else, nothing missing).
  local linked
  linked=$(grep -c '^!\[.*\](.*\.png)$' "$dir/report.md")
  if [ "$linked" -eq $# ]; then
    passed=$((passed + 1))
  else
    fail "$name-figure-count" "$linked linked, expected $#"
  fi
}

experiment_figures pai "$exp/pai.yaml" \
  "pai-fig14-stp-25pct 10 Pai et al. Fig. 14" "pai-fig15-antt-25pct 4 Pai et al. Fig. 15" \
  "pai-fig16-fairness-25pct 8 Pai et al. Fig. 16" "pai-fig14-stp-50pct 10 SAD+NLM2@50pct" \
  "pai-fig15-antt-50pct 3.5 geo. mean" "pai-fig16-fairness-50pct 8 srtf"
experiment_figures tanasic-dss "$exp/tanasic-dss.yaml" \
  "tanasic-fig7-dss 4 Tanasic et al. Fig. 7" "tanasic-fig8-antt 0.25 Tanasic et al. Fig. 8"
experiment_figures tanasic-priority "$exp/tanasic-priority.yaml" \
  "tanasic-fig5-hp-improvement 0.25 Tanasic et al. Fig. 5" "tanasic-fig6-stp 9 (b) shared access"
experiment_figures awatramani "$exp/awatramani.yaml" \
  "awatramani-fig3.7-speedup 2 Awatramani Fig. 3.7" "awatramani-fig3.8-idle 2 Awatramani Fig. 3.8"
experiment_figures smoke "$src/configs/experiments/smoke.yaml" \
  "summary-stp 7 demo-parboil-4proc" "summary-antt 7 sgemm-3x" "summary-fairness 7 fifo"
# The paper's value is drawn where the experiment gives one (a 'paper' legend entry), not elsewhere.
expect_text tanasic-dss-paper-drawn "$exp/tanasic-dss/tanasic-fig7-dss.svg" ">paper<"
if grep -qF ">paper<" "$exp/smoke/summary-stp.svg"; then fail smoke-no-paper "a paper entry without paper values"
else passed=$((passed + 1)); fi

# ---- bad inputs: exit 2, naming the file ----------------------------------------------------------
check gantt-missing-file 2 "$plot" gantt "$work/none.json" --out "$work/pics/x"
expect_text gantt-missing-file-msg "$work/err" "$work/none.json: no such file"
printf '{"traceEvents": [' >"$work/truncated.json"
check gantt-malformed 2 "$plot" gantt "$work/truncated.json" --out "$work/pics/x"
expect_text gantt-malformed-msg "$work/err" "$work/truncated.json: not valid JSON"
check gantt-not-a-timeline 2 "$plot" gantt "$run/stats.json" --out "$work/pics/x"
expect_text gantt-not-a-timeline-msg "$work/err" "$run/stats.json: not a gpumux timeline"
check gantt-no-out 2 "$plot" gantt "$run/timeline.json"
expect_text gantt-no-out-msg "$work/err" "--out"
check gantt-empty-window 2 "$plot" gantt "$run/timeline.json" --from-us 5 --to-us 5 --out "$work/pics/x"
check usage-missing-vcd 2 "$plot" usage --stats "$run/stats.json" --timeline "$run/timeline.json" \
  --vcd "$work/none.vcd" --out "$work/pics/x"
expect_text usage-missing-vcd-msg "$work/err" "$work/none.vcd: no such file"
printf '\x00\x01binary' >"$work/trace.fst"
check usage-not-vcd 2 "$plot" usage --stats "$run/stats.json" --timeline "$run/timeline.json" \
  --vcd "$work/trace.fst" --out "$work/pics/x"
expect_text usage-not-vcd-msg "$work/err" "$work/trace.fst: not a VCD"
check usage-not-stats 2 "$plot" usage --stats "$run/timeline.json" --timeline "$run/timeline.json" \
  --vcd "$run/trace.vcd" --out "$work/pics/x"
expect_text usage-not-stats-msg "$work/err" "$run/timeline.json: not a gpumux stats.json"
check phases-not-a-trace 2 "$plot" phases "$run/stats.json" --out "$work/pics/x"
expect_text phases-not-a-trace-msg "$work/err" "$run/stats.json: not a gpumux phase trace"
check experiment-missing-dir 2 "$plot" experiment "$work/no-such-dir"
expect_text experiment-missing-dir-msg "$work/err" "$work/no-such-dir"
mkdir -p "$work/empty-exp"
check experiment-no-report 2 "$plot" experiment "$work/empty-exp"
expect_text experiment-no-report-msg "$work/err" "$work/empty-exp/report.json: no such file"
mkdir -p "$work/unknown-exp"
json "$exp/smoke/report.json" 'json.dumps(dict(d, analysis="frobnicate"))' >"$work/unknown-exp/report.json"
cp "$exp/smoke/report.md" "$work/unknown-exp/"
check experiment-unknown-analysis 2 "$plot" experiment "$work/unknown-exp"
expect_text experiment-unknown-analysis-msg "$work/err" "analysis 'frobnicate'"
expect_text experiment-unknown-analysis-supported "$work/err" \
  "awatramani-warp-schedulers, liang-stm, pai-table, summary, tanasic-dss, tanasic-priority"
check unknown-command 2 "$plot" frobnicate

check_pictures
echo "plot tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
