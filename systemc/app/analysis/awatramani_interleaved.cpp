// The `awatramani-interleaved` analysis (Awatramani, PhD thesis, 5.5.1 Table 5.2 and 5.5.3 Fig. 5.10): each
// workload is a pair of kernels launched together; its rows are Table 5.2's columns: each kernel alone,
// the pair under the baseline (the first run: sequential, left-over), under the interleaved policy, the
// maximum speedup (the shorter kernel fully hidden) and the achieved one, and the efficiency.

#include <algorithm>
#include <optional>

#include "app/analysis/analysis.h"
#include "app/analysis/selection.h"

namespace gpumux {

namespace {

/// Mean over the seeds of the pair's simulated time under `run`, core cycles.
std::optional<double> run_cycles(const ExperimentResults& r, std::size_t workload, std::size_t run) {
  const double mhz = r.grid->run_gpus[run].core_clock_mhz;
  Mean mean;
  for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
    if (const RunOutcome* o = r.outcome(workload, run, s)) mean.add(o->simulated_ns * mhz / 1000.0);
  }
  return mean.value();
}

/// Mean over the seeds of process `p` alone (its isolated baseline, the baseline run's GPU), cycles.
std::optional<double> alone_cycles(const ExperimentResults& r, std::size_t workload, std::size_t p) {
  const double mhz = r.grid->run_gpus[0].core_clock_mhz;
  Mean mean;
  for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
    const RunOutcome* o = r.outcome(workload, 0, s);
    if (o != nullptr && p < o->processes.size()) mean.add(o->processes[p].isolated_ps * mhz / 1e6);
  }
  return mean.value();
}

/// Mean over the seeds of when process `p`'s last kernel ended under `run`, cycles from the start: how far
/// each kernel of the pair was slowed by the other (Fig. 5.8's "once the stream kernel completes").
std::optional<double> end_cycles(const ExperimentResults& r, std::size_t workload, std::size_t run,
                                 std::size_t p) {
  const double mhz = r.grid->run_gpus[run].core_clock_mhz;
  Mean mean;
  for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
    const RunOutcome* o = r.outcome(workload, run, s);
    if (o == nullptr) continue;
    std::optional<TimePs> end;
    for (const KernelOutcome& k : o->kernels) {
      if (k.process == p) end = std::max(end.value_or(0), k.end_ps);
    }
    if (end) mean.add(static_cast<double>(*end) * mhz / 1e6);
  }
  return mean.value();
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return *a / *b;
}

std::vector<ReportRow> analyze_interleaved(const ExperimentResults& r) {
  std::vector<ReportRow> rows;
  const ExperimentConfig& config = *r.config;
  const std::optional<std::size_t> interleaved = select_run(config, {RunRole::kUnderTest, "interleaved"});
  Mean efficiency;
  for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
    const std::string& name = r.grid->workloads[w].workload.name;
    const std::optional<double> k1 = alone_cycles(r, w, 0);
    const std::optional<double> k2 = alone_cycles(r, w, 1);
    const std::optional<double> sequential = run_cycles(r, w, 0);
    rows.push_back({name + "/kernel1_cycles", k1, std::nullopt, "cycles"});
    rows.push_back({name + "/kernel2_cycles", k2, std::nullopt, "cycles"});
    rows.push_back({name + "/sequential_cycles", sequential, std::nullopt, "cycles"});
    std::optional<double> longer;
    if (k1 && k2) longer = std::max(*k1, *k2);
    const std::optional<double> max_speedup = ratio(sequential, longer);
    if (interleaved) {
      const std::optional<double> t = run_cycles(r, w, *interleaved);
      const std::optional<double> achieved = ratio(sequential, t);
      const std::optional<double> eff = ratio(achieved, max_speedup);
      rows.push_back({name + "/interleaved_cycles", t, std::nullopt, "cycles"});
      rows.push_back({name + "/interleaved_kernel1_end_cycles", end_cycles(r, w, *interleaved, 0),
                      std::nullopt, "cycles"});
      rows.push_back({name + "/interleaved_kernel2_end_cycles", end_cycles(r, w, *interleaved, 1),
                      std::nullopt, "cycles"});
      rows.push_back({name + "/max_speedup", max_speedup, std::nullopt, "x"});
      rows.push_back({name + "/achieved_speedup", achieved, std::nullopt, "x"});
      rows.push_back({name + "/efficiency", eff, std::nullopt, "ratio"});
      if (eff) efficiency.add(*eff);
    } else {
      rows.push_back({name + "/max_speedup", max_speedup, std::nullopt, "x"});
    }
    // Any other run (fifo, say) beside the baseline: its speedup over the sequential run.
    for (std::size_t run = 1; run < config.runs.size(); ++run) {
      if (interleaved && run == *interleaved) continue;
      rows.push_back({config.runs[run].label + "/" + name + "/speedup",
                      ratio(sequential, run_cycles(r, w, run)), std::nullopt, "x"});
    }
  }
  if (interleaved) rows.push_back({"mean/efficiency", efficiency.value(), std::nullopt, "ratio"});
  return rows;
}

}  // namespace

AnalysisInfo awatramani_interleaved_analysis() {
  return {
      "awatramani-interleaved",
      "intra-core concurrent kernel pairs against the sequential (left-over) baseline and the maximum "
      "speedup (Awatramani 5.5.1 Table 5.2, 5.5.3 Fig. 5.10)",
      "Each workload is a pair of kernels launched together by two processes. `<pair>/kernel1_cycles` and "
      "`kernel2_cycles`: each kernel alone (its process's isolated baseline, fcfs, on the baseline run's "
      "GPU); `sequential_cycles`: the pair under the first run (the baseline: left-over, sequential); "
      "`interleaved_cycles`: the pair under the first run of policy `interleaved`; `max_speedup` = "
      "sequential / the longer kernel alone (the shorter kernel fully hidden, no slowdown of the longer); "
      "`achieved_speedup` = sequential / interleaved; `efficiency` = achieved / max (Table 5.2's columns); "
      "`interleaved_kernel1_end_cycles`, `interleaved_kernel2_end_cycles`: when each kernel ended in the "
      "interleaved run. "
      "`<run>/<pair>/speedup`: any other run's sequential / its time. `mean/efficiency` over the pairs. "
      "Cycles are core cycles (simulated time x core clock), means over the seeds.",
      analyze_interleaved};
}

}  // namespace gpumux
