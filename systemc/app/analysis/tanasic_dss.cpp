// The `tanasic-dss` analysis (Tanasic et al. 4.4, Fig. 7): every run under test against the baseline,
// by process count and application class.

#include <map>

#include "app/analysis/analysis.h"
#include "app/analysis/selection.h"

namespace gpumux {

namespace {

std::vector<ReportRow> analyze_dss(const ExperimentResults& r) {
  std::vector<ReportRow> rows;
  const auto counts = process_counts(*r.grid);
  const auto classes = class_labels(*r.grid, false);
  const std::optional<std::size_t> baseline = select_run(*r.config, {RunRole::kBaseline, ""});
  if (!baseline) return rows;
  for (const std::size_t run : select_runs(*r.config, {RunRole::kUnderTest, ""})) {
    const std::string& label = r.config->runs[run].label;
    for (const std::size_t n : counts) {
      std::map<std::string, Mean> ntt;
      Mean antt;
      Mean fairness;
      Mean stp;
      for_each_pair(r, n, *baseline, run, [&](std::size_t, const RunOutcome& base, const RunOutcome& other) {
        antt.add(base.antt / other.antt);
        fairness.add(other.fairness / base.fairness);
        stp.add(base.stp / other.stp);
        for (std::size_t p = 0; p < other.processes.size(); ++p) {
          ntt[other.processes[p].class2].add(base.processes[p].ntt / other.processes[p].ntt);
        }
      });
      const std::string prefix = label + "/" + process_count_group(n) + "/";
      for (const std::string& c : classes) {
        rows.push_back({prefix + "ntt_improvement_" + lower(c), ntt[c].value(), std::nullopt, "x"});
      }
      rows.push_back({prefix + "antt_improvement", antt.value(), std::nullopt, "x"});
      rows.push_back({prefix + "fairness_improvement", fairness.value(), std::nullopt, "x"});
      rows.push_back({prefix + "stp_degradation", stp.value(), std::nullopt, "x"});
    }
  }
  return rows;
}

}  // namespace

AnalysisInfo tanasic_dss_analysis() {
  return {"tanasic-dss", "equal spatial sharing against the baseline, by process count (Tanasic 4.4, Fig. 7)",
          "For every run label other than the baseline (the first run) and every process count n, over the "
          "workloads with n processes and every seed, comparing the run with the baseline on the same "
          "workload: `ntt_improvement_<class>` is the mean of baseline NTT / run NTT over all processes of "
          "that Class 2 group (Table 1: SHORT < 5 ms, MEDIUM 30-115 ms, LONG > 400 ms; Fig. 7a); "
          "`antt_improvement` the mean of baseline ANTT / run ANTT; `fairness_improvement` the mean of run "
          "fairness / baseline fairness (Fig. 7b); `stp_degradation` the mean of baseline STP / run STP "
          "(Fig. 7c). Above 1 is better for the improvements, worse for the degradation.",
          analyze_dss};
}

}  // namespace gpumux
