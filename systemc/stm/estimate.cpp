#include "stm/estimate.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <utility>

#include "policy/leaky_bucket_reference.h"

namespace gpumux::stm {

namespace {

using Ref = LeakyBucketReference;

/// Rate of one token per interleaving cycle in the model's fixed point: the policy's rate = share x 256.
constexpr std::uint32_t kOne = 1U << Ref::kFracBits;
/// The model's width (the policy uses 24 bits; 32 only widens the range in which nothing saturates).
constexpr std::uint32_t kLevelBits = 32;

/// Thread blocks in leaky-bucket order, one at a time (interleave_order, drr_latency_ns): the reference
/// model clocked and reconfigured as policy/leaky_bucket.cpp does, with rate compensation off (Liang's DRR
/// interleaves by the SM shares; latency differences are what the dynamic dispatch then balances, Fig. 4b).
class Interleaver {
 public:
  Interleaver(const std::vector<std::uint32_t>& shares, const std::vector<std::uint32_t>& thread_blocks)
      : model_(Ref::Config{static_cast<std::uint32_t>(std::max<std::size_t>(shares.size(), 1)), kLevelBits}),
        left_(thread_blocks) {
    if (shares.size() != thread_blocks.size()) {
      throw std::invalid_argument("interleave_order: one share per kernel");
    }
    std::uint64_t share_sum = 0;
    for (const std::uint32_t share : shares) {
      if (share < 1) {
        throw std::invalid_argument("interleave_order: shares must be >= 1");
      }
      share_sum += share;
    }
    if (share_sum > kMaxShareSum) {
      throw std::invalid_argument("interleave_order: shares sum to more than " +
                                  std::to_string(kMaxShareSum));
    }
    rate_.reserve(shares.size());
    for (const std::uint32_t share : shares) {
      rate_.push_back(share * kOne);
    }
    for (const std::uint32_t blocks : left_) {
      total_ += blocks;
    }
    // A kernel without blocks never joins, as the policy never activates a kernel with none to issue.
    configure(true);
  }

  [[nodiscard]] std::uint64_t total() const { return total_; }

  /// The position of the kernel of the next thread block; false when every block has been handed out.
  bool next(std::size_t& kernel) {
    if (granted_ == total_) {
      return false;
    }
    for (std::uint64_t cycle = 0; cycle <= kMaxCyclesPerGrant; ++cycle) {
      const Ref::Outputs out = model_.step(Ref::Inputs::tick());
      if (!out.grant_valid) {
        continue;
      }
      kernel = out.grant_kernel;
      ++granted_;
      if (--left_[kernel] == 0) {
        configure(false);  // the kernel leaves; the others keep their fill
      }
      return true;
    }
    throw std::logic_error("interleave_order: no leaky-bucket grant within the bound");
  }

 private:
  /// The levels of the active buckets grow by one capacity (the sum of the rates) per cycle and a grant
  /// takes one away; a cycle without a grant leaves every level below one capacity. So the sum of the
  /// levels stays below n capacities, and with n <= S (the sum of the shares) no level reaches
  /// S x S x 256, which stays below 2^32 for S < 4096: the 32-bit model never saturates (1024 SMs at most).
  static constexpr std::uint64_t kMaxShareSum = 4095;
  /// A cycle without a grant needs every level below one capacity; n of them in a row would need the
  /// sum of the levels to reach n capacities: a grant comes within n <= S cycles.
  static constexpr std::uint64_t kMaxCyclesPerGrant = kMaxShareSum + 1;

  /// Writes every bucket from the kernels with blocks left (one model cycle each, no grants): active
  /// ones get their rate and capacity = the sum of the active rates. `first`: buckets start empty.
  void configure(bool first) {
    std::uint64_t capacity = 0;
    for (std::size_t k = 0; k < left_.size(); ++k) {
      if (left_[k] > 0) {
        capacity += rate_[k];
      }
    }
    for (std::size_t k = 0; k < left_.size(); ++k) {
      const bool active = left_[k] > 0;
      const auto index = static_cast<std::uint32_t>(k);
      if (!active && (first || !model_.bucket(index).active)) {
        continue;  // never joined, or already left
      }
      model_.step(Ref::Inputs::configure(index, active, active ? static_cast<std::uint32_t>(capacity) : 0,
                                         active ? rate_[k] : 0, first));
    }
  }

  Ref model_;
  std::vector<std::uint32_t> rate_;
  std::vector<std::uint32_t> left_;  ///< thread blocks not yet granted, per kernel
  std::uint64_t total_ = 0;
  std::uint64_t granted_ = 0;
};

/// Eq. 4's condition: sum G_i > Gb (never with Gb = 0, "not given").
bool exceeds_global_memory(const ProfileSet& profiles, const Configuration& c) {
  if (profiles.global_memory_bytes == 0) {
    return false;
  }
  std::uint64_t sum = 0;  // stays <= Gb, so the sum cannot wrap
  for (const Allocation& a : c) {
    const std::uint64_t g = profiles.kernels[a.kernel].global_memory_bytes;
    if (g > profiles.global_memory_bytes - sum) {
      return true;
    }
    sum += g;
  }
  return false;
}

}  // namespace

std::uint32_t sms_used(const Configuration& c) {
  std::uint32_t sum = 0;
  for (const Allocation& a : c) {
    sum += a.sms;
  }
  return sum;
}

void check_configuration(const ProfileSet& profiles, const Configuration& c) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const Allocation& a = c[i];
    if (a.kernel >= profiles.kernels.size()) {
      throw std::invalid_argument("configuration: kernel index " + std::to_string(a.kernel) + " of " +
                                  std::to_string(profiles.kernels.size()) + " profiles");
    }
    if (a.sms < 1 || a.sms > profiles.sms) {
      throw std::invalid_argument("configuration: kernel '" + profiles.kernels[a.kernel].kernel + "' given " +
                                  std::to_string(a.sms) + " SMs of " + std::to_string(profiles.sms));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (c[j].kernel == a.kernel) {
        throw std::invalid_argument("configuration: kernel '" + profiles.kernels[a.kernel].kernel +
                                    "' twice");
      }
    }
    const KernelProfile& k = profiles.kernels[a.kernel];
    if (k.thread_blocks == 0 || k.latency_ns.size() != profiles.sms ||
        k.bandwidth_gb_per_s.size() != profiles.sms) {
      throw std::invalid_argument("configuration: profile of '" + k.kernel +
                                  "' has no thread blocks or lists not of length sms");
    }
    sum += a.sms;
  }
  if (sum > profiles.sms) {
    throw std::invalid_argument("configuration: " + std::to_string(sum) + " SMs allocated of " +
                                std::to_string(profiles.sms));
  }
}

double per_tb_latency_ns(const KernelProfile& kernel, std::uint32_t m) {
  if (kernel.thread_blocks == 0) {
    throw std::invalid_argument("per_tb_latency_ns: kernel '" + kernel.kernel + "' has no thread blocks");
  }
  // Liang 3.2: "we compute its per-thread-block latency given an allocation of m SMs as R_i[m] x m / TB_i".
  return kernel.R(m) * static_cast<double>(m) / static_cast<double>(kernel.thread_blocks);
}

std::vector<std::size_t> interleave_order(const std::vector<std::uint32_t>& shares,
                                          const std::vector<std::uint32_t>& thread_blocks) {
  Interleaver interleaver(shares, thread_blocks);
  std::vector<std::size_t> order;
  order.reserve(interleaver.total());
  std::size_t kernel = 0;
  while (interleaver.next(kernel)) {
    order.push_back(kernel);
  }
  return order;
}

double drr_latency_ns(const ProfileSet& profiles, const Configuration& c) {
  check_configuration(profiles, c);
  if (c.empty()) {
    return 0;
  }
  std::vector<std::uint32_t> shares;
  std::vector<std::uint32_t> blocks;
  std::vector<double> block_ns;
  for (const Allocation& a : c) {
    const KernelProfile& k = profiles.kernels[a.kernel];
    shares.push_back(a.sms);
    blocks.push_back(k.thread_blocks);
    block_ns.push_back(per_tb_latency_ns(k, a.sms));
  }
  // Fig. 4: after the initial assignment fills the SMs, "remaining thread blocks are inserted into a queue
  // and dispatched to SMs as they become available". A min-heap of (time the SM frees, SM index): with
  // every SM free at 0 the first SM_C blocks go to SMs 0, 1, ... in order; pair order breaks equal times
  // by the lower SM index.
  using FreeAt = std::pair<double, std::uint32_t>;
  std::vector<FreeAt> initial;
  const std::uint32_t sms = sms_used(c);
  initial.reserve(sms);
  for (std::uint32_t sm = 0; sm < sms; ++sm) {
    initial.emplace_back(0.0, sm);
  }
  std::priority_queue<FreeAt, std::vector<FreeAt>, std::greater<>> free_at(std::greater<>(),
                                                                           std::move(initial));
  Interleaver interleaver(shares, blocks);
  double finish = 0;
  std::size_t kernel = 0;
  while (interleaver.next(kernel)) {
    const FreeAt sm = free_at.top();
    free_at.pop();
    const double end = sm.first + block_ns[kernel];
    finish = std::max(finish, end);
    free_at.emplace(end, sm.second);
  }
  return finish;
}

double penalty(const ProfileSet& profiles, const Configuration& c) {
  check_configuration(profiles, c);
  double demand = 0;
  for (const Allocation& a : c) {
    demand += profiles.kernels[a.kernel].B(a.sms);
  }
  // Eq. 3: "all kernels are uniformly slowed down in proportion to the excess demand".
  return demand > profiles.peak_bandwidth_gb_per_s ? demand / profiles.peak_bandwidth_gb_per_s : 1.0;
}

double con_lat_ns(const ProfileSet& profiles, const Configuration& c) {
  check_configuration(profiles, c);
  // Eq. 4: kernels whose global memory does not fit together cannot run concurrently (CUDA aborts them).
  if (exceeds_global_memory(profiles, c)) {
    return std::numeric_limits<double>::infinity();
  }
  return drr_latency_ns(profiles, c) * penalty(profiles, c);
}

double seq_lat_ns(const ProfileSet& profiles, const Configuration& c) {
  check_configuration(profiles, c);
  const std::uint32_t sms = sms_used(c);
  double sum = 0;
  for (const Allocation& a : c) {
    sum += profiles.kernels[a.kernel].R(sms);  // Eq. 2: R_i[SM_C], not R_i[M]
  }
  return sum;
}

double imp_ns(const ProfileSet& profiles, const Configuration& c) {
  return seq_lat_ns(profiles, c) - con_lat_ns(profiles, c);  // Eq. 1
}

double phase_latency_ns(const ProfileSet& profiles, const Configuration& c) {
  check_configuration(profiles, c);
  if (c.size() == 1) {
    return profiles.kernels[c[0].kernel].R(c[0].sms);
  }
  return con_lat_ns(profiles, c);
}

std::string to_string(const ProfileSet& profiles, const Configuration& c) {
  std::string text = "{";
  for (std::size_t i = 0; i < c.size(); ++i) {
    const std::string name = c[i].kernel < profiles.kernels.size() ? profiles.kernels[c[i].kernel].kernel
                                                                   : "#" + std::to_string(c[i].kernel);
    text += (i == 0 ? "" : ", ") + name + ":" + std::to_string(c[i].sms);
  }
  return text + "}";
}

}  // namespace gpumux::stm
