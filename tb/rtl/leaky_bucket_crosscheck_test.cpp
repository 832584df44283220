// rtl/leaky_bucket.sv against LeakyBucketReference, cycle by cycle: the same inputs in every cycle,
// the grant outputs and every bucket's active bit and level after the edge must agree. Directed
// (Liang Fig. 5) and seeded random scenarios for three parameter sets (tb/rtl/CMakeLists.txt).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "Vbucket_k13.h"
#include "Vbucket_k2_narrow.h"
#include "Vbucket_k4.h"
#include "core/rng.h"
#include "leaky_bucket_rtl.h"
#include "lockstep.h"
#include "rtl_options.h"

namespace gpumux::rtl {
namespace {

using Ref = LeakyBucketReference;

// Must match the -G arguments in tb/rtl/CMakeLists.txt.
struct K4 {
  using Top = Vbucket_k4;
  static constexpr const char* kName = "k4";
  static Ref::Config config() { return Ref::Config{4, 24}; }
};
struct K2Narrow {  // 8-bit levels: saturation
  using Top = Vbucket_k2_narrow;
  static constexpr const char* kName = "k2_narrow";
  static Ref::Config config() { return Ref::Config{2, 8}; }
};
struct K13 {  // one bucket per KSRT entry of the K20c
  using Top = Vbucket_k13;
  static constexpr const char* kName = "k13";
  static Ref::Config config() { return Ref::Config{13, 16}; }
};
constexpr std::uint64_t kNumSets = 3;
constexpr const char* kBlock = "leaky_bucket";
[[maybe_unused]] const bool kRegistered = register_random_block(kBlock, kNumSets);

std::string describe(const Ref::Inputs& in) {
  std::ostringstream s;
  s << "advance=" << in.advance;
  if (in.cfg.valid) {
    s << " cfg{kernel " << in.cfg.kernel << ", active " << in.cfg.active << ", clear " << in.cfg.clear
      << ", capacity " << in.cfg.capacity << ", rate " << in.cfg.rate << "}";
  }
  return s.str();
}

std::string describe(const Ref::Outputs& out) {
  std::ostringstream s;
  s << "grant=" << (out.grant_valid ? "" : "- (") << out.grant_kernel << (out.grant_valid ? "" : ")");
  return s.str();
}

/// The reference model and the RTL in lockstep: the grant and every bucket, every cycle.
template <class Set>
class Lockstep : public LockstepPair<Ref, LeakyBucketRtl<typename Set::Top>> {
 public:
  explicit Lockstep(const std::string& tag)
      : LockstepPair<Ref, LeakyBucketRtl<typename Set::Top>>(Set::config(), wave_path(tag)) {}

  /// One cycle; false (with failure() set) on the first disagreement.
  /// The reference's grant and buckets go into the wave beside the RTL's, with the mismatch marker.
  bool step(const Ref::Inputs& in) {
    Ref::Outputs a = this->ref_.step(in);
    this->last_ = a;
    if (this->injecting()) a.grant_valid = !a.grant_valid;  // --inject-mismatch
    std::string diff;
    const Ref::Outputs b = this->rtl_.step(in, this->ref_, a, [&](const Ref::Outputs& rtl_out) {
      if (a.grant_valid != rtl_out.grant_valid || a.grant_kernel != rtl_out.grant_kernel) {
        diff = "outputs differ";
      }
      for (std::uint32_t k = 0; k < this->ref_.num_kernels() && diff.empty(); ++k) {
        const Ref::Bucket& x = this->ref_.bucket(k);
        const Ref::Bucket y = this->rtl_.bucket(k);
        if (x.active != y.active || x.level != y.level) {
          std::ostringstream d;
          d << "bucket " << k << " after the edge: reference active=" << x.active << " level=" << x.level
            << ", RTL active=" << y.active << " level=" << y.level;
          diff = d.str();
        }
      }
      if (diff.empty() && this->rtl_.assertion_failed()) diff = "an RTL assertion failed (message above)";
      return !diff.empty();
    });
    if (!diff.empty()) {
      const std::string parameters = "NumKernels=" + std::to_string(Set::config().num_kernels) +
                                     " LevelW=" + std::to_string(Set::config().level_bits);
      return this->disagree(parameters, describe(in), describe(a), describe(b), diff);
    }
    return this->agree();
  }
};

/// One random scenario: either share-style configurations (rate = share, capacity = sum of shares,
/// as the policy writes them) or arbitrary values (zero, saturation), mixed with rate changes.
class Stimulus {
 public:
  Stimulus(std::uint64_t seed, const Ref::Config& config) : rng_(seed, 0x1B), config_(config) {
    const std::uint64_t max = config.level_bits >= 32 ? 0xFFFFFFFFULL : (1ULL << config.level_bits) - 1;
    max_ = static_cast<std::uint32_t>(max);
    cycles_ = 50 + static_cast<std::uint32_t>(rng_.below(2000));
    advance_rate_ = std::vector<double>{0.5, 0.9, 1.0}[rng_.below(3)];
    cfg_rate_ = std::vector<double>{0.005, 0.03, 0.2}[rng_.below(3)];
    wild_ = rng_.below(3) == 0;
    scale_ = std::vector<std::uint32_t>{1, 16, 256}[rng_.below(3)];
  }

  [[nodiscard]] std::uint32_t cycles() const { return cycles_; }

  Ref::Inputs next(const Ref& ref) {
    Ref::Inputs in;
    in.advance = rng_.uniform() < advance_rate_;
    if (rng_.uniform() < cfg_rate_) {
      const auto k = static_cast<std::uint32_t>(rng_.below(config_.num_kernels));
      const bool active = rng_.below(5) != 0;
      const bool clear = rng_.below(3) == 0;
      std::uint32_t capacity = 0;
      std::uint32_t rate = 0;
      if (wild_) {
        capacity = draw_value();
        rate = draw_value();
      } else {
        // Share style: rate = share x scale, capacity = the sum over active buckets (this one's new share
        // included), clamped into the register width.
        const std::uint64_t share = 1 + rng_.below(9);
        std::uint64_t sum = share * scale_;
        for (std::uint32_t j = 0; j < config_.num_kernels; ++j) {
          if (j != k && ref.bucket(j).active) sum += ref.bucket(j).rate;
        }
        rate = clamp(share * scale_);
        capacity = clamp(sum);
      }
      in.cfg = {true, k, active, clear, capacity, rate};
    }
    return in;
  }

 private:
  std::uint32_t clamp(std::uint64_t v) const { return v > max_ ? max_ : static_cast<std::uint32_t>(v); }
  std::uint32_t draw_value() {
    switch (rng_.below(6)) {
      case 0:
        return 0;
      case 1:
        return max_;
      case 2:
        return max_ - static_cast<std::uint32_t>(rng_.below(4));
      default:
        return static_cast<std::uint32_t>(rng_.below(std::uint64_t{max_} + 1) >> rng_.below(8));
    }
  }

  Rng rng_;
  Ref::Config config_;
  std::uint32_t max_ = 0;
  std::uint32_t cycles_ = 0;
  double advance_rate_ = 1.0;
  double cfg_rate_ = 0.0;
  bool wild_ = false;
  std::uint32_t scale_ = 1;
};

template <class Set>
void run_random(std::uint64_t set_index) {
  const RtlOptions& o = options();
  std::uint64_t n = 0;
  if (!random_scenarios_run(kBlock, set_index, n)) {
    GTEST_SKIP() << "--scenario " << *o.only_scenario << " is not among this test's " << n
                 << " random scenarios (--scenarios " << o.scenarios << " over " << kNumSets
                 << " parameter sets)";
  }
  Lockstep<Set> lock(std::string("bucket_") + Set::kName + "_random");
  Tally& tally = tallies()[kBlock];
  for (std::uint64_t k = 0; k < n; ++k) {
    if (o.only_scenario && *o.only_scenario != k) continue;
    lock.reset();
    lock.inject_at(injected_cycle(k));
    Stimulus stim(scenario_seed(o.seed, std::string("bucket_") + Set::kName, k), Set::config());
    bool ok = true;
    for (std::uint32_t c = 0; c < stim.cycles() && ok; ++c) ok = lock.step(stim.next(lock.ref()));
    if (!ok) {
      FAIL() << "leaky_bucket/" << Set::kName << " random scenario " << k << " (seed " << o.seed
             << "): first mismatch\n"
             << lock.failure() << "\n  rerun: " << rerun_command(k);
    }
    ++tally.scenarios;
    tally.cycles += lock.cycle();
    tally.decisions += lock.ref().grants();
  }
}

TEST(LeakyBucketRtlCrosscheck, RandomK4) { run_random<K4>(0); }
TEST(LeakyBucketRtlCrosscheck, RandomK2Narrow) { run_random<K2Narrow>(1); }
TEST(LeakyBucketRtlCrosscheck, RandomK13) { run_random<K13>(2); }

TEST(LeakyBucketRtlCrosscheck, LiangFigure5OneSmToATwoToB) {
  // Three SMs, kernel A gets one and kernel B two: rates 1 and 2 (x256), capacity 3 (x256).
  Lockstep<K4> lock("bucket_k4_fig5");
  ASSERT_TRUE(lock.step(Ref::Inputs::configure(0, true, 3 * 256, 256, true))) << lock.failure();
  ASSERT_TRUE(lock.step(Ref::Inputs::configure(1, true, 3 * 256, 2 * 256, true))) << lock.failure();
  std::string order;
  for (int c = 0; c < 32; ++c) {
    ASSERT_TRUE(lock.step(Ref::Inputs::tick())) << lock.failure();
    if (lock.last().grant_valid) order += lock.last().grant_kernel == 0 ? 'A' : 'B';
  }
  // After start-up every window of three consecutive grants holds one A and two B.
  ASSERT_GE(order.size(), 20U) << order;
  for (std::size_t i = 2; i + 3 <= order.size(); ++i) {
    const std::string w = order.substr(i, 3);
    EXPECT_EQ(std::count(w.begin(), w.end(), 'A'), 1) << order << " at " << i;
  }
}

}  // namespace
}  // namespace gpumux::rtl
