// Perf-Sat's state machine (engine/perf_sat.h, Awatramani 4.3.2.2 and Fig. 4.4): the thesis's worked
// example step by step, every optimum of every N_max up to 32 on clean stall curves, both toggling rules,
// ties, and the ends of the range.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/perf_sat.h"

namespace gpumux {
namespace {

using State = PerfSat::State;

/// A stall curve with its minimum at `opt`: falls before it, rises after (4.3.2.1's hypothesis).
std::uint64_t bowl(std::uint32_t n, std::uint32_t opt) {
  const std::int64_t d = static_cast<std::int64_t>(n) - static_cast<std::int64_t>(opt);
  return static_cast<std::uint64_t>(1000 + 10 * d * d);
}

/// Runs `machine` on `curve` until it settles (at most `max_samples`); returns the samples taken.
int run(PerfSat& machine, const std::function<std::uint64_t(std::uint32_t)>& curve, int max_samples = 200) {
  int samples = 0;
  while (!machine.settled() && samples < max_samples) {
    machine.sample(curve(machine.limit()));
    ++samples;
  }
  return samples;
}

TEST(PerfSat, ThesisWorkedExampleStepByStep) {
  // 4.3.2.2: N_max = 15, N_optimal = 12, "Perf-Sat starts with N = 8. It takes two samples at N = 9 to set
  // the direction bit and goes into the strong-increase state. After N = 9, the number of active blocks is
  // increased at every sample point until 12. [...] N_13 sample is discarded, Perf-Sat goes into the
  // weak-increase state and number of active blocks are kept as 13. The history bit is set to 0. At the
  // next sample, if the stalled cycle count is again more than the N_12 sample, the optimal block count is
  // detected as 12."
  PerfSat m(15);
  EXPECT_EQ(m.limit(), 8U);
  EXPECT_EQ(m.state(), State::kStart);
  struct Step {
    std::uint32_t blocks;  // the count the sample was taken at
    std::uint32_t next;    // limit() after it
    State state;
    bool direction;
    bool history;
  };
  const std::vector<Step> expected = {
      {8, 9, State::kWeakIncrease, false, false},     // first sample stored, one block more
      {9, 9, State::kWeakIncrease, false, true},      // better: history bit set, count held
      {9, 10, State::kStrongIncrease, true, false},   // better again: direction bit set
      {10, 11, State::kStrongIncrease, true, false},  // increased at every sample...
      {11, 12, State::kStrongIncrease, true, false},
      {12, 13, State::kStrongIncrease, true, false},  // ... until 12, then 13 is tried
      {13, 13, State::kWeakIncrease, true, false},    // worse: discarded, held at 13, history 0
      {13, 12, State::kSettled, true, false},         // worse again: detected 12
  };
  for (const Step& step : expected) {
    SCOPED_TRACE("sample at " + std::to_string(step.blocks));
    ASSERT_EQ(m.limit(), step.blocks);
    m.sample(bowl(step.blocks, 12));
    EXPECT_EQ(m.limit(), step.next);
    EXPECT_EQ(m.state(), step.state);
    EXPECT_EQ(m.direction(), step.direction);
    EXPECT_EQ(m.history(), step.history);
  }
  EXPECT_TRUE(m.settled());
  EXPECT_STREQ(m.settled_by(), "optimum");
  m.sample(0);  // settled: samples change nothing
  EXPECT_EQ(m.limit(), 12U);
}

TEST(PerfSat, FindsEveryOptimumOfEveryNmaxOnACleanCurve) {
  for (std::uint32_t n_max = 1; n_max <= 32; ++n_max) {
    for (std::uint32_t opt = 1; opt <= n_max; ++opt) {
      SCOPED_TRACE("N_max " + std::to_string(n_max) + ", N_opt " + std::to_string(opt));
      PerfSat m(n_max);
      EXPECT_EQ(m.start(), (n_max + 1) / 2);
      std::uint32_t lowest = m.limit();
      std::uint32_t highest = m.limit();
      int samples = 0;
      while (!m.settled() && samples < 200) {
        m.sample(bowl(m.limit(), opt));
        ++samples;
        if (!m.settled()) {
          lowest = std::min(lowest, m.limit());
          highest = std::max(highest, m.limit());
        }
      }
      ASSERT_TRUE(m.settled());
      EXPECT_EQ(m.limit(), opt);
      EXPECT_STREQ(m.settled_by(), "optimum");
      EXPECT_GE(lowest, 1U);
      EXPECT_LE(highest, n_max);
      // It never strays more than one block past the optimum (the count it rejects).
      EXPECT_LE(highest, std::max(opt + 1, m.start() + 1));
      EXPECT_GE(lowest + 1, std::min(opt, m.start()));
      // Samples: the start, the direction (at most 4 near the start), one per step, two at the reject.
      const std::uint32_t distance = opt > m.start() ? opt - m.start() : m.start() - opt;
      EXPECT_LE(samples, static_cast<int>(distance) + 7);
    }
  }
}

TEST(PerfSat, TogglingNearTheStartSettlesConservativelyAtStartPlusOne) {
  // 4.3.2.2: "The optimal count is conservatively set as ceil(N_max/2 + 1), if the state machine toggles
  // more than three times." Every sample is worse than the stored one: 9 worse than 8, then 8 worse than
  // 9, ...
  PerfSat m(15);
  std::uint64_t stalled = 100;
  std::vector<std::uint32_t> counts;
  while (!m.settled()) {
    counts.push_back(m.limit());
    m.sample(stalled);
    stalled += 100;
    ASSERT_LT(counts.size(), 20U);
  }
  // start, then toggles 1..4 (the fourth is "more than three").
  EXPECT_EQ(counts, (std::vector<std::uint32_t>{8, 9, 8, 9, 8}));
  EXPECT_EQ(m.limit(), 9U);
  EXPECT_STREQ(m.settled_by(), "toggles-near-start");
}

TEST(PerfSat, ThreeTogglesAreToleratedAndTheConfiguredLimitIsHonoured) {
  // Three toggles, then a coherent pair: the direction is decided and detection goes on.
  PerfSat m(15);
  m.sample(100);  // at 8 -> 9
  m.sample(200);  // 9 worse: toggle 1 -> 8 (stored 200)
  m.sample(300);  // 8 worse than 9: toggle 2 -> 9 (stored 300)
  m.sample(400);  // 9 worse than 8: toggle 3 -> 8 (stored 400)
  EXPECT_EQ(m.toggles(), 3U);
  EXPECT_EQ(m.state(), State::kWeakDecrease);
  EXPECT_EQ(m.limit(), 8U);
  m.sample(300);  // 8 better than 9: history
  m.sample(300);  // again: strong-decrease, 7
  EXPECT_EQ(m.state(), State::kStrongDecrease);
  EXPECT_EQ(m.limit(), 7U);
  EXPECT_EQ(m.toggles(), 0U);  // a new phase

  PerfSat strict(15, 0);  // max_toggles 0: the first toggle settles
  strict.sample(100);
  strict.sample(200);
  EXPECT_TRUE(strict.settled());
  EXPECT_EQ(strict.limit(), 9U);
}

TEST(PerfSat, TogglingNearTheOptimumSettlesOptimisticallyAtThePreviousValue) {
  // 4.3.2.2: "just before converging at N_optimal = 12, Perf-Sat can toggle several times between the
  // weak-increase and strong-increase states. The optimal block count is optimistically set as the
  // previous value (12 in this example) if the state machine toggles more than 3 times."
  PerfSat m(15);
  bool worse = true;
  int samples = 0;
  while (!m.settled() && samples < 50) {
    const std::uint32_t n = m.limit();
    std::uint64_t s = bowl(std::min(n, 12U), 12);
    if (n == 13) {
      s = worse ? 2000 : 900;  // 13 alternates: worse than 12, better than 12, ...
      worse = !worse;
    }
    m.sample(s);
    ++samples;
  }
  ASSERT_TRUE(m.settled());
  EXPECT_EQ(m.limit(), 12U);
  EXPECT_STREQ(m.settled_by(), "toggles-near-optimum");
  EXPECT_EQ(m.toggles(), 4U);
}

TEST(PerfSat, TogglingNearTheOptimumWhenDecreasingSettlesAtThePreviousValue) {
  // The mirror: N_max = 15, optimum 5, and 4 alternates worse / better than 5.
  PerfSat m(15);
  bool worse = true;
  int samples = 0;
  while (!m.settled() && samples < 50) {
    const std::uint32_t n = m.limit();
    std::uint64_t s = bowl(std::max(n, 5U), 5);
    if (n == 4) {
      s = worse ? 5000 : 500;
      worse = !worse;
    }
    m.sample(s);
    ++samples;
  }
  ASSERT_TRUE(m.settled());
  EXPECT_EQ(m.limit(), 5U);
  EXPECT_STREQ(m.settled_by(), "toggles-near-optimum");
}

TEST(PerfSat, ACountBetterOnItsSecondSampleIsPassed) {
  // Strong-increase at 13 worse once (noise), better on the next: back to strong, 13 held one sample
  // more, then on to 14.
  PerfSat m(15);
  std::vector<std::uint64_t> at13 = {2000, 850, 850};
  std::size_t seen13 = 0;
  std::vector<std::uint32_t> counts;
  while (!m.settled() && counts.size() < 50) {
    const std::uint32_t n = m.limit();
    counts.push_back(n);
    std::uint64_t s = 1000 - 10 * static_cast<std::uint64_t>(std::min(n, 12U));
    if (n == 13) s = at13.at(std::min(seen13++, at13.size() - 1));
    if (n >= 14) s = 5000;
    m.sample(s);
  }
  EXPECT_EQ(counts, (std::vector<std::uint32_t>{8, 9, 9, 10, 11, 12, 13, 13, 13, 14, 14}));
  EXPECT_EQ(m.limit(), 13U);
}

TEST(PerfSat, TiesFavourFewerBlocksSoAFlatCurveEndsAtOne) {
  // 4.3.2.1: N+1 blocks are better only with strictly fewer stalls. A kernel that never stalls (an
  // issue-bound one: every sample 0) gains nothing from more blocks than one.
  PerfSat m(8);
  std::vector<std::uint32_t> counts;
  while (!m.settled() && counts.size() < 50) {
    counts.push_back(m.limit());
    m.sample(0);
  }
  EXPECT_EQ(counts, (std::vector<std::uint32_t>{4, 5, 4, 4, 3, 2, 1}));
  EXPECT_EQ(m.limit(), 1U);
  // A tie in the increase direction is not an improvement; in the decrease direction it is no loss.
  PerfSat up(15);
  up.sample(100);  // 8 -> 9
  up.sample(100);  // 9 ties 8: back down
  EXPECT_EQ(up.state(), State::kWeakDecrease);
  EXPECT_EQ(up.limit(), 8U);
  up.sample(100);  // 8 ties 9: the decrease holds
  EXPECT_TRUE(up.history());
}

TEST(PerfSat, TheEndsOfTheRange) {
  PerfSat one(1);  // nothing to detect
  EXPECT_TRUE(one.settled());
  EXPECT_EQ(one.limit(), 1U);
  PerfSat zero(0);  // treated as 1
  EXPECT_EQ(zero.limit(), 1U);

  PerfSat two(2);  // start 1, tries 2
  EXPECT_EQ(two.limit(), 1U);
  two.sample(10);
  EXPECT_EQ(two.limit(), 2U);
  run(two, [](std::uint32_t n) { return std::uint64_t{n == 1 ? 10U : 100U}; });
  EXPECT_EQ(two.limit(), 1U);

  PerfSat down(15);  // falling all the way: settles at 1
  run(down, [](std::uint32_t n) { return std::uint64_t{n}; });
  EXPECT_EQ(down.limit(), 1U);
  PerfSat up(15);  // rising all the way: settles at 15
  run(up, [](std::uint32_t n) { return std::uint64_t{100 - n}; });
  EXPECT_EQ(up.limit(), 15U);
}

TEST(PerfSat, StateNames) {
  EXPECT_STREQ(to_string(State::kStart), "start");
  EXPECT_STREQ(to_string(State::kWeakIncrease), "weak-increase");
  EXPECT_STREQ(to_string(State::kStrongIncrease), "strong-increase");
  EXPECT_STREQ(to_string(State::kWeakDecrease), "weak-decrease");
  EXPECT_STREQ(to_string(State::kStrongDecrease), "strong-decrease");
  EXPECT_STREQ(to_string(State::kSettled), "settled");
}

}  // namespace
}  // namespace gpumux
