#pragma once
// Thread-block duration at the TB-level fidelity: the kernel profile's mean, fixed or drawn from a
// seeded lognormal distribution with the profile's relative standard deviation (Pai Table 3 %RSD).
// Lognormal keeps durations positive and right-skewed, as Pai Fig. 6 shows for irregular kernels.

#include <cmath>

#include "core/kernel_desc.h"
#include "core/rng.h"
#include "core/types.h"
#include "core/workload.h"

namespace gpumux {

class TbDurationModel {
 public:
  TbDurationModel(TbDurationMode mode, std::uint64_t seed, std::uint64_t stream)
      : mode_(mode), rng_(seed, stream) {}

  TimePs draw(const TbTimeProfile& profile) {
    if (mode_ == TbDurationMode::kFixed || profile.rsd_percent <= 0.0) return at_least_one(profile.mean_ps);
    if (&profile != cached_profile_) {
      // Lognormal parameters for mean m and coefficient of variation cv:
      // sigma^2 = ln(1 + cv^2), mu = ln(m) - sigma^2 / 2. Cached: consecutive draws share a kernel.
      const double cv = profile.rsd_percent / 100.0;
      const double sigma2 = std::log1p(cv * cv);
      mu_ = std::log(static_cast<double>(profile.mean_ps)) - 0.5 * sigma2;
      sigma_ = std::sqrt(sigma2);
      cached_profile_ = &profile;
    }
    const double value = std::exp(mu_ + sigma_ * rng_.normal());
    return at_least_one(round_to_ps(value));
  }

 private:
  const TbTimeProfile* cached_profile_ = nullptr;
  double mu_ = 0;
  double sigma_ = 0;
  static TimePs at_least_one(TimePs t) { return t == 0 ? 1 : t; }
  TbDurationMode mode_;
  Rng rng_;
};

}  // namespace gpumux
