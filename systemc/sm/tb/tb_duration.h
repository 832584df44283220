#pragma once
// Thread-block duration at the TB-level fidelity: the kernel profile's mean, fixed or drawn from a
// seeded lognormal distribution with the profile's relative standard deviation (Pai Table 3 %RSD).
// Lognormal keeps durations positive and right-skewed, as Pai Fig. 6 shows for irregular kernels.
//
// Each draw is keyed by (run seed, process, the process's launch number, thread block), not taken
// from a stream in issue order: the same thread block runs equally long under every policy, on
// every SM and in every order, so policies are compared on identical work (issue 10 item 1).

#include <cmath>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/kernel_desc.h"
#include "core/rng.h"
#include "core/types.h"
#include "core/workload.h"
#include "sm/sm_port.h"

namespace gpumux {

class TbDurationModel {
 public:
  TbDurationModel(TbDurationMode mode, std::uint64_t seed) : mode_(mode), seed_(seed) {}

  /// Run time of thread block `tb` of the `launch`-th kernel launch of `process`.
  TimePs draw(const TbTimeProfile& profile, ProcessId process, std::uint32_t launch, std::uint32_t tb) {
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
    const std::uint64_t launch_key = (static_cast<std::uint64_t>(index(process)) << 32U) ^ launch;
    if (launch_key != cached_launch_key_ || !launch_hash_valid_) {
      // Cached: consecutive draws on an SM share a launch. splitmix64 advances its argument.
      std::uint64_t state = launch_key;
      launch_hash_ = splitmix64(state);
      cached_launch_key_ = launch_key;
      launch_hash_valid_ = true;
    }
    std::uint64_t key = launch_hash_ ^ tb;
    // One keyed normal (core/rng.h: a ziggurat, no log or cos on its fast path; the bench's hot path).
    const double value = std::exp(mu_ + sigma_ * keyed_normal(seed_, splitmix64(key)));
    return at_least_one(round_to_ps(value));
  }

  /// How long a launched thread block runs: what it had left when resumed after a context switch,
  /// else a draw. A draw beyond the model's time horizon is an input error naming the kernel.
  TimePs duration_of(const TbLaunch& launch) {
    if (launch.resumed) return launch.resume.remaining_ps;
    const KernelDesc& k = *launch.desc;
    const TimePs duration = draw(k.tb_time, launch.process, launch.process_launch, launch.tb);
    // A lognormal tail draw of a long, widely spread kernel: beyond this, sums of times could
    // overflow the picosecond clock. The input is the cause, so it is reported as one.
    if (duration >= kTimeHorizonPs / 16) beyond_horizon(k, duration);
    return duration;
  }

 private:
  /// Cold and not inlined: the per-thread-block path stays small (it runs for every thread block).
  [[noreturn, gnu::cold, gnu::noinline]] static void beyond_horizon(const KernelDesc& k, TimePs duration) {
    throw InputError(k.where, k.name + ".tb_time",
                     "a thread-block time drawn for kernel '" + k.name + "' is " +
                         std::to_string(static_cast<double>(duration) / 1e12) +
                         " s, beyond the model's time horizon; lower its mean or rsd_percent");
  }
  static TimePs at_least_one(TimePs t) { return t == 0 ? 1 : t; }
  const TbTimeProfile* cached_profile_ = nullptr;
  double mu_ = 0;
  double sigma_ = 0;
  std::uint64_t cached_launch_key_ = 0;  ///< (process << 32) ^ launch of launch_hash_
  std::uint64_t launch_hash_ = 0;
  bool launch_hash_valid_ = false;
  TbDurationMode mode_;
  std::uint64_t seed_;
};

}  // namespace gpumux
