// The `summary` analysis: per run label, the mean STP, ANTT and fairness over all workloads and seeds.

#include "app/analysis/analysis.h"
#include "app/analysis/selection.h"

namespace gpumux {

namespace {

std::vector<ReportRow> analyze_summary(const ExperimentResults& r) {
  std::vector<ReportRow> rows;
  for (const std::size_t run : select_runs(*r.config, {RunRole::kAny, ""})) {
    Mean stp;
    Mean antt;
    Mean fairness;
    for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
      for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
        if (const RunOutcome* o = r.outcome(w, run, s)) {
          stp.add(o->stp);
          antt.add(o->antt);
          fairness.add(o->fairness);
        }
      }
    }
    const std::string& label = r.config->runs[run].label;
    rows.push_back({label + "/stp", stp.value(), std::nullopt, ""});
    rows.push_back({label + "/antt", antt.value(), std::nullopt, ""});
    rows.push_back({label + "/fairness", fairness.value(), std::nullopt, ""});
  }
  return rows;
}

}  // namespace

AnalysisInfo summary_analysis() {
  return {"summary", "per run label: mean STP, ANTT and fairness over all workloads and seeds",
          "`<label>/stp`, `<label>/antt`, `<label>/fairness`: the mean, over every workload and seed, of "
          "that run's STP, ANTT and fairness (Eyerman and Eeckhout; docs/user-guide.md, Metrics).",
          analyze_summary};
}

}  // namespace gpumux
