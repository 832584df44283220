// The Simple Slicing predictor (Pai 4, Table 1, Algorithm 1, Eq. 2) on hand-written event sequences:
// staircase cases, slicing on launch / kernel end / residency change, the two sample rules.

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "predict/simple_slicing.h"

namespace gpumux {
namespace {

using Predictor = SimpleSlicingPredictor;
constexpr SmId kSm0{0};
constexpr KernelId kA{0};
constexpr KernelId kB{1};

/// Runs `blocks` blocks of fixed duration t on one SM at residency r as the staircase does (waves
/// of r starting together), checking Pred_Cycles after every block end against `check`.
template <typename Check>
void staircase(Predictor& p, KernelId k, std::uint32_t blocks, std::uint32_t r, TimePs t, TimePs start,
               Check check) {
  std::uint32_t issued = 0;
  TimePs now = start;
  while (issued < blocks) {
    std::vector<std::uint32_t> slots;
    for (std::uint32_t i = 0; i < r && issued < blocks; ++i, ++issued) {
      slots.push_back(p.on_block_start(kSm0, k, now));
    }
    now += t;
    for (std::uint32_t slot : slots) {
      p.on_block_end(kSm0, k, slot, now);
      check(*p.state(kSm0, k), now);
    }
  }
}

TEST(SimpleSlicing, OnLaunchInitialisesTable1State) {
  Predictor p(15, 8);
  p.on_launch(kA, 512, 8, 0);
  const SliceState* s = p.state(SmId{3}, kA);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->total_blocks, 35U);  // ceil(512 / 15)
  EXPECT_EQ(s->resident_blocks, 8U);
  EXPECT_TRUE(s->reslice);
  EXPECT_EQ(s->done_blocks, 0U);
  EXPECT_EQ(s->active_kernel_cycles, 0U);
  EXPECT_EQ(s->block_start.size(), 8U);
  EXPECT_FALSE(s->has_prediction);
  EXPECT_FALSE(p.remaining(SmId{3}, kA).has_value());
}

TEST(SimpleSlicing, Eq2AtTheFirstBlockEndOfAStaircase) {
  // One SM, 40 blocks, R = 8, t = 100: the staircase takes ceil(40 / 8) * 100 = 500.
  Predictor p(1, 8);
  p.on_launch(kA, 40, 8, 0);
  std::vector<TimePs> predictions;
  staircase(p, kA, 40, 8, 100, 0, [&](const SliceState& s, TimePs) { predictions.push_back(s.pred_cycles); });
  ASSERT_EQ(predictions.size(), 40U);
  // First block end: Active = 100, (40 - 1) * 100 / 8 = 487 -> 587 (Eq. 2 is not a step function).
  EXPECT_EQ(predictions[0], 587U);
  // At the end of every full wave the prediction is exact: Active + (40 - 8w) * 100 / 8 = 500.
  for (std::size_t w = 1; w <= 5; ++w) EXPECT_EQ(predictions[8 * w - 1], 500U) << "wave " << w;
  // t was sampled once (one slice), from the first block.
  EXPECT_EQ(p.state(kSm0, kA)->t, 100U);
  EXPECT_EQ(p.state(kSm0, kA)->samples, 1U);
  EXPECT_EQ(p.state(kSm0, kA)->active_kernel_cycles, 500U);
}

TEST(SimpleSlicing, ActiveKernelCyclesCountOnlyTimeWithBlocksOnTheSm) {
  Predictor p(1, 8);
  p.on_launch(kA, 4, 8, 0);
  const auto b0 = p.on_block_start(kSm0, kA, 100);
  p.on_block_end(kSm0, kA, b0, 150);  // 50 active
  const auto b1 = p.on_block_start(kSm0, kA, 400);
  const auto b2 = p.on_block_start(kSm0, kA, 420);
  p.on_block_end(kSm0, kA, b1, 500);  // +100 (400..500)
  p.on_block_end(kSm0, kA, b2, 520);  // +20
  EXPECT_EQ(p.state(kSm0, kA)->active_kernel_cycles, 170U);
}

TEST(SimpleSlicing, ThePredictionFollowsDriftThroughActiveKernelCycles) {
  // Later blocks take twice as long as the sampled one: t is not resampled within the slice, but
  // Active_Kernel_Cycles carries the real elapsed time into every prediction.
  Predictor p(1, 1);
  p.on_launch(kA, 4, 1, 0);
  TimePs now = 0;
  std::vector<TimePs> pred;
  for (TimePs d : {100, 200, 200, 200}) {
    const auto b = p.on_block_start(kSm0, kA, now);
    now += d;
    p.on_block_end(kSm0, kA, b, now);
    pred.push_back(p.state(kSm0, kA)->pred_cycles);
  }
  EXPECT_EQ(pred, (std::vector<TimePs>{400, 500, 600, 700}));
  EXPECT_EQ(p.state(kSm0, kA)->t, 100U);
}

TEST(SimpleSlicing, TotalBlocksClampAtZero) {
  Predictor p(2, 8);
  p.on_launch(kA, 2, 8, 0);  // Total_Blocks = 1 per SM; this SM runs 3
  TimePs now = 0;
  for (int i = 0; i < 3; ++i) {
    const auto b = p.on_block_start(kSm0, kA, now);
    now += 10;
    p.on_block_end(kSm0, kA, b, now);
  }
  EXPECT_EQ(*p.remaining(kSm0, kA), 0U);
  EXPECT_EQ(p.state(kSm0, kA)->pred_cycles, 30U);
}

TEST(SimpleSlicing, AnotherKernelsLaunchAndEndStartNewSlices) {
  Predictor p(1, 8);
  p.on_launch(kA, 100, 4, 0);
  auto a0 = p.on_block_start(kSm0, kA, 0);
  auto a1 = p.on_block_start(kSm0, kA, 0);
  p.on_block_end(kSm0, kA, a0, 100);
  EXPECT_EQ(p.state(kSm0, kA)->t, 100U);
  EXPECT_FALSE(p.state(kSm0, kA)->reslice);
  // Without a new slice, later blocks do not change t.
  p.on_block_end(kSm0, kA, a1, 130);
  EXPECT_EQ(p.state(kSm0, kA)->t, 100U);

  // B's launch is a slice boundary for A (Pai 4): the next A block to end resamples t.
  a0 = p.on_block_start(kSm0, kA, 130);
  p.on_launch(kB, 10, 8, 200);
  EXPECT_TRUE(p.state(kSm0, kA)->reslice);
  EXPECT_EQ(p.state(kSm0, kA)->slices, 2U);
  p.on_block_end(kSm0, kA, a0, 380);
  EXPECT_EQ(p.state(kSm0, kA)->t, 250U);  // Algorithm 1 literally: first block to end (started 130)
  EXPECT_FALSE(p.state(kSm0, kA)->reslice);

  // B's end (ONKERNELEND) is another boundary.
  p.on_kernel_end(kB, 400);
  EXPECT_FALSE(p.knows(kB));
  EXPECT_TRUE(p.state(kSm0, kA)->reslice);
  EXPECT_EQ(p.state(kSm0, kA)->slices, 3U);
  a0 = p.on_block_start(kSm0, kA, 400);
  p.on_block_end(kSm0, kA, a0, 460);
  EXPECT_EQ(p.state(kSm0, kA)->t, 60U);
  EXPECT_EQ(p.state(kSm0, kA)->samples, 3U);
}

TEST(SimpleSlicing, FirstStartedInSliceRuleIgnoresBlocksFromTheOldSlice) {
  Predictor::Options o;
  o.sample = Predictor::SampleRule::kFirstStartedInSlice;
  Predictor p(1, 8, o);
  p.on_launch(kA, 100, 2, 0);
  const auto a0 = p.on_block_start(kSm0, kA, 0);
  p.on_block_end(kSm0, kA, a0, 100);
  const auto a1 = p.on_block_start(kSm0, kA, 100);
  p.reslice(kSm0, kA, 150);  // e.g. a residency limit changed
  const auto a2 = p.on_block_start(kSm0, kA, 160);
  p.on_block_end(kSm0, kA, a1, 200);  // started before the slice: not a sample
  EXPECT_EQ(p.state(kSm0, kA)->t, 100U);
  EXPECT_TRUE(p.state(kSm0, kA)->reslice);
  p.on_block_end(kSm0, kA, a2, 400);
  EXPECT_EQ(p.state(kSm0, kA)->t, 240U);
  EXPECT_FALSE(p.state(kSm0, kA)->reslice);
}

TEST(SimpleSlicing, ObservedResidencyAndResliceWhenItGrows) {
  Predictor p(1, 8);
  p.on_launch(kA, 80, 8, 0);
  // Only 3 blocks fit at first (a co-runner holds the rest of the SM).
  std::vector<std::uint32_t> slots;
  for (int i = 0; i < 3; ++i) slots.push_back(p.on_block_start(kSm0, kA, 0));
  p.on_block_end(kSm0, kA, slots[0], 100);
  EXPECT_EQ(p.state(kSm0, kA)->resident_blocks, 3U);
  EXPECT_EQ(*p.remaining(kSm0, kA), 79U * 100U / 3U);
  // The co-runner leaves: the residency grows past 3, a new slice starts, and the next sample sees 4.
  slots[0] = p.on_block_start(kSm0, kA, 100);
  EXPECT_FALSE(p.state(kSm0, kA)->reslice);  // back to 3
  const auto extra = p.on_block_start(kSm0, kA, 100);
  EXPECT_TRUE(p.state(kSm0, kA)->reslice);  // 4 > 3
  p.on_block_end(kSm0, kA, slots[1], 110);
  EXPECT_EQ(p.state(kSm0, kA)->resident_blocks, 4U);
  EXPECT_EQ(p.state(kSm0, kA)->t, 110U);
  (void)extra;
}

TEST(SimpleSlicing, AtLaunchResidencyRuleKeepsR) {
  Predictor::Options o;
  o.residency = Predictor::ResidencyRule::kAtLaunch;
  Predictor p(1, 8, o);
  p.on_launch(kA, 80, 8, 0);
  const auto b = p.on_block_start(kSm0, kA, 0);
  p.on_block_end(kSm0, kA, b, 100);
  EXPECT_EQ(p.state(kSm0, kA)->resident_blocks, 8U);
}

TEST(SimpleSlicing, CopiedSampleIsAnInitialPredictionUntilTheSmsOwnSample) {
  Predictor p(3, 8);
  p.on_launch(kA, 30, 8, 0);  // 10 per SM
  const auto b = p.on_block_start(SmId{1}, kA, 0);
  p.on_block_end(SmId{1}, kA, b, 100);
  EXPECT_TRUE(p.sampled(kA));
  EXPECT_FALSE(p.remaining(SmId{2}, kA).has_value());
  p.copy_sample(kA, SmId{1}, 100);
  ASSERT_TRUE(p.remaining(SmId{2}, kA).has_value());
  EXPECT_EQ(*p.remaining(SmId{2}, kA), 10U * 100U / 1U);  // Resident_Blocks observed on SM 1: 1
  EXPECT_FALSE(p.state(SmId{2}, kA)->own_sample);
  EXPECT_TRUE(p.state(SmId{2}, kA)->reslice);
  const auto c = p.on_block_start(SmId{2}, kA, 100);
  p.on_block_end(SmId{2}, kA, c, 150);
  EXPECT_EQ(p.state(SmId{2}, kA)->t, 50U);
  EXPECT_TRUE(p.state(SmId{2}, kA)->own_sample);
}

TEST(SimpleSlicing, SummaryAveragesTheSmsWithAPrediction) {
  Predictor p(3, 8);
  p.on_launch(kA, 30, 8, 0);  // Total_Blocks 10 per SM
  EXPECT_FALSE(p.summary(kA).has_value());
  const auto b0 = p.on_block_start(SmId{0}, kA, 0);
  const auto b1 = p.on_block_start(SmId{1}, kA, 0);
  p.on_block_end(SmId{0}, kA, b0, 100);
  ASSERT_TRUE(p.summary(kA).has_value());
  EXPECT_EQ(p.summary(kA)->predicted_sms, 1U);
  EXPECT_DOUBLE_EQ(p.summary(kA)->blocks_left, 9.0);
  p.on_block_end(SmId{1}, kA, b1, 300);
  EXPECT_EQ(p.summary(kA)->predicted_sms, 2U);
  EXPECT_DOUBLE_EQ(p.summary(kA)->t, 200.0);  // (100 + 300) / 2
  p.copy_sample(kA, SmId{0}, 300);            // SM 2 gets t = 100, 10 blocks left
  EXPECT_EQ(p.summary(kA)->predicted_sms, 3U);
  EXPECT_DOUBLE_EQ(p.summary(kA)->blocks_left, (9.0 + 9.0 + 10.0) / 3.0);
  EXPECT_DOUBLE_EQ(p.summary(kA)->t, 500.0 / 3.0);
}

TEST(SimpleSlicing, RecordsSliceAwareAndUnawarePredictions) {
  Predictor::Options o;
  o.record = true;
  Predictor p(1, 8, o);
  p.on_launch(kA, 16, 8, 0);
  // First slice: t = 100 at residency 8 -> unaware prediction 100 + 15 * 100 / 8 = 287.
  staircase(p, kA, 8, 8, 100, 0, [](const SliceState&, TimePs) {});
  // A co-runner arrives; the blocks now take 300 (second slice).
  p.on_launch(kB, 1, 8, 100);
  staircase(p, kA, 8, 8, 300, 100, [](const SliceState&, TimePs) {});
  p.on_kernel_end(kA, 400);
  ASSERT_EQ(p.records().size(), 1U);
  const auto& r = p.records()[0];
  EXPECT_EQ(r.slice_unaware, 287U);
  EXPECT_EQ(r.slice_aware, 400U + 7U * 300U / 8U);  // sampled at the first block end of slice 2
  EXPECT_EQ(r.actual, 400U);
  EXPECT_EQ(r.slices, 2U);
  EXPECT_EQ(r.samples, 2U);
}

TEST(SimpleSlicing, MisuseIsReported) {
  Predictor p(1, 2);
  EXPECT_THROW(p.on_block_start(kSm0, kA, 0), std::logic_error);
  p.on_launch(kA, 4, 2, 0);
  EXPECT_THROW(p.on_block_end(kSm0, kA, 1, 10), std::logic_error);
  // More blocks than slots (residency above the SM's TB limit) still works.
  for (int i = 0; i < 3; ++i) (void)p.on_block_start(kSm0, kA, 0);
  EXPECT_EQ(p.state(kSm0, kA)->running, 3U);
}

}  // namespace
}  // namespace gpumux
