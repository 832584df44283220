// Accuracy of the Simple Slicing predictor (Pai 4.2, Fig. 11): as Pai did, traces of thread blocks
// (start, end, SM) from runs are replayed through the predictor, and each SM's prediction is divided
// by the kernel's actual runtime on that SM (its Active_Kernel_Cycles when the kernel ended).
//   single-fixed    each ERCBench kernel alone, every block taking Table 3's mean t
//   single-profile  each kernel alone, block times lognormal with Table 3's %RSD ("single-sim")
//   mpmax           all 56 ordered two-kernel workloads under mpmax (second kernel after 100 ns),
//                   lognormal block times; slice-aware = the prediction of the last slice sampled
// Slice-unaware is the prediction made once, at the SM's first block end; slice-aware is the one made
// at the first sample of the last slice (Algorithm 1's rule, and the stricter "first block started
// in the slice"). Single-kernel runs have one slice, so both coincide there.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "predict/simple_slicing.h"
#include "validation/pai_support.h"

namespace gpumux {
namespace {

using Predictor = SimpleSlicingPredictor;

/// Replays one run's thread blocks through a predictor; returns its records (one per kernel per SM).
std::vector<Predictor::Record> replay(const RunResult& r, const std::vector<test::TbSlice>& tbs,
                                      std::uint32_t num_sms, std::uint32_t slots,
                                      Predictor::SampleRule rule) {
  enum Kind : int { kBlockEnd = 0, kKernelEnd = 1, kLaunch = 2, kBlockStart = 3 };
  struct Event {
    TimePs t;
    int kind;
    std::uint32_t sm;
    std::size_t item;  ///< kernel index (launch, kernel end) or index into tbs (blocks)
  };
  std::vector<Event> events;
  for (std::size_t k = 0; k < r.kernels.size(); ++k) {
    events.push_back({r.kernels[k].launch_ps, kLaunch, 0, k});
    events.push_back({r.kernels[k].end_ps, kKernelEnd, 0, k});
  }
  for (std::size_t i = 0; i < tbs.size(); ++i) {
    events.push_back({tbs[i].start_ps, kBlockStart, tbs[i].sm, i});
    events.push_back({tbs[i].end_ps, kBlockEnd, tbs[i].sm, i});
  }
  // At one instant the engine handles completions, then kernel ends, then arrivals and new blocks.
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.t, a.kind, a.sm, a.item) < std::tie(b.t, b.kind, b.sm, b.item);
  });
  Predictor::Options o;
  o.sample = rule;
  o.record = true;
  Predictor p(num_sms, slots, o);
  for (const Event& e : events) {
    switch (e.kind) {
      case kLaunch:
        p.on_launch(KernelId{static_cast<std::uint32_t>(e.item)}, r.kernels[e.item].thread_blocks,
                    r.kernels[e.item].tbs_per_sm, e.t);
        break;
      case kKernelEnd:
        p.on_kernel_end(KernelId{static_cast<std::uint32_t>(e.item)}, e.t);
        break;
      case kBlockStart:
        (void)p.on_block_start(SmId{e.sm}, KernelId{tbs[e.item].launch}, e.t);
        break;
      default:
        p.on_block_end_started_at(SmId{e.sm}, KernelId{tbs[e.item].launch}, tbs[e.item].start_ps, e.t);
    }
  }
  return p.records();
}

struct Group {
  std::string name;
  std::vector<double> unaware;
  std::vector<double> aware;
  std::vector<double> aware_started;  ///< slice-aware with the first-started-in-slice rule
  std::vector<std::string> kernels;   ///< the kernel of each prediction
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

double within(const std::vector<double>& v, double lo, double hi) {
  const auto n = std::count_if(v.begin(), v.end(), [&](double x) { return x >= lo && x <= hi; });
  return static_cast<double>(n) / static_cast<double>(v.size());
}

void print_row(const std::string& group, const std::string& mode, const std::vector<double>& v) {
  std::printf("| %s | %s | %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f%% |\n", group.c_str(), mode.c_str(),
              v.size(), quantile(v, 0), quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75),
              quantile(v, 1), 100.0 * within(v, 0.5, 2.0));
}

/// Runs `specs` with timelines and adds every kernel's per-SM predicted/actual to `g`.
void collect(std::vector<SimulationSpec> specs, const GpuConfig& gpu, Group& g,
             std::vector<std::vector<Predictor::Record>>* fixed_records = nullptr) {
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    paths.push_back(test::temp_path("accuracy-" + g.name + "-" + std::to_string(i)));
    specs[i].timeline_path = paths.back();
  }
  const std::vector<RunResult> results = simulate_all(specs, 2);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::vector<test::TbSlice> tbs = test::read_tb_slices(paths[i]);
    std::filesystem::remove(paths[i]);
    const auto alg1 =
        replay(results[i], tbs, gpu.num_sms, gpu.sm.max_thread_blocks, Predictor::SampleRule::kFirstToEnd);
    const auto started = replay(results[i], tbs, gpu.num_sms, gpu.sm.max_thread_blocks,
                                Predictor::SampleRule::kFirstStartedInSlice);
    ASSERT_EQ(alg1.size(), started.size());
    for (std::size_t j = 0; j < alg1.size(); ++j) {
      const auto actual = static_cast<double>(alg1[j].actual);
      g.unaware.push_back(static_cast<double>(alg1[j].slice_unaware) / actual);
      g.aware.push_back(static_cast<double>(alg1[j].slice_aware) / actual);
      g.aware_started.push_back(static_cast<double>(started[j].slice_aware) / actual);
      g.kernels.push_back(results[i].kernels[index(alg1[j].kernel)].name);
    }
    if (fixed_records != nullptr) fixed_records->push_back(alg1);
  }
}

TEST(Validation, SimpleSlicingPredictorAccuracyLikePaiFig11) {
  const test::Ercbench e = test::load_ercbench();
  const std::uint32_t n_sm = e.gpu.num_sms;

  // single-fixed: exact staircase arithmetic, checked SM by SM.
  Group fixed{"single-fixed", {}, {}, {}, {}};
  std::vector<SimulationSpec> specs;
  for (const auto& k : e.kernels) specs.push_back(test::pai_alone(e.gpu, k, TbDurationMode::kFixed));
  std::vector<std::vector<Predictor::Record>> fixed_records;
  collect(specs, e.gpu, fixed, &fixed_records);
  ASSERT_EQ(fixed_records.size(), e.kernels.size());
  for (std::size_t i = 0; i < e.kernels.size(); ++i) {
    const KernelDesc& k = *e.kernels[i];
    const auto r = static_cast<std::uint64_t>(k.reference.at("residency"));
    const TimePs t = k.tb_time.mean_ps;
    const std::uint64_t total = (k.thread_blocks + n_sm - 1) / n_sm;
    ASSERT_EQ(fixed_records[i].size(), n_sm) << k.name;
    for (const auto& rec : fixed_records[i]) {
      // At the first block end Active_Kernel_Cycles = t, Done_Blocks = 1, Resident_Blocks = R.
      EXPECT_EQ(rec.slice_unaware, t + (total - 1) * t / r) << k.name << " SM " << index(rec.sm);
      // The SM ran whole waves of R blocks, the last one possibly partial: ceil(n / R) * t.
      EXPECT_EQ(rec.actual % t, 0U) << k.name << " SM " << index(rec.sm);
      EXPECT_EQ(rec.slices, 1U);
    }
  }

  // single-profile ("single-sim"): lognormal block times, seeds 1-3.
  Group profile{"single-profile", {}, {}, {}, {}};
  specs.clear();
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    for (const auto& k : e.kernels) {
      specs.push_back(test::pai_alone(e.gpu, k, TbDurationMode::kProfile));
      specs.back().seed = seed;
    }
  }
  collect(specs, e.gpu, profile);

  // mpmax: every ordered pair of different kernels, lognormal block times.
  Group mpmax{"mpmax", {}, {}, {}, {}};
  specs.clear();
  for (const auto& a : e.kernels) {
    for (const auto& b : e.kernels) {
      if (a != b) specs.push_back(test::pai_pair(e.gpu, a, b, 100000, "mpmax", TbDurationMode::kProfile));
    }
  }
  ASSERT_EQ(specs.size(), 56U);
  collect(specs, e.gpu, mpmax);

  std::printf(
      "Predicted / actual runtime per kernel per SM (Pai Fig. 11); last column: share within 0.5x-2x\n");
  std::printf(
      "| group | prediction | n | min | 25%% | median | 75%% | max | 0.5x-2x "
      "|\n|---|---|---|---|---|---|---|---|---|\n");
  for (const Group* g : {&fixed, &profile, &mpmax}) {
    print_row(g->name, "slice-unaware", g->unaware);
    print_row(g->name, "slice-aware (Alg. 1)", g->aware);
    print_row(g->name, "slice-aware (started in slice)", g->aware_started);
  }

  std::printf("\nsingle-profile by kernel (%%RSD of t; the first of R blocks to end sets t)\n");
  std::printf("| kernel | R | %%RSD | n | min | median | max |\n|---|---|---|---|---|---|---|\n");
  for (const auto& k : e.kernels) {
    std::vector<double> v;
    for (std::size_t i = 0; i < profile.unaware.size(); ++i) {
      if (profile.kernels[i] == k->name) v.push_back(profile.unaware[i]);
    }
    std::printf("| %s | %.0f | %.1f | %zu | %.2f | %.2f | %.2f |\n", k->name.c_str(),
                k->reference.at("residency"), k->tb_time.rsd_percent, v.size(), quantile(v, 0),
                quantile(v, 0.5), quantile(v, 1));
  }

  // Bounds. single-fixed: Eq. 2 from the first block overestimates a staircase by at most one wave
  // (the prediction is linear, the staircase rounds up): t + (T-1) t / R against ceil(n / R) t with n
  // near T = ceil(B / N_SM). Every ratio lies in [0.9, 1.4] (JPEG: 5.25 t over 4 or 5 waves).
  EXPECT_GE(quantile(fixed.unaware, 0), 0.9);
  EXPECT_LE(quantile(fixed.unaware, 1), 1.4);
  // single-profile: t is the first of R blocks started together to end, i.e. the shortest of R
  // lognormal draws, so Eq. 2 underestimates by about the spread of t (%RSD 3-13% for five kernels,
  // 30-66% for the JPEG kernels and render). Pai reports single-sim as "within 2x for the majority".
  // Required: median in [0.75, 1.1], at least 85% of the predictions within 0.5x-2x.
  EXPECT_GE(quantile(profile.aware, 0.5), 0.75);
  EXPECT_LE(quantile(profile.aware, 0.5), 1.1);
  EXPECT_GE(within(profile.aware, 0.5, 2.0), 0.85);
  // mpmax: kernels go through two or three slices (alone, sharing, alone again) and their residency
  // changes with each; the slice-aware prediction follows it (Pai: "the simple slicing predictor
  // corrects the underestimates made by the slice-unaware predictor, and the majority of its
  // predictions are between 0.5x and 2x"). Required: median within 15%, at least 85% within
  // 0.5x-2x, and more of them there than slice-unaware, with a narrower interquartile range.
  EXPECT_NEAR(quantile(mpmax.aware, 0.5), 1.0, 0.15);
  EXPECT_GE(within(mpmax.aware, 0.5, 2.0), 0.85);
  EXPECT_GT(within(mpmax.aware, 0.5, 2.0), within(mpmax.unaware, 0.5, 2.0));
  EXPECT_LT(quantile(mpmax.aware, 0.75) - quantile(mpmax.aware, 0.25),
            quantile(mpmax.unaware, 0.75) - quantile(mpmax.unaware, 0.25));
}

}  // namespace
}  // namespace gpumux
