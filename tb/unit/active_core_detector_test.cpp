// ONAC and Seq-Det (Awatramani 4.4.2, engine/active_cores/): the estimates each takes on IPC curves shaped
// like the thesis's worked examples (Figs. 4.11-4.12), driven sample by sample.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "engine/active_cores/onac.h"
#include "engine/active_cores/seq_det.h"

namespace gpumux {
namespace {

using Curve = std::function<double(std::uint32_t)>;

/// Runs `detector` on a GPU of `cores` cores whose kernel has IPC curve(n) at n active cores; returns
/// the counts it sampled, in order, and the detected count.
std::pair<std::vector<std::uint32_t>, std::uint32_t> drive(ActiveCoreDetector& detector, std::uint32_t cores,
                                                           const Curve& curve) {
  std::vector<std::uint32_t> sampled;
  ActiveCoreDecision d = detector.start(cores);
  while (!d.detected) {
    sampled.push_back(d.active_cores);
    if (sampled.size() > 2 * cores + 2) throw std::runtime_error("no convergence");
    d = detector.on_sample(curve(d.active_cores));
  }
  return {sampled, d.active_cores};
}

// Backprop (Fig. 4.12): IPC linear to 9 cores, then saturating; IPC_all 9.0, threshold 8.82 (2%).
double backprop(std::uint32_t n) {
  static const std::vector<double> tail = {8.2, 8.55, 8.75, 8.9};  // n = 9, 10, 11, 12
  if (n == 1) return 1.0;
  if (n < 9) return 0.95 * n;
  if (n <= 12) return tail[n - 9];
  return 8.9 + (9.0 - 8.9) * (n - 12) / 20.0;
}

TEST(Onac, BackpropConvergesAtTheFourthEstimate) {
  OnacDetector onac;
  const auto [sampled, detected] = drive(onac, 32, backprop);
  // Init: all, then one; estimates 9 (the origin line: 8.82 / 1.0), 10, 11, 12 (4.4.2.2: "converges at
  // the fourth estimate for Backprop, and correctly detects the optimal core count as 12 cores").
  EXPECT_EQ(sampled, (std::vector<std::uint32_t>{32, 1, 9, 10, 11, 12}));
  EXPECT_EQ(detected, 12U);
  ASSERT_EQ(onac.samples().size(), 6U);
  EXPECT_EQ(onac.samples()[3].active_cores, 10U);
  EXPECT_DOUBLE_EQ(onac.samples()[3].ipc, 8.55);
}

TEST(Onac, PathfinderNeedsEveryCoreAtTheSecondEstimate) {
  // Linear scaling (Fig. 4.11): IPC_1 slightly above the mean slope puts the first estimate at 31.
  const auto pathfinder = [](std::uint32_t n) { return n == 1 ? 1.02 : static_cast<double>(n); };
  OnacDetector onac;
  const auto [sampled, detected] = drive(onac, 32, pathfinder);
  EXPECT_EQ(sampled, (std::vector<std::uint32_t>{32, 1, 31, 32}));
  EXPECT_EQ(detected, 32U);
}

TEST(Onac, EdgeCases) {
  {  // one core already meets the threshold
    OnacDetector onac;
    const auto [sampled, detected] = drive(onac, 16, [](std::uint32_t) { return 4.0; });
    EXPECT_EQ(sampled, (std::vector<std::uint32_t>{16, 1}));
    EXPECT_EQ(detected, 1U);
  }
  {  // a one-core GPU
    OnacDetector onac;
    EXPECT_EQ(drive(onac, 1, [](std::uint32_t) { return 1.0; }).second, 1U);
  }
  {  // a flat (noisy) stretch: one core more per sample instead of a line that never meets the threshold
    const auto flat = [](std::uint32_t n) { return n < 6 ? 3.0 : 4.0; };
    OnacDetector onac;
    const auto [sampled, detected] = drive(onac, 8, flat);
    EXPECT_EQ(sampled, (std::vector<std::uint32_t>{8, 1, 2, 3, 4, 5, 6}));  // 3.92 / 3.0 -> 2, then flat
    EXPECT_EQ(detected, 6U);
  }
  {  // a zero IPC with one core: the estimate is every core
    OnacDetector onac;
    const auto [sampled, detected] = drive(onac, 8, [](std::uint32_t n) { return n == 1 ? 0.0 : 2.0; });
    EXPECT_EQ(sampled, (std::vector<std::uint32_t>{8, 1, 8}));
    EXPECT_EQ(detected, 8U);
  }
  OnacDetector onac;
  EXPECT_THROW((void)onac.on_sample(1.0), std::logic_error);  // not started
  EXPECT_THROW((void)onac.start(0), std::invalid_argument);
  (void)onac.start(4);
  EXPECT_THROW((void)onac.on_sample(-1.0), std::logic_error);
  EXPECT_THROW(OnacDetector(1.0), std::invalid_argument);
}

TEST(SeqDet, StepsDownOneCoreAtATimeAndStepsBack) {
  SeqDetDetector seq;
  const auto [sampled, detected] = drive(seq, 32, backprop);
  // From 32 down while within 2% of IPC_all (8.82): 13 (8.905) meets it, 12 (8.9) too, 11 (8.75) does not.
  std::vector<std::uint32_t> expected;
  for (std::uint32_t n = 32; n >= 11; --n) expected.push_back(n);
  EXPECT_EQ(sampled, expected);
  EXPECT_EQ(detected, 12U);
}

TEST(SeqDet, AKernelThatNeedsEveryCoreTakesOneSampleBelowIt) {
  SeqDetDetector seq;
  const auto [sampled, detected] = drive(seq, 32, [](std::uint32_t n) { return static_cast<double>(n); });
  EXPECT_EQ(sampled, (std::vector<std::uint32_t>{32, 31}));  // 4.4.3.4: one sample at 31, back to 32
  EXPECT_EQ(detected, 32U);
  SeqDetDetector flat;
  EXPECT_EQ(drive(flat, 4, [](std::uint32_t) { return 2.0; }).second, 1U);
}

TEST(ActiveCores, OnacSamplesFewerCountsThanSeqDetForALowOptimum) {
  // 4.4.4: ONAC's detection is shorter for kernels with few optimal cores (the thesis: 45% on average).
  const auto transpose = [](std::uint32_t n) { return n >= 8 ? 8.0 : static_cast<double>(n); };
  OnacDetector onac;
  SeqDetDetector seq;
  const auto a = drive(onac, 32, transpose);
  const auto b = drive(seq, 32, transpose);
  EXPECT_EQ(a.second, 8U);
  EXPECT_EQ(b.second, 8U);
  EXPECT_EQ(a.first.size(), 3U);   // 32, 1, 8
  EXPECT_EQ(b.first.size(), 26U);  // 32 .. 7
}

}  // namespace
}  // namespace gpumux
