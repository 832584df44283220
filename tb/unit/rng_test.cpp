// The keyed standard normal (core/rng.h) behind every lognormal thread-block time: its stream is fixed
// (a change of Boost's algorithm or of the key's mixing would change every result silently), and it is
// a standard normal in the body and in both tails (the ziggurat's fast path, its wedges and its tail).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/rng.h"

namespace gpumux {
namespace {

TEST(KeyedNormal, StreamIsPinned) {
  struct Pinned {
    std::uint64_t seed;
    std::uint64_t stream;
    double value;
  };
  // Values of Boost 1.74's ziggurat over KeyedBits (docs/performance.md); the last two are tail draws.
  const Pinned pinned[] = {
      {1ULL, 0ULL, 0x1.3cd490cf779b2p-1},     {1ULL, 1ULL, 0x1.df25a766c8247p-2},
      {42ULL, 7ULL, -0x1.031984786141dp+0},   {18446744073709551615ULL, 123456789ULL, 0x1.2f04192306fd4p+0},
      {2014ULL, 99ULL, 0x1.1269d0bded181p-1}, {5ULL, 1126ULL, 0x1.1c8c6ed829b7ap+2},
      {5ULL, 2197ULL, 0x1.df5a30c02b143p+1},
  };
  for (const Pinned& p : pinned) {
    EXPECT_EQ(keyed_normal(p.seed, p.stream), p.value) << "seed " << p.seed << " stream " << p.stream;
  }
  // 100 000 draws folded into one word: about 1 200 of them take the ziggurat's slower paths.
  std::uint64_t fold = 0;
  for (std::uint64_t stream = 0; stream < 100'000; ++stream) {
    const double z = keyed_normal(3, stream);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &z, sizeof bits);
    std::uint64_t state = fold ^ bits;
    fold = splitmix64(state);
  }
  EXPECT_EQ(fold, 0x81ca6ddfc33c8152ULL);
}

TEST(KeyedNormal, IsAStandardNormalInTheBodyAndBothTails) {
  // One million draws over consecutive streams (as thread blocks key them). Tolerances are about four
  // standard errors of each estimate; the Kolmogorov-Smirnov bound is the 1% critical value.
  constexpr std::size_t kDraws = 1'000'000;
  std::vector<double> z(kDraws);
  for (std::size_t i = 0; i < kDraws; ++i) z[i] = keyed_normal(11, i);
  double sum = 0;
  double sum2 = 0;
  std::size_t positive = 0;
  std::size_t beyond[4] = {};  // |z| > 1, 2, 3, 3.5 (the ziggurat's tail starts at 3.44)
  for (const double v : z) {
    sum += v;
    sum2 += v * v;
    positive += v > 0 ? 1 : 0;
    const double a = std::fabs(v);
    beyond[0] += a > 1.0 ? 1 : 0;
    beyond[1] += a > 2.0 ? 1 : 0;
    beyond[2] += a > 3.0 ? 1 : 0;
    beyond[3] += a > 3.5 ? 1 : 0;
  }
  const auto n = static_cast<double>(kDraws);
  EXPECT_NEAR(sum / n, 0.0, 0.004);
  EXPECT_NEAR(sum2 / n, 1.0, 0.006);
  EXPECT_NEAR(static_cast<double>(positive) / n, 0.5, 0.002);
  const double two_sided[4] = {0.3173105, 0.0455003, 0.0026998, 0.0004653};
  const double tolerance[4] = {0.002, 0.0009, 0.00021, 0.00009};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(static_cast<double>(beyond[k]) / n, two_sided[k], tolerance[k]) << "tail " << k;
  }
  std::sort(z.begin(), z.end());
  double ks = 0;
  for (std::size_t i = 0; i < kDraws; ++i) {
    const double cdf = 0.5 * std::erfc(-z[i] / std::sqrt(2.0));
    ks = std::max({ks, cdf - static_cast<double>(i) / n, static_cast<double>(i + 1) / n - cdf});
  }
  EXPECT_LT(ks, 1.63 / std::sqrt(n));
}

TEST(KeyedNormal, KeysAreIndependent) {
  // Neighbouring streams and seeds give uncorrelated draws (the thread blocks of one launch are
  // consecutive keys): lag-1 correlation over 200 000 streams, and seed against seed.
  constexpr std::uint64_t kDraws = 200'000;
  double lag = 0;
  double seeds = 0;
  double previous = keyed_normal(1, 0);
  for (std::uint64_t s = 1; s <= kDraws; ++s) {
    const double z = keyed_normal(1, s);
    lag += z * previous;
    seeds += z * keyed_normal(2, s);
    previous = z;
  }
  // Standard error of each mean product: 1 / sqrt(2e5) = 0.0022.
  EXPECT_NEAR(lag / static_cast<double>(kDraws), 0.0, 0.01);
  EXPECT_NEAR(seeds / static_cast<double>(kDraws), 0.0, 0.01);
}

}  // namespace
}  // namespace gpumux
