// The `pai-table` analysis (Pai et al. Tables 5 and 6): geometric means of STP, ANTT and StrictF
// fairness per run label, grouped by the `group:` of the workloads' entries (Table 6's arrival offset),
// plus two derived rows: the share of the
// FIFO-to-SJF STP gap SRTF closes and SRTF/Adaptive's STP relative to SRTF. The runs of the derived
// rows are found by the policy their entry names (RunSelector), whatever their labels.

#include <string>

#include "app/analysis/analysis.h"
#include "app/analysis/selection.h"

namespace gpumux {

namespace {

struct Means {
  std::optional<double> stp;
  std::optional<double> antt;
  std::optional<double> fairness;
};

std::vector<ReportRow> analyze_pai_table(const ExperimentResults& r) {
  std::vector<std::string> groups;
  for (const ExperimentWorkload& w : r.grid->workloads) {
    bool known = false;
    for (const std::string& seen : groups) known = known || seen == w.group;
    if (!known) groups.push_back(w.group);
  }
  const auto fifo = select_run(*r.config, {RunRole::kAny, "fifo"});
  const auto srtf = select_run(*r.config, {RunRole::kAny, "srtf"});
  const auto sjf = select_run(*r.config, {RunRole::kAny, "sjf"});
  const auto adaptive = select_run(*r.config, {RunRole::kAny, "srtf-adaptive"});
  std::vector<ReportRow> rows;
  for (const std::string& group : groups) {
    const std::string infix = group.empty() ? "/" : "/" + group + "/";
    std::vector<Means> means(r.config->runs.size());
    for (const std::size_t run : select_runs(*r.config, {RunRole::kAny, ""})) {
      GeoMean stp;
      GeoMean antt;
      GeoMean fairness;
      for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
        if (r.grid->workloads[w].group != group) continue;
        for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
          if (const RunOutcome* o = r.outcome(w, run, s)) {
            stp.add(o->stp);
            antt.add(o->antt);
            fairness.add(o->fairness);
          }
        }
      }
      means[run] = {stp.value(), antt.value(), fairness.value()};
      const std::string prefix = r.config->runs[run].label + infix;
      rows.push_back({prefix + "stp", means[run].stp, std::nullopt, ""});
      rows.push_back({prefix + "antt", means[run].antt, std::nullopt, ""});
      rows.push_back({prefix + "fairness", means[run].fairness, std::nullopt, ""});
    }
    if (fifo && srtf && sjf) {
      std::optional<double> closed;
      const Means& f = means[*fifo];
      const Means& s = means[*srtf];
      const Means& j = means[*sjf];
      if (f.stp && s.stp && j.stp && *j.stp != *f.stp) closed = (*s.stp - *f.stp) / (*j.stp - *f.stp);
      rows.push_back(
          {r.config->runs[*srtf].label + infix + "stp_gap_closed", closed, std::nullopt, "fraction"});
    }
    if (srtf && adaptive) {
      std::optional<double> ratio;
      if (means[*srtf].stp && means[*adaptive].stp) ratio = *means[*adaptive].stp / *means[*srtf].stp;
      rows.push_back({r.config->runs[*adaptive].label + infix + "stp_vs_srtf", ratio, std::nullopt, "x"});
    }
  }
  return rows;
}

}  // namespace

AnalysisInfo pai_table_analysis() {
  return {
      "pai-table", "geomean STP, ANTT and StrictF per policy, as Pai et al. Tables 5 and 6",
      "Workloads are grouped by the `group:` of their entry in the experiment file (Table 6: `25pct`, "
      "`50pct`, the second kernel's arrival offset; Table 5's entries have none and its rows no group). "
      "For every run label and group: `stp`, `antt` and `fairness` are the geometric means, over the group's "
      "workloads and "
      "every seed, of that run's STP, ANTT and StrictF (min NTT / max NTT), each workload's processes "
      "normalized to their isolated runs (Pai 6). With fifo, srtf and sjf runs: `<srtf>/stp_gap_closed` = "
      "(STP srtf - STP fifo) / (STP sjf - STP fifo), the share of the FIFO-SJF throughput gap SRTF closes "
      "(Pai: 49%). With srtf and srtf-adaptive runs: `<srtf-adaptive>/stp_vs_srtf` = STP srtf-adaptive / "
      "STP srtf (Pai: 0.95).",
      analyze_pai_table};
}

}  // namespace gpumux
