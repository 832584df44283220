#include "app/pai_analysis.h"

#include <cmath>
#include <optional>
#include <string>

namespace gpumux {

namespace {

/// Accumulates a geometric mean; empty means "no data" (a null in the report).
class GeoMean {
 public:
  void add(double value) {
    if (!(value > 0)) return;
    log_sum_ += std::log(value);
    ++count_;
  }
  [[nodiscard]] std::optional<double> value() const {
    if (count_ == 0) return std::nullopt;
    return std::exp(log_sum_ / static_cast<double>(count_));
  }

 private:
  double log_sum_ = 0;
  std::size_t count_ = 0;
};

std::string group_of(const std::string& workload_name) {
  const auto at = workload_name.rfind('@');
  return at == std::string::npos ? std::string() : workload_name.substr(at + 1);
}

/// The label of the first run with `policy`, if any.
std::optional<std::size_t> run_with_policy(const ExperimentConfig& config, const std::string& policy) {
  for (std::size_t i = 0; i < config.runs.size(); ++i) {
    if (config.runs[i].policy == policy) return i;
  }
  return std::nullopt;
}

struct Means {
  std::optional<double> stp;
  std::optional<double> antt;
  std::optional<double> fairness;
};

}  // namespace

std::vector<ReportRow> analyze_pai_table(const ExperimentResults& r) {
  std::vector<std::string> groups;
  for (const ExperimentWorkload& w : r.grid->workloads) {
    const std::string g = group_of(w.workload.name);
    bool known = false;
    for (const std::string& seen : groups) known = known || seen == g;
    if (!known) groups.push_back(g);
  }
  std::vector<ReportRow> rows;
  for (const std::string& group : groups) {
    const std::string infix = group.empty() ? "/" : "/" + group + "/";
    std::vector<Means> means(r.config->runs.size());
    for (std::size_t run = 0; run < r.config->runs.size(); ++run) {
      GeoMean stp;
      GeoMean antt;
      GeoMean fairness;
      for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
        if (group_of(r.grid->workloads[w].workload.name) != group) continue;
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
    const auto fifo = run_with_policy(*r.config, "fifo");
    const auto srtf = run_with_policy(*r.config, "srtf");
    const auto sjf = run_with_policy(*r.config, "sjf");
    const auto adaptive = run_with_policy(*r.config, "srtf-adaptive");
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

AnalysisInfo pai_table_analysis() {
  return {
      "pai-table", "geomean STP, ANTT and StrictF per policy, as Pai et al. Tables 5 and 6",
      "Workloads are grouped by the part of their name after '@' (Table 6: `25pct`, `50pct`, the second "
      "kernel's arrival offset; Table 5 names have none and its rows have no group). For every run label "
      "and group: `stp`, `antt` and `fairness` are the geometric means, over the group's workloads and "
      "every seed, of that run's STP, ANTT and StrictF (min NTT / max NTT), each workload's processes "
      "normalized to their isolated runs (Pai 6). With fifo, srtf and sjf runs: `<srtf>/stp_gap_closed` = "
      "(STP srtf - STP fifo) / (STP sjf - STP fifo), the share of the FIFO-SJF throughput gap SRTF closes "
      "(Pai: 49%). With srtf and srtf-adaptive runs: `<srtf-adaptive>/stp_vs_srtf` = STP srtf-adaptive / "
      "STP srtf (Pai: 0.95).",
      analyze_pai_table};
}

}  // namespace gpumux
