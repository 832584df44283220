#!/usr/bin/env bash
# `gpumux experiment --backend slurm` through a real Slurm (issue 13 item 3; docs/cluster.md): a
# single-node Slurm on this machine (scripts/slurm-local; started here and stopped at the end unless one
# is already running), small experiments submitted as job arrays and collected, their report.json and
# report.md byte-identical to the local backend's; a lost task run again by the command --collect
# prints; a failed task, an experiment changed after submission and the submission errors.
#   slurm_test.sh GPUMUX_BINARY SOURCE_DIR
set -uo pipefail
gpumux="$(realpath "$1")"
src="$(realpath "$2")"
export PATH="$PATH:/usr/sbin:/sbin"
for tool in sbatch squeue scancel slurmctld slurmd munged; do
  command -v "$tool" >/dev/null ||
    { echo "slurm_test: $tool is missing (scripts/setup installs the packages slurm-wlm and munge)" >&2; exit 1; }
done
work="$(mktemp -d)"
started=0
jobs_submitted=()
cleanup() {
  # Nothing of ours stays queued (a failed wait leaves tasks behind), nor do the daemons we started.
  for id in "${jobs_submitted[@]}"; do scancel "$id" 2>/dev/null; done
  [ "$started" = 1 ] && "$src/scripts/slurm-local" stop
  rm -rf "$work"
}
trap cleanup EXIT
export GPUMUX_CACHE_DIR="$work/cache"
# shellcheck source=check_lib.sh
source "$src/tb/cli/check_lib.sh"

expect_text() {  # expect_text NAME FILE TEXT
  if grep -qF -- "$3" "$2"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $1: '$3' not in $2:"
    head -20 "$2" | sed 's/^/  /'
  fi
}

if "$src/scripts/slurm-local" status >/dev/null 2>&1; then
  echo "slurm_test: using the running slurm-local"
else
  "$src/scripts/slurm-local" start >/dev/null || { echo "slurm_test: scripts/slurm-local start failed" >&2; exit 1; }
  started=1
fi
eval "$("$src/scripts/slurm-local" env)"

wait_job() {  # wait_job ID: until squeue lists none of its tasks (at most 180 s)
  for _ in $(seq 360); do
    squeue -h -j "$1" -o %i 2>/dev/null | grep -q . || return 0
    sleep 0.5
  done
  echo "FAIL: Slurm job $1 still queued after 180 s:"
  squeue
  failed=$((failed + 1))
  return 1
}

submit() {  # submit NAME OUT ARGS...: --backend slurm; the job id in $job
  local name="$1" out="$2"
  shift 2
  check "$name" 0 "$gpumux" experiment --out "$out" --backend slurm "$@"
  job="$(cat "$out/slurm/job_id" 2>/dev/null)"
  [ -n "$job" ] && jobs_submitted+=("$job")
}

same_reports() {  # same_reports NAME DIR_A DIR_B
  check "$1-json" 0 cmp "$2/report.json" "$3/report.json"
  check "$1-md" 0 cmp "$2/report.md" "$3/report.md"
}

gpu="$src/configs/gpus/kepler-k20c.yaml"
# The smoke experiment (2 workloads x fcfs, fifo; 5 isolated baselines), with absolute paths so that it
# can be changed below.
cat >"$work/smoke.yaml" <<YAML
name: smoke
description: smoke.yaml through Slurm
gpu: $gpu
analysis: summary
workloads: [$src/configs/workloads/sgemm-3x.yaml, $src/configs/workloads/demo-parboil-4proc.yaml]
runs:
  - {label: fcfs, policy: fcfs}
  - {label: fifo, policy: fifo}
seeds: [1]
YAML
# Generated mixes with a high-priority process and two seeds (a cut of tanasic-priority): baselines
# per seed, the prioritized workload variant, preemption.
cat >"$work/prio.yaml" <<YAML
name: prio
description: a cut of tanasic-priority
gpu: $gpu
analysis: tanasic-priority
workloads:
  generate: tanasic-mixes
  applications: $src/configs/workloads/tanasic/parboil-apps.yaml
  process_counts: [2]
  mixes_per_count: 2
  mix_seed: 2014
  high_priority: first
runs:
  - {label: fcfs, policy: fcfs, copy_policy: npq}
  - {label: ppq-cs, policy: ppq, preemption: context-switch, options: {access: exclusive}, copy_policy: npq}
seeds: [1, 2]
YAML

# 1. One simulation per task (the default): the same reports as the local backend.
check local-smoke 0 "$gpumux" experiment "$work/smoke.yaml" --out "$work/local-smoke" --jobs 2 --quiet
submit submit-smoke "$work/slurm-smoke" "$work/smoke.yaml"
expect_text submit-plan "$work/out" "9 Slurm array tasks of up to 1 simulation"
expect_text submit-job "$work/out" "submitted Slurm job $job: tasks 0-8"
expect_text submit-collect-hint "$work/out" "gpumux experiment --collect $work/slurm-smoke"
expect_text submit-array "$work/slurm-smoke/slurm/job.sh" "#SBATCH --array=0-8"
wait_job "$job"
check collect-smoke 0 "$gpumux" experiment --collect "$work/slurm-smoke"
expect_text collect-rows "$work/out" "fifo/antt"
same_reports smoke-identical "$work/local-smoke" "$work/slurm-smoke"

# 2. A lost task (as if Slurm killed it): --collect names it and its log (exit 2) and prints the
# sbatch command that runs it again; after that, the same reports.
mv "$work/slurm-smoke/slurm/results/task-4.json" "$work/task-4.json"
rm "$work/slurm-smoke/report.json" "$work/slurm-smoke/report.md"
check collect-missing 2 "$gpumux" experiment --collect "$work/slurm-smoke"
expect_text collect-missing-which "$work/err" "1 of the 9 Slurm tasks of job $job has no results yet (task 4"
expect_text collect-missing-log "$work/err" "$work/slurm-smoke/slurm/logs/task-4.out"
expect_text collect-missing-rerun "$work/err" "sbatch --array=4 [the same --slurm-arg] $work/slurm-smoke/slurm/job.sh"
check collect-missing-no-report 1 test -e "$work/slurm-smoke/report.json"
check rerun-task 0 sbatch --parsable --array=4 "$work/slurm-smoke/slurm/job.sh"
rerun="$(tail -n 1 "$work/out")"
jobs_submitted+=("$rerun")
wait_job "$rerun"
check collect-after-rerun 0 "$gpumux" experiment --collect "$work/slurm-smoke" --quiet
same_reports smoke-identical-after-rerun "$work/local-smoke" "$work/slurm-smoke"

# 3. Several simulations per task, two CPUs each, sbatch arguments passed through, no cache.
check local-prio 0 "$gpumux" experiment "$work/prio.yaml" --out "$work/local-prio" --jobs 2 --quiet --no-cache
submit submit-prio "$work/slurm-prio" "$work/prio.yaml" --runs-per-task 5 --no-cache --slurm-arg=--cpus-per-task=2 \
  --slurm-arg=--time=10 --slurm-arg=--job-name=gpumux-test-prio
expect_text submit-prio-plan "$work/out" "= 8 simulations, plus 8 isolated baselines; 4 Slurm array tasks of up to 5"
wait_job "$job"
check collect-prio 0 "$gpumux" experiment --collect "$work/slurm-prio" --quiet
same_reports prio-identical "$work/local-prio" "$work/slurm-prio"

# 4. A task whose simulation fails (over --timeout): --collect exits 1 naming the task, why, and its log.
cat >"$work/long.yaml" <<YAML
name: long
kernel_libraries: [$src/configs/kernels/parboil.yaml]
processes:
  - name: spin
    repeat: 20
    streams:
      - - kernel: {name: mysgemmNT, launches: 20000}
YAML
cat >"$work/long-exp.yaml" <<YAML
gpu: $gpu
analysis: summary
workloads: [$work/long.yaml, $src/configs/workloads/sgemm-3x.yaml]
runs:
  - {label: fcfs, policy: fcfs}
YAML
submit submit-long "$work/slurm-long" "$work/long-exp.yaml" --timeout 1 --no-cache --quiet
wait_job "$job"
check collect-failed 1 "$gpumux" experiment --collect "$work/slurm-long"
expect_text collect-failed-which "$work/err" "2 of the 4 Slurm tasks of job $job failed (tasks 0, 2)"
expect_text collect-failed-why "$work/err" "task 0: workload 'long/spin (isolated)', policy fcfs, seed 1: no result within the wall-clock limit of 1 s"
expect_text collect-failed-log "$work/err" "(log $work/slurm-long/slurm/logs/task-0.out)"

# 5. The experiment changed after submission: --collect refuses (exit 2) rather than mix two grids.
sed -i 's/^seeds: \[1\]/seeds: [2]/' "$work/smoke.yaml"
check collect-changed 2 "$gpumux" experiment --collect "$work/slurm-smoke"
expect_text collect-changed-msg "$work/err" "changed since it was submitted"

# 6. Submission errors (exit 2), each leaving no submission behind.
check sbatch-missing 2 env PATH=/nonexistent "$gpumux" experiment "$work/prio.yaml" --out "$work/x1" --backend slurm
expect_text sbatch-missing-msg "$work/err" "'sbatch' is not on PATH"
check sbatch-missing-nothing 1 test -e "$work/x1/slurm"
check sbatch-fails 2 "$gpumux" experiment "$work/prio.yaml" --out "$work/x2" --backend slurm \
  --slurm-arg=--partition=no-such-partition
expect_text sbatch-fails-msg "$work/err" "sbatch failed (exit 1)"
expect_text sbatch-fails-slurm "$work/err" "no-such-partition"
check sbatch-fails-nothing 1 test -e "$work/x2/slurm"
check again-same-out 2 "$gpumux" experiment "$work/prio.yaml" --out "$work/slurm-prio" --backend slurm
expect_text again-same-out-msg "$work/err" "already holds a Slurm submission"
check unknown-backend 2 "$gpumux" experiment "$work/prio.yaml" --out "$work/x3" --backend pbs
expect_text unknown-backend-msg "$work/err" "--backend must be local or slurm, not 'pbs'"
check runs-per-task-local 2 "$gpumux" experiment "$work/prio.yaml" --out "$work/x3" --runs-per-task 2
expect_text runs-per-task-local-msg "$work/err" "--runs-per-task is for --backend slurm"
check collect-nothing 2 "$gpumux" experiment --collect "$work/local-smoke"
expect_text collect-nothing-msg "$work/err" "holds no Slurm submission"
check collect-with-file 2 "$gpumux" experiment "$work/prio.yaml" --collect "$work/slurm-prio"
expect_text collect-with-file-msg "$work/err" "does not go with --collect"

echo "slurm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
