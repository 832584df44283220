// LeakyBucketReference, the cycle-level model of leaky-bucket interleaving (Liang 4.1): grant rule,
// tie-break, carry, saturation, configuration, and the window property over random shares. Plain C++.

#include "policy/leaky_bucket_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/rng.h"

namespace gpumux {
namespace {

using Ref = LeakyBucketReference;

Ref make(std::uint32_t kernels, std::uint32_t bits = 24) { return Ref(Ref::Config{kernels, bits}); }

/// Configures rate = share, capacity = sum of shares, then returns `grants` grants in order.
std::vector<std::uint32_t> interleave(const std::vector<std::uint32_t>& shares, std::size_t grants) {
  Ref ref = make(static_cast<std::uint32_t>(shares.size()));
  std::uint32_t sum = 0;
  for (std::uint32_t s : shares) sum += s;
  for (std::uint32_t k = 0; k < shares.size(); ++k) {
    ref.step(Ref::Inputs::configure(k, true, sum, shares[k], true));
  }
  std::vector<std::uint32_t> order;
  for (std::size_t c = 0; order.size() < grants && c < 100 * grants; ++c) {
    const Ref::Outputs out = ref.step(Ref::Inputs::tick());
    if (out.grant_valid) order.push_back(out.grant_kernel);
  }
  return order;
}

/// Largest |count_k - w s_k / S| over every window of up to `max_window` consecutive grants.
double worst_window_deviation(const std::vector<std::uint32_t>& order,
                              const std::vector<std::uint32_t>& shares, std::size_t max_window) {
  double sum = 0;
  for (std::uint32_t s : shares) sum += s;
  double worst = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    std::vector<int> count(shares.size(), 0);
    for (std::size_t w = 1; w <= max_window && i + w <= order.size(); ++w) {
      ++count[order[i + w - 1]];
      for (std::size_t k = 0; k < shares.size(); ++k) {
        worst = std::max(worst, std::abs(count[k] - static_cast<double>(w) * shares[k] / sum));
      }
    }
  }
  return worst;
}

TEST(LeakyBucketReference, RejectsBadConfigurations) {
  EXPECT_THROW(make(0), std::invalid_argument);
  EXPECT_THROW(make(4, 1), std::invalid_argument);
  EXPECT_THROW(make(4, 33), std::invalid_argument);
  Ref ref = make(2, 8);
  EXPECT_THROW(ref.step(Ref::Inputs::configure(2, true, 1, 1, true)), std::invalid_argument);
  EXPECT_THROW(ref.step(Ref::Inputs::configure(0, true, 256, 1, true)), std::invalid_argument);
}

TEST(LeakyBucketReference, FullBucketWithTheLargestExcessWinsTiesToTheLowestIndex) {
  Ref ref = make(3);
  ref.step(Ref::Inputs::configure(0, true, 4, 2, true));
  ref.step(Ref::Inputs::configure(1, true, 4, 2, true));
  ref.step(Ref::Inputs::configure(2, true, 4, 3, true));
  Ref::Outputs out = ref.step(Ref::Inputs::tick());  // levels 2, 2, 3: none full
  EXPECT_FALSE(out.grant_valid);
  out = ref.step(Ref::Inputs::tick());  // 4, 4, 6: kernel 2 has excess 2
  ASSERT_TRUE(out.grant_valid);
  EXPECT_EQ(out.grant_kernel, 2U);
  EXPECT_EQ(ref.bucket(2).level, 2U);   // emptied by one capacity, the excess carries
  out = ref.step(Ref::Inputs::tick());  // 6, 6, 5: tie of 0 and 1 at excess 2
  ASSERT_TRUE(out.grant_valid);
  EXPECT_EQ(out.grant_kernel, 0U);
  EXPECT_EQ(ref.bucket(1).level, 6U);  // still full, waits
}

TEST(LeakyBucketReference, LevelsSaturateAndConfigurationKeepsOrClearsTheFill) {
  Ref ref = make(1, 4);  // levels 0..15
  ref.step(Ref::Inputs::configure(0, true, 15, 9, true));
  ref.step(Ref::Inputs::tick());                                  // 9
  EXPECT_TRUE(ref.step(Ref::Inputs::tick()).grant_valid);         // 15 (saturated), granted: 0
  ref.step(Ref::Inputs::tick());                                  // 9
  ref.step(Ref::Inputs::configure(0, true, 15, 1, false, true));  // configured: no fill, level kept
  EXPECT_EQ(ref.bucket(0).level, 9U);
  ref.step(Ref::Inputs::configure(0, true, 15, 1, true));
  EXPECT_EQ(ref.bucket(0).level, 0U);
  ref.step(Ref::Inputs::configure(0, false, 15, 1, false));
  EXPECT_FALSE(ref.step(Ref::Inputs::tick()).grant_valid);
}

TEST(LeakyBucketReference, TwoKernelsStayWithinOneThreadBlockOfTheirShareInEveryWindow) {
  // Liang 4.1: "any interval of successive allocations (after a startup period) will not vary from
  // the desired allocation proportion by more than a single SM". Exact for two kernels.
  Rng rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<std::uint32_t> shares = {1 + static_cast<std::uint32_t>(rng.below(20)),
                                               1 + static_cast<std::uint32_t>(rng.below(20))};
    const auto order = interleave(shares, 400);
    ASSERT_EQ(order.size(), 400U);
    EXPECT_LE(worst_window_deviation(order, shares, 64), 1.0) << shares[0] << ":" << shares[1];
  }
}

TEST(LeakyBucketReference, MoreKernelsStayWithinTwoThreadBlocksOfTheirShare) {
  // With three or more kernels, simultaneous full buckets delay one another; the largest-excess rule
  // keeps every window within two thread blocks (Tijdeman's bound for any such sequence is below 2).
  Rng rng(11);
  double worst = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::uint32_t> shares(2 + rng.below(4));
    for (auto& s : shares) s = 1 + static_cast<std::uint32_t>(rng.below(9));
    const auto order = interleave(shares, 300);
    ASSERT_EQ(order.size(), 300U);
    worst = std::max(worst, worst_window_deviation(order, shares, 48));
  }
  EXPECT_LT(worst, 2.0);
  RecordProperty("worst_window_deviation", std::to_string(worst));
}

}  // namespace
}  // namespace gpumux
