// The `liang-stm` analysis (Liang et al., TPDS 2015, 6, Fig. 7): each kernel set's total latency under every
// run against sequential execution (the first run), and the runs after the second against the second (STM
// against the default concurrent execution).

#include <algorithm>
#include <optional>

#include "app/analysis/analysis.h"
#include "app/analysis/selection.h"

namespace gpumux {

namespace {

/// 100 (1 - T / T_base): Liang's "performance improvement" of a kernel set's latency.
double improvement_percent(const RunOutcome& base, const RunOutcome& other) {
  return 100.0 * (1.0 - other.simulated_ns / base.simulated_ns);
}

void add_comparison(const ExperimentResults& r, std::size_t base_run, std::size_t run,
                    const std::string& prefix, bool per_workload, std::vector<ReportRow>& rows) {
  Mean mean;
  std::optional<double> best;
  for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
    Mean here;
    for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
      const RunOutcome* base = r.outcome(w, base_run, s);
      const RunOutcome* other = r.outcome(w, run, s);
      if (base != nullptr && other != nullptr) here.add(improvement_percent(*base, *other));
    }
    if (per_workload) {
      rows.push_back(
          {prefix + r.grid->workloads[w].workload.name + "/improvement", here.value(), std::nullopt, "%"});
    }
    if (const auto v = here.value()) {
      mean.add(*v);
      best = best ? std::max(*best, *v) : *v;
    }
  }
  rows.push_back({prefix + "mean_improvement", mean.value(), std::nullopt, "%"});
  rows.push_back({prefix + "max_improvement", best, std::nullopt, "%"});
}

std::vector<ReportRow> analyze_stm(const ExperimentResults& r) {
  std::vector<ReportRow> rows;
  const std::vector<std::size_t> runs = select_runs(*r.config, {RunRole::kUnderTest, ""});
  for (const std::size_t run : runs) add_comparison(r, 0, run, r.config->runs[run].label + "/", true, rows);
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const std::string prefix = r.config->runs[runs[i]].label + "/over_" + r.config->runs[runs[0]].label + "/";
    add_comparison(r, runs[0], runs[i], prefix, false, rows);
  }
  return rows;
}

}  // namespace

AnalysisInfo liang_stm_analysis() {
  AnalysisInfo info{
      "liang-stm",
      "kernel sets' latency under spatial-temporal multitasking against sequential execution (Liang 6, Fig. "
      "7)",
      "A workload is a kernel set, each kernel a process launched at time 0; its latency T is the simulated "
      "time "
      "until the last kernel finishes. For every run after the first (the sequential baseline, fcfs): per "
      "workload `<label>/<workload>/improvement` = 100 (1 - T_run / T_sequential), the mean over the seeds; "
      "`<label>/mean_improvement` and `max_improvement` over the workloads (Fig. 7's averages and maxima). "
      "For "
      "every run after the second, `<label>/over_<second>/...` the same against the second run (STM against "
      "the "
      "default concurrent execution).",
      analyze_stm};
  info.isolated_baselines = false;
  return info;
}

}  // namespace gpumux
