// The TB-level duration draw (sm/tb/tb_duration.h): keyed by (seed, process, launch, thread block), so
// a thread block's time does not depend on the order or the SM it is issued to, and distributed as the
// kernel profile says (lognormal with the profile's mean and relative standard deviation).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "sm/tb/tb_duration.h"

namespace gpumux {
namespace {

TEST(TbDuration, SameKeySameTimeWhateverTheOrder) {
  const TbTimeProfile profile{1'000'000, 40.0};
  TbDurationModel a(TbDurationMode::kProfile, 7);
  TbDurationModel b(TbDurationMode::kProfile, 7);
  // b draws the same keys in reverse order, with other kernels' draws in between.
  std::vector<TimePs> forward;
  for (std::uint32_t tb = 0; tb < 100; ++tb) forward.push_back(a.draw(profile, ProcessId{1}, 3, tb));
  const TbTimeProfile other{5'000, 10.0};
  for (std::uint32_t tb = 100; tb-- > 0;) {
    (void)b.draw(other, ProcessId{2}, 0, tb);
    EXPECT_EQ(b.draw(profile, ProcessId{1}, 3, tb), forward[tb]) << "thread block " << tb;
  }
  // Another process, launch, thread block or seed gives another time.
  EXPECT_NE(a.draw(profile, ProcessId{0}, 3, 0), forward[0]);
  EXPECT_NE(a.draw(profile, ProcessId{1}, 4, 0), forward[0]);
  EXPECT_NE(a.draw(profile, ProcessId{1}, 3, 1), forward[0]);
  TbDurationModel c(TbDurationMode::kProfile, 8);
  EXPECT_NE(c.draw(profile, ProcessId{1}, 3, 0), forward[0]);
}

TEST(TbDuration, DrawIsTheKeyedGeneratorsLognormal) {
  // The draw, spelled out: the keyed normal of stream splitmix64(splitmix64(process << 32 ^ launch) ^ tb)
  // of the run seed, exp(mu + sigma z) rounded to ps. Launches alternate, so
  // the model's per-launch cache is refilled between draws.
  const TbTimeProfile profile{3'000'000, 25.0};
  const std::uint64_t seed = 42;
  TbDurationModel model(TbDurationMode::kProfile, seed);
  const double sigma2 = std::log1p(0.25 * 0.25);
  const double mu = std::log(3'000'000.0) - 0.5 * sigma2;
  for (std::uint32_t tb = 0; tb < 500; ++tb) {
    for (std::uint32_t p = 0; p < 3; ++p) {
      const std::uint32_t launch = (tb + p) % 4;
      std::uint64_t key = (static_cast<std::uint64_t>(p) << 32U) ^ launch;
      key = splitmix64(key) ^ tb;
      const double z = keyed_normal(seed, splitmix64(key));
      const auto expected = static_cast<TimePs>(std::llround(std::exp(mu + std::sqrt(sigma2) * z)));
      ASSERT_EQ(model.draw(profile, ProcessId{p}, launch, tb), expected) << "process " << p << " tb " << tb;
    }
  }
}

TEST(TbDuration, KeyedDrawsHaveTheProfilesMeanAndSpread) {
  // 200 000 draws over processes, launches and thread blocks: the sample mean and coefficient of
  // variation must match the profile (standard error of the mean 0.4 * mean / sqrt(2e5) = 0.09%).
  const TbTimeProfile profile{2'000'000, 40.0};
  TbDurationModel model(TbDurationMode::kProfile, 1);
  double sum = 0;
  double sum2 = 0;
  std::uint64_t n = 0;
  for (std::uint32_t p = 0; p < 4; ++p) {
    for (std::uint32_t launch = 0; launch < 50; ++launch) {
      for (std::uint32_t tb = 0; tb < 1000; ++tb) {
        const auto t = static_cast<double>(model.draw(profile, ProcessId{p}, launch, tb));
        sum += t;
        sum2 += t * t;
        ++n;
      }
    }
  }
  const double mean = sum / static_cast<double>(n);
  const double cv = std::sqrt(sum2 / static_cast<double>(n) - mean * mean) / mean;
  EXPECT_NEAR(mean / 2'000'000.0, 1.0, 0.005);
  EXPECT_NEAR(cv, 0.40, 0.01);
}

TEST(TbDuration, FixedModeAndResumedThreadBlocks) {
  TbDurationModel fixed(TbDurationMode::kFixed, 1);
  KernelDesc k;
  k.name = "k";
  k.tb_time = {123'456, 50.0};
  TbLaunch launch;
  launch.desc = &k;
  launch.tb = 9;
  EXPECT_EQ(fixed.duration_of(launch), 123'456U);
  launch.resumed = true;
  launch.resume.remaining_ps = 777;
  EXPECT_EQ(fixed.duration_of(launch), 777U);  // a preempted TB runs what it had left
}

}  // namespace
}  // namespace gpumux
