// The `pai-table` experiment analysis (Pai Tables 5-6) on hand-made outcomes: geometric means per run
// label, grouping by the `group:` of the workload entries, the derived rows (runs found by policy), and
// the dry run.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "app/analysis/registry.h"

namespace gpumux {
namespace {

struct Fixture {
  ExperimentConfig config;
  ExpandedExperiment grid;
  ExperimentResults results;

  Fixture() {
    for (const char* p : {"fifo", "srtf", "srtf-adaptive", "sjf"}) {
      ExperimentRun run;
      run.label = p;
      run.policy = p;
      config.runs.push_back(run);
    }
    config.seeds = {1};
    for (const char* group : {"", "", "25pct"}) {
      ExperimentWorkload w;
      w.workload.name = "A+B@whatever";  // groups come from the entries' `group:`, not from names
      w.group = group;
      grid.workloads.push_back(w);
    }
    for (std::size_t w = 0; w < grid.workloads.size(); ++w) {
      for (std::size_t r = 0; r < config.runs.size(); ++r) grid.points.push_back({w, r, 0});
    }
    results.config = &config;
    results.grid = &grid;
    results.outcomes.assign(grid.points.size(), std::nullopt);
  }
  void set(std::size_t workload, std::size_t run, double stp, double antt, double fairness) {
    RunOutcome o;
    o.valid = true;
    o.stp = stp;
    o.antt = antt;
    o.fairness = fairness;
    results.outcomes[workload * config.runs.size() + run] = o;
  }
};

std::vector<ReportRow> analyze_pai_table(const ExperimentResults& results) {
  return find_analysis("pai-table")->analyze(results);
}

std::map<std::string, std::optional<double>> by_name(const std::vector<ReportRow>& rows) {
  std::map<std::string, std::optional<double>> m;
  for (const ReportRow& r : rows) m[r.name] = r.model;
  return m;
}

TEST(PaiAnalysis, GeometricMeansPerPolicyAndArrivalGroup) {
  Fixture f;
  // Group "" (A+B, B+A): fifo STP 1 and 4 -> 2; srtf 2 and 8 -> 4; sjf 3 and 12 -> 6; adaptive 1.5, 6 -> 3.
  f.set(0, 0, 1.0, 4.0, 0.1);
  f.set(1, 0, 4.0, 1.0, 0.4);
  f.set(0, 1, 2.0, 1.0, 0.5);
  f.set(1, 1, 8.0, 1.0, 0.5);
  f.set(0, 2, 1.5, 2.0, 0.6);
  f.set(1, 2, 6.0, 2.0, 0.6);
  f.set(0, 3, 3.0, 1.0, 0.9);
  f.set(1, 3, 12.0, 1.0, 0.9);
  // Group 25pct: only fifo simulated.
  f.set(2, 0, 1.7, 1.5, 0.3);
  const auto rows = by_name(analyze_pai_table(f.results));
  EXPECT_NEAR(*rows.at("fifo/stp"), 2.0, 1e-12);
  EXPECT_NEAR(*rows.at("fifo/antt"), 2.0, 1e-12);
  EXPECT_NEAR(*rows.at("fifo/fairness"), 0.2, 1e-12);
  EXPECT_NEAR(*rows.at("srtf/stp"), 4.0, 1e-12);
  EXPECT_NEAR(*rows.at("sjf/stp"), 6.0, 1e-12);
  EXPECT_NEAR(*rows.at("srtf/stp_gap_closed"), 0.5, 1e-12);  // (4 - 2) / (6 - 2)
  EXPECT_NEAR(*rows.at("srtf-adaptive/stp_vs_srtf"), 0.75, 1e-12);
  EXPECT_NEAR(*rows.at("fifo/25pct/stp"), 1.7, 1e-12);
  EXPECT_FALSE(rows.at("srtf/25pct/stp").has_value());
  EXPECT_FALSE(rows.at("srtf/25pct/stp_gap_closed").has_value());
  EXPECT_EQ(rows.count("fifo/25pct/antt"), 1U);
}

TEST(PaiAnalysis, DryRunListsEveryRowWithoutValues) {
  Fixture f;
  const std::vector<ReportRow> rows = analyze_pai_table(f.results);
  // 2 groups x (4 labels x 3 metrics + 2 derived rows)
  EXPECT_EQ(rows.size(), 2U * (4U * 3U + 2U));
  for (const ReportRow& r : rows) EXPECT_FALSE(r.model.has_value()) << r.name;
  EXPECT_EQ(rows.front().name, "fifo/stp");
  const AnalysisInfo* info = find_analysis("pai-table");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->analyze(f.results).size(), rows.size());
}

}  // namespace
}  // namespace gpumux
