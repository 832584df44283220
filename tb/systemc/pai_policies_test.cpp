// The Pai et al. policies end to end on the Fermi config with ERCBench kernels (Pai 5-6): which
// kernel finishes when, who shares the SMs, and the metrics of a few two-program workloads.
// Fixed thread-block times (the Table 3 means), so the numbers are exact staircase arithmetic.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "validation/pai_support.h"

namespace gpumux {
namespace {

const std::vector<std::string> kPolicies = {"fifo",        "mpmax", "srtf", "srtf-adaptive",
                                            "srtf-oracle", "sjf",   "ljf"};
constexpr TimePs kArrival = 100000;  // the second kernel 100 ns (70 cycles) after the first (Pai 6.1.3)

struct PairRuns {
  std::map<std::string, RunResult> by_policy;
  std::map<std::string, MultiprogramMetrics> metrics;
};

PairRuns run_pair(const test::Ercbench& e, const std::string& first, const std::string& second) {
  std::vector<SimulationSpec> specs;
  for (const auto& p : kPolicies) {
    specs.push_back(test::pai_pair(e.gpu, e.by_benchmark(first), e.by_benchmark(second), kArrival, p));
  }
  specs.push_back(test::pai_alone(e.gpu, e.by_benchmark(first)));
  specs.push_back(test::pai_alone(e.gpu, e.by_benchmark(second)));
  const std::vector<RunResult> r = simulate_all(specs, 2);
  PairRuns out;
  for (std::size_t i = 0; i < kPolicies.size(); ++i) {
    out.by_policy[kPolicies[i]] = r[i];
    out.metrics[kPolicies[i]] = test::pair_metrics(r[i], r[kPolicies.size()], r[kPolicies.size() + 1]);
  }
  std::printf("%s + %s (second arrives after 100 ns)\n", first.c_str(), second.c_str());
  std::printf("| policy | NTT %s | NTT %s | STP | ANTT | StrictF |\n|---|---|---|---|---|---|\n",
              first.c_str(), second.c_str());
  for (const auto& p : kPolicies) {
    const MultiprogramMetrics& m = out.metrics[p];
    std::printf("| %s | %.2f | %.2f | %.3f | %.3f | %.3f |\n", p.c_str(), m.ntt[0], m.ntt[1], m.stp, m.antt,
                m.fairness);
  }
  return out;
}

TEST(PaiPolicies, ShortKernelArrivingSecondFinishesMuchEarlierUnderSjfAndSrtf) {
  const test::Ercbench e = test::load_ercbench();
  // Pai 6.2.2's example: JPEG-d (25k cycles alone) arrives just after RayTracing (417k cycles).
  const PairRuns runs = run_pair(e, "RayTracing", "JPEG-d");
  const auto jpeg_end = [&](const std::string& p) { return runs.by_policy.at(p).kernels.at(1).end_ps; };
  const double fifo_ntt = runs.metrics.at("fifo").ntt[1];
  EXPECT_GT(fifo_ntt, 10.0);  // Pai: 17.76x under FIFO; JPEG-d waits for all of render's blocks
  for (const char* p : {"sjf", "srtf-oracle", "srtf", "srtf-adaptive", "mpmax"}) {
    EXPECT_LT(jpeg_end(p) * 4, jpeg_end("fifo")) << p;
    EXPECT_LT(runs.metrics.at(p).ntt[1], 3.0) << p;  // sampling + hand-off delays of about one render block
    EXPECT_GT(runs.metrics.at(p).stp, runs.metrics.at("fifo").stp) << p;
    EXPECT_LT(runs.metrics.at(p).antt, runs.metrics.at("fifo").antt) << p;
  }
  // The oracles skip the sampling delay: at least as good as srtf.
  EXPECT_LE(jpeg_end("sjf"), jpeg_end("srtf"));
  EXPECT_LE(jpeg_end("srtf-oracle"), jpeg_end("srtf"));
  // ljf runs the longer render first, as fifo does here.
  EXPECT_EQ(jpeg_end("ljf"), jpeg_end("fifo"));
  // SRTF's fairness check finds SRTF fair here (JPEG-d is over 10x shorter): no sharing.
  EXPECT_EQ(jpeg_end("srtf-adaptive"), jpeg_end("srtf"));
  // The long kernel pays little: under 10% over its time alone.
  for (const char* p : {"sjf", "srtf", "mpmax"}) EXPECT_LT(runs.metrics.at(p).ntt[0], 1.1) << p;
}

TEST(PaiPolicies, MpmaxKeepsBothKernelsResidentOnEverySm) {
  const test::Ercbench e = test::load_ercbench();
  const auto run = [&](const std::string& policy, RunResult& r) {
    const std::string timeline = test::temp_path(policy + "-timeline");
    SimulationSpec spec =
        test::pai_pair(e.gpu, e.by_benchmark("RayTracing"), e.by_benchmark("JPEG-d"), kArrival, policy);
    spec.timeline_path = timeline;
    r = simulate(spec);
    std::vector<test::TbSlice> tbs = test::read_tb_slices(timeline);
    std::filesystem::remove(timeline);
    return tbs;
  };
  RunResult mpmax;
  const std::vector<test::TbSlice> tbs = run("mpmax", mpmax);
  ASSERT_EQ(mpmax.kernels.size(), 2U);
  // Halfway through JPEG-d, every SM runs both kernels; render keeps to its limit of 4 (one JPEG-d
  // block's registers set aside: (32768 - 1536) / 6400).
  const TimePs mid = (mpmax.kernels[1].start_ps + mpmax.kernels[1].end_ps) / 2;
  for (std::uint32_t sm = 0; sm < e.gpu.num_sms; ++sm) {
    EXPECT_GE(test::resident_at(tbs, sm, 0, mid), 1U) << "SM " << sm;
    EXPECT_LE(test::resident_at(tbs, sm, 0, mid), 4U) << "SM " << sm;
    EXPECT_GE(test::resident_at(tbs, sm, 1, mid), 1U) << "SM " << sm;
  }
  // Under srtf, halfway through JPEG-d the SMs have handed over: no render block is left on them.
  RunResult srtf;
  const std::vector<test::TbSlice> stbs = run("srtf", srtf);
  const TimePs smid = (srtf.kernels[1].start_ps + srtf.kernels[1].end_ps) / 2;
  for (std::uint32_t sm = 0; sm < e.gpu.num_sms; ++sm) {
    EXPECT_EQ(test::resident_at(stbs, sm, 0, smid), 0U) << "SM " << sm;
    EXPECT_GE(test::resident_at(stbs, sm, 1, smid), 1U) << "SM " << sm;
  }
}

TEST(PaiPolicies, SrtfAdaptiveSwitchesToSharingWhenSrtfIsUnfair) {
  const test::Ercbench e = test::load_ercbench();
  // AES-e and AES-d take about as long: SRTF would nearly double the second one's time (unfairness
  // ~0.97 > 0.5). SRTF/Adaptive shares: AES-e is limited to 3 blocks per SM, AES-d gets the rest.
  const PairRuns runs = run_pair(e, "AES-e", "AES-d");
  EXPECT_GT(runs.metrics.at("srtf-adaptive").fairness, runs.metrics.at("srtf").fairness + 0.2);
  EXPECT_GT(runs.metrics.at("srtf-adaptive").fairness, 0.75);
  EXPECT_LT(runs.metrics.at("srtf").fairness, 0.6);

  const std::string timeline = test::temp_path("adaptive-timeline");
  SimulationSpec spec =
      test::pai_pair(e.gpu, e.by_benchmark("AES-e"), e.by_benchmark("AES-d"), kArrival, "srtf-adaptive");
  spec.timeline_path = timeline;
  const RunResult r = simulate(spec);
  const std::vector<test::TbSlice> tbs = test::read_tb_slices(timeline);
  std::filesystem::remove(timeline);
  // A third of the way in, both kernels share every SM, one of them held to 3 blocks.
  const TimePs t = r.end_ps / 3;
  for (std::uint32_t sm = 0; sm < e.gpu.num_sms; ++sm) {
    const std::uint32_t a = test::resident_at(tbs, sm, 0, t);
    const std::uint32_t b = test::resident_at(tbs, sm, 1, t);
    EXPECT_GE(a, 1U) << "SM " << sm;
    EXPECT_GE(b, 1U) << "SM " << sm;
    EXPECT_LE(std::min(a, b), 3U) << "SM " << sm;
  }
}

TEST(PaiPolicies, LongKernelArrivingSecondWaitsUnderSjfAndSrtf) {
  const test::Ercbench e = test::load_ercbench();
  const PairRuns runs = run_pair(e, "JPEG-d", "RayTracing");
  // JPEG-d first and shortest: every runtime-aware policy keeps it; FIFO does the same here.
  for (const char* p : {"sjf", "srtf", "srtf-oracle", "fifo"}) {
    EXPECT_LT(runs.metrics.at(p).ntt[0], 1.3) << p;
    EXPECT_GT(runs.metrics.at(p).stp, 1.7) << p;
  }
  // ljf hands the GPU to the long kernel: JPEG-d waits.
  EXPECT_GT(runs.metrics.at("ljf").ntt[0], 5.0);
}

}  // namespace
}  // namespace gpumux
