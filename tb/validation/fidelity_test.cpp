// Fidelity as tests: the orderings of the papers' tables that docs/validation.md says the model
// reproduces, asserted on small, fast versions of the shipped experiments (configs/experiments/*.yaml,
// loaded and then cut down: fewer policies, process counts or mixes), run through the same
// experiment code and analyses as `gpumux experiment` (app/experiment/run.h). Every assertion names the
// paper's table or figure and the margin it requires; orderings docs/validation.md lists as not
// reproduced are named in a comment and deliberately not asserted. The staircase (Pai Eq. 1, Table 3)
// is asserted by Validation.ErcbenchIsolatedRuntimesMatchPaiTable3 (staircase_test.cpp).
//
// Isolated baselines are simulated afresh (no on-disk cache), so nothing from the machine leaks in.
// Each test prints the rows it asserts on.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/analysis/registry.h"
#include "app/experiment/check.h"
#include "app/experiment/run.h"
#include "config/experiment_loader.h"

namespace gpumux {
namespace {

const std::string kExperiments = std::string(GPUMUX_SOURCE_DIR) + "/configs/experiments";
using Names = std::vector<std::string>;

/// The model values of an experiment's report rows, by row name.
class Rows {
 public:
  explicit Rows(const std::vector<ReportRow>& rows) {
    for (const ReportRow& r : rows) {
      if (r.model) values_[r.name] = *r.model;
    }
  }
  /// The row's value; a missing row fails the test (and gives NaN, which fails every comparison).
  [[nodiscard]] double operator()(const std::string& name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) {
      ADD_FAILURE() << "no value for row " << name;
      return std::nan("");
    }
    return it->second;
  }
  void print() const {
    for (const auto& [name, value] : values_) std::printf("  %-48s %8.3f\n", name.c_str(), value);
  }

 private:
  std::map<std::string, double> values_;
};

struct Grid {
  ExperimentConfig config;
  ExpandedExperiment grid;
  ExperimentResults results;
};

/// Loads configs/experiments/`file`, keeps the run entries labelled `labels` (the first stays the
/// baseline), lets `shrink` cut the grid down further, simulates it (2 jobs, no baseline cache) and
/// returns the analysis rows. The `paper:` figures are dropped (they would name removed rows).
Rows run_cut_down(const std::string& file, const std::vector<std::string>& labels,
                  const std::function<void(ExperimentConfig&)>& shrink, Grid& g,
                  const std::function<void(ExpandedExperiment&)>& shrink_grid = nullptr) {
  g.config = load_experiment(kExperiments + "/" + file);
  std::vector<ExperimentRun> runs;
  for (const std::string& label : labels) {
    const auto it = std::find_if(g.config.runs.begin(), g.config.runs.end(),
                                 [&](const ExperimentRun& r) { return r.label == label; });
    EXPECT_NE(it, g.config.runs.end()) << file << " has no run '" << label << "'";
    if (it != g.config.runs.end()) runs.push_back(*it);
  }
  g.config.runs = runs;
  g.config.paper.clear();
  if (shrink) shrink(g.config);
  g.grid = expand_experiment(g.config);
  if (shrink_grid) shrink_grid(g.grid);
  validate_experiment(g.config, g.grid);
  ExperimentOptions options;
  options.jobs = 2;
  options.use_cache = false;
  g.results = run_experiment(g.config, g.grid, options);
  Rows rows(experiment_rows(g.results));
  std::printf("%s, cut down: %zu workloads x %zu runs\n", g.config.name.c_str(), g.grid.workloads.size(),
              g.config.runs.size());
  rows.print();
  return rows;
}

/// Cuts a Tanasic grid down further: every process of every mix completes one run instead of the
/// applications file's three before the workload ends (Tanasic 4.1's replay rule with fewer runs);
/// the isolated baselines follow (one run each).
void fewer_runs(ExpandedExperiment& grid) {
  for (ExperimentWorkload& w : grid.workloads) {
    for (ProcessSpec& p : w.workload.processes) p.repeat = 1;
    if (w.prioritized) {
      for (ProcessSpec& p : w.prioritized->processes) p.repeat = 1;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Pai et al. Table 5 (6.2.1): all 56 ordered ERCBench pairs on the Fermi config, the second kernel
// 100 ns after the first, lognormal thread-block times (seed 1). The whole grid of the paper's five
// policies (280 simulations, a few seconds); ljf and srtf-oracle, not in Table 5, are left out.
//
// Not asserted, because docs/validation.md ("Tables 5 and 6") says the model does not reproduce it:
// SRTF's STP and ANTT ahead of SRTF/Adaptive's (within seed noise, see below); SJF being the fairest policy
// (model StrictF 0.57 against SRTF/Adaptive's 0.58; Pai 0.80 / 0.56).
TEST(Fidelity, PaiTable5OrderingsHold) {
  Grid g;
  const Rows m =
      run_cut_down("pai-table5.yaml", {"fifo", "mpmax", "srtf", "srtf-adaptive", "sjf"}, nullptr, g);
  const std::vector<std::string> realizable = {"fifo", "mpmax", "srtf", "srtf-adaptive"};

  // Table 5: SRTF has the best STP and ANTT of the realizable policies (FIFO, MPMax, SRTF,
  // SRTF/Adaptive). Asserted strictly against FIFO and MPMax. Not against SRTF/Adaptive: since thread-block
  // times are drawn per (process, launch, TB) (issue 10), the two are within 1% of each other and the sign
  // of the gap follows the seed (STP srtf / srtf-adaptive: seed 1 1.543 / 1.550, seed 2 1.54 / 1.55,
  // seed 3 1.56 / 1.54; docs/validation.md "Tables 5 and 6"): the model does not resolve Pai's 5% gap,
  // and the within-5% check below is what it does reproduce.
  for (const std::string& p : Names{"fifo", "mpmax"}) {
    EXPECT_GT(m("srtf/stp"), m(p + "/stp")) << "Pai Table 5: SRTF's STP above " << p << "'s";
    EXPECT_LT(m("srtf/antt"), m(p + "/antt")) << "Pai Table 5: SRTF's ANTT below " << p << "'s";
  }
  // Table 5: SRTF/Adaptive is the fairest realizable policy (strictly), with STP within 5% of SRTF's
  // (Pai 6.2.1: "lower by 5%"; model 0.99).
  for (const std::string& p : Names{"fifo", "mpmax", "srtf"}) {
    EXPECT_GT(m("srtf-adaptive/fairness"), m(p + "/fairness"))
        << "Pai Table 5: SRTF/Adaptive fairer than " << p;
  }
  EXPECT_GE(m("srtf-adaptive/stp_vs_srtf"), 0.95) << "Pai 6.2.1: SRTF/Adaptive's STP within 5% of SRTF's";
  // Table 5: FIFO has the worst ANTT and fairness of the paper's policies, each by at least 10%
  // (model: ANTT 2.86 against MPMax's 1.91; StrictF 0.26 against 0.44).
  for (const std::string& p : Names{"mpmax", "srtf", "srtf-adaptive", "sjf"}) {
    EXPECT_GT(m("fifo/antt"), 1.1 * m(p + "/antt")) << "Pai Table 5: FIFO's ANTT worse than " << p << "'s";
    EXPECT_LT(1.1 * m("fifo/fairness"), m(p + "/fairness")) << "Pai Table 5: FIFO less fair than " << p;
  }
  // Table 5: MPMax improves ANTT and fairness over FIFO at about FIFO's STP (within 5%; model 1.44
  // against 1.46, Pai 1.37 against 1.35). ANTT and fairness by at least 10% (as above).
  EXPECT_NEAR(m("mpmax/stp") / m("fifo/stp"), 1.0, 0.05) << "Pai Table 5: MPMax at about FIFO's STP";
  // Table 5: the SJF oracle has the best STP and ANTT of all (strictly; model 1.61 / 1.49 against
  // SRTF's 1.55 / 1.58), so SRTF closes part, not all, of the FIFO-SJF STP gap.
  for (const std::string& p : realizable) {
    EXPECT_GT(m("sjf/stp"), m(p + "/stp")) << "Pai Table 5: SJF's STP above " << p << "'s";
    EXPECT_LT(m("sjf/antt"), m(p + "/antt")) << "Pai Table 5: SJF's ANTT below " << p << "'s";
  }
  EXPECT_GT(m("srtf/stp_gap_closed"), 0.0);
  EXPECT_LT(m("srtf/stp_gap_closed"), 1.0);

  // Pai 6.2.3: the worst workload is SHA1 + JPEG-d (highest ANTT) under FIFO, MPMax and SRTF.
  for (std::size_t run = 0; run < g.config.runs.size(); ++run) {
    const std::string& label = g.config.runs[run].label;
    if (label != "fifo" && label != "mpmax" && label != "srtf") continue;
    std::size_t worst = 0;
    double worst_antt = 0;
    for (std::size_t w = 0; w < g.grid.workloads.size(); ++w) {
      const RunOutcome* o = g.results.outcome(w, run, 0);
      ASSERT_NE(o, nullptr) << g.grid.workloads[w].workload.name << " under " << label;
      if (o->antt > worst_antt) {
        worst_antt = o->antt;
        worst = w;
      }
    }
    EXPECT_EQ(g.grid.workloads[worst].workload.name, "SHA1+JPEG-d")
        << "Pai 6.2.3: worst workload under " << label;
  }
}

// ---------------------------------------------------------------------------------------------------
// Pai et al. Table 6 (6.2.5): as Table 5 with the second kernel arriving at 25% or 50% of the first
// kernel's runtime; the paper's four policies (448 simulations). docs/validation.md: "from 25% to 50%
// offsets the gaps between policies shrink". In the model that holds for ANTT and StrictF; the STP
// gap between FIFO and SRTF does not shrink (0.12 -> 0.13; Pai 0.18 -> 0.15) and is not asserted.
TEST(Fidelity, PaiTable6GapsShrinkFrom25To50Percent) {
  Grid g;
  const Rows m = run_cut_down("pai-table6.yaml", {"fifo", "mpmax", "srtf", "srtf-adaptive"}, nullptr, g);
  const Names policies = {"fifo", "mpmax", "srtf", "srtf-adaptive"};
  const auto spread = [&](const std::string& group, const std::string& metric) {
    double lo = m(policies[0] + "/" + group + "/" + metric);
    double hi = lo;
    for (const std::string& p : policies) {
      lo = std::min(lo, m(p + "/" + group + "/" + metric));
      hi = std::max(hi, m(p + "/" + group + "/" + metric));
    }
    return hi - lo;
  };
  // Table 6: the spread of ANTT over the four policies (FIFO's worst against SRTF's best) is smaller
  // at 50% than at 25%, by at least 10% (model 1.08 -> 0.85; Pai 1.14 -> 0.80).
  EXPECT_LT(spread("50pct", "antt"), 0.9 * spread("25pct", "antt")) << "Pai Table 6: ANTT gap shrinks";
  // Table 6: the StrictF spread is smaller at 50% than at 25% (strictly; model 0.35 -> 0.32).
  EXPECT_LT(spread("50pct", "fairness"), spread("25pct", "fairness")) << "Pai Table 6: fairness gap shrinks";
  // Table 6, both offsets: SRTF keeps the best STP and ANTT and FIFO the worst ANTT and StrictF.
  for (const std::string& group : Names{"25pct", "50pct"}) {
    for (const std::string& p : Names{"fifo", "mpmax", "srtf-adaptive"}) {
      EXPECT_GT(m("srtf/" + group + "/stp"), m(p + "/" + group + "/stp"))
          << group << ": SRTF's STP above " << p;
      EXPECT_LT(m("srtf/" + group + "/antt"), m(p + "/" + group + "/antt"))
          << group << ": SRTF's ANTT below " << p;
    }
    for (const std::string& p : Names{"mpmax", "srtf", "srtf-adaptive"}) {
      EXPECT_GT(m("fifo/" + group + "/antt"), m(p + "/" + group + "/antt"))
          << group << ": FIFO's ANTT above " << p;
      EXPECT_LT(m("fifo/" + group + "/fairness"), m(p + "/" + group + "/fairness"))
          << group << ": FIFO less fair than " << p;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Tanasic et al. 4.4, Fig. 7: DSS with equal sharing against FCFS, context switch and draining, on
// random mixes of the Parboil applications (docs/validation.md section 10). Cut down to the 2- and
// 8-process columns (the ends of the paper's ranges), 4 mixes each (the shipped grid has 30), and one
// completed run per process instead of three (fewer_runs); about 25 s on two cores.
//
// Not asserted, because docs/validation.md section 10 says the model does not reproduce it: DSS
// lowering STP against FCFS (Fig. 7c; the model's stp_degradation is below 1 at every count).
// Not asserted on this small grid: the SHORT group's gain at 2 processes (and context switching's
// lead over draining there), which needs many mixes (docs/validation.md 10: 0.96 with 10 mixes,
// 1.35 with 30; here 0.88); it is asserted at 8 processes.
TEST(Fidelity, TanasicDssTrendsHold) {
  Grid g;
  const Rows m = run_cut_down(
      "tanasic-dss.yaml", {"fcfs", "dss-cs", "dss-drain"},
      [](ExperimentConfig& c) {
        c.generator->process_counts = {2, 8};
        c.generator->mixes_per_count = 4;
      },
      g, fewer_runs);
  for (const std::string& run : Names{"dss-cs", "dss-drain"}) {
    const std::string two = run + "/2proc/";
    const std::string eight = run + "/8proc/";
    // Fig. 7a: DSS improves ANTT over FCFS (by at least 5% at 2 processes; model 1.13 / 1.12, paper
    // 1.5 / 1.4), and more as processes are added: at 8 processes by at least 1.25x the 2-process
    // improvement (model 5.8 against 1.13; paper 2 against 1.5).
    EXPECT_GT(m(two + "antt_improvement"), 1.05) << run << ": Tanasic Fig. 7a, ANTT improved at 2 processes";
    EXPECT_GT(m(eight + "antt_improvement"), 1.25 * m(two + "antt_improvement"))
        << run << ": Tanasic Fig. 7a, ANTT improvement grows with the process count";
    // Fig. 7b: fairness improves (at least 10% at 2 processes; model 1.37 / 1.30, paper 1.1 / 1.05)
    // and more with 8 processes (at least 1.25x the 2-process improvement; model 28, paper 3.35 / 2.7).
    EXPECT_GT(m(two + "fairness_improvement"), 1.1) << run << ": Tanasic Fig. 7b, fairer at 2 processes";
    EXPECT_GT(m(eight + "fairness_improvement"), 1.25 * m(two + "fairness_improvement"))
        << run << ": Tanasic Fig. 7b, fairness improvement grows with the process count";
    // Fig. 7a: LONG applications pay (NTT improvement below 1 at both counts; model 0.96-0.97 at 2,
    // 0.78-0.84 at 8; paper 0.9 -> 0.55), and pay more with 8 processes than with 2.
    EXPECT_LT(m(two + "ntt_improvement_long"), 1.0) << run << ": Tanasic Fig. 7a, LONG pays at 2 processes";
    EXPECT_LT(m(eight + "ntt_improvement_long"), 0.95)
        << run << ": Tanasic Fig. 7a, LONG pays at 8 processes";
    EXPECT_LT(m(eight + "ntt_improvement_long"), m(two + "ntt_improvement_long")) << run;
    // Fig. 7a: MEDIUM gains more than LONG at both counts, and at 8 processes SHORT gains most; each
    // step by at least 10% (model at 8: SHORT 13.8 / 11.2, MEDIUM 2.9 / 2.8, LONG 0.78 / 0.84).
    EXPECT_GT(m(two + "ntt_improvement_medium"), 1.1 * m(two + "ntt_improvement_long")) << run;
    EXPECT_GT(m(eight + "ntt_improvement_medium"), 1.1 * m(eight + "ntt_improvement_long")) << run;
    EXPECT_GT(m(eight + "ntt_improvement_short"), 1.1 * m(eight + "ntt_improvement_medium")) << run;
  }
  // Fig. 7a-b: context switching beats draining on ANTT and fairness at both counts, and on the SHORT
  // group at 8 processes. Margin: strictly (model ANTT 1.131 / 1.117 and 5.82 / 5.79).
  for (const std::string& n : Names{"2proc", "8proc"}) {
    EXPECT_GT(m("dss-cs/" + n + "/antt_improvement"), m("dss-drain/" + n + "/antt_improvement")) << n;
    EXPECT_GT(m("dss-cs/" + n + "/fairness_improvement"), m("dss-drain/" + n + "/fairness_improvement")) << n;
  }
  EXPECT_GT(m("dss-cs/8proc/ntt_improvement_short"), m("dss-drain/8proc/ntt_improvement_short"));
}

// ---------------------------------------------------------------------------------------------------
// Tanasic et al. 4.2, Fig. 5 (and 4.3, Fig. 6a): priority queues with and without preemption,
// exclusive access, the first process of each mix at high priority. Cut down to 2 and 8 processes,
// 10 mixes each (each application is the high-priority one once, so every Class 1 group appears; the
// shipped grid has 30), one completed run per process (fewer_runs); about 45 s on two cores.
//
// Not asserted, because docs/validation.md section 10 says the model does not reproduce them: draining
// costing more STP than context switching (Fig. 6a), and shared access costing more than exclusive
// (Fig. 6b); the shared-access runs are left out.
TEST(Fidelity, TanasicPriorityTrendsHold) {
  Grid g;
  const Rows m = run_cut_down(
      "tanasic-priority.yaml", {"fcfs", "npq", "ppq-cs", "ppq-drain"},
      [](ExperimentConfig& c) {
        c.generator->process_counts = {2, 8};
        c.generator->mixes_per_count = 10;
      },
      g, fewer_runs);
  // Fig. 5: NPQ brings nothing with 2 processes (within 5% of 1; model 1.02, paper 1.0) and gains
  // with 8 (at least 1.3x; model 1.98, paper 1.6).
  EXPECT_NEAR(m("npq/2proc/hp_improvement"), 1.0, 0.05) << "Tanasic Fig. 5: npq at 2 processes";
  EXPECT_GT(m("npq/8proc/hp_improvement"), 1.3) << "Tanasic Fig. 5: npq at 8 processes";
  for (const std::string& run : Names{"ppq-cs", "ppq-drain"}) {
    // Fig. 5: preemption improves the high-priority turnaround (at least 10% at 2 processes; model
    // 1.35 / 1.23, paper 2 / 1.6), by far more with 8 processes (at least 3x the 2-process value;
    // model 10.1 / 5.4, paper 15.6 / 6), and more than npq at both counts (strictly).
    EXPECT_GT(m(run + "/2proc/hp_improvement"), 1.1) << run << ": Tanasic Fig. 5 at 2 processes";
    EXPECT_GT(m(run + "/8proc/hp_improvement"), 3.0 * m(run + "/2proc/hp_improvement"))
        << run << ": Tanasic Fig. 5, improvement grows with the process count";
    EXPECT_GT(m(run + "/2proc/hp_improvement"), m("npq/2proc/hp_improvement")) << run;
    EXPECT_GT(m(run + "/8proc/hp_improvement"), m("npq/8proc/hp_improvement")) << run;
    // Fig. 5, 8 processes: SHORT high-priority applications gain most and LONG ones least, each step
    // by at least 1.5x (model SHORT 37 / 15, MEDIUM 4.4 / 4.1, LONG 1.37 / 1.35; paper 63.7, 4.6,
    // 1.76 with context switch).
    EXPECT_GT(m(run + "/8proc/hp_improvement_short"), 1.5 * m(run + "/8proc/hp_improvement_medium")) << run;
    EXPECT_GT(m(run + "/8proc/hp_improvement_medium"), 1.5 * m(run + "/8proc/hp_improvement_long")) << run;
    // Fig. 6a: preemption costs STP over npq (overhead at least 1, i.e. no STP gain; model 1.02-1.15,
    // paper 1.08-1.38).
    for (const std::string& n : Names{"2proc", "8proc"}) {
      EXPECT_GE(m(run + "/" + n + "/stp_overhead_vs_npq"), 1.0) << run << " " << n << ": Tanasic Fig. 6a";
    }
  }
  // Fig. 5: context switching beats draining at both counts (strictly; model 1.35 / 1.23 and 10.1 /
  // 5.4) and for SHORT high-priority applications at 8 processes (model 37 / 15, paper 63.7 / 16.2).
  for (const std::string& n : Names{"2proc", "8proc"}) {
    EXPECT_GT(m("ppq-cs/" + n + "/hp_improvement"), m("ppq-drain/" + n + "/hp_improvement")) << n;
  }
  EXPECT_GT(m("ppq-cs/8proc/hp_improvement_short"), m("ppq-drain/8proc/hp_improvement_short"));
}

}  // namespace
}  // namespace gpumux
