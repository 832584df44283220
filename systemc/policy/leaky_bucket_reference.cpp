#include "policy/leaky_bucket_reference.h"

#include <stdexcept>
#include <string>

namespace gpumux {

LeakyBucketReference::LeakyBucketReference(const Config& config) : config_(config) {
  if (config_.num_kernels == 0 || config_.num_kernels > 65535) {
    throw std::invalid_argument("LeakyBucketReference: num_kernels must be 1..65535");
  }
  if (config_.level_bits < 2 || config_.level_bits > 32) {
    throw std::invalid_argument("LeakyBucketReference: level_bits must be 2..32");
  }
  level_max_ = config_.level_bits == 32 ? 0xFFFFFFFFU : (std::uint32_t{1} << config_.level_bits) - 1;
  reset();
}

void LeakyBucketReference::reset() {
  buckets_.assign(config_.num_kernels, Bucket{});
  grants_ = 0;
}

LeakyBucketReference::Outputs LeakyBucketReference::step(const Inputs& in) {
  if (in.cfg.valid && in.cfg.kernel >= config_.num_kernels) {
    throw std::invalid_argument("LeakyBucketReference: configure of kernel " + std::to_string(in.cfg.kernel) +
                                " (" + std::to_string(config_.num_kernels) + " buckets)");
  }
  if (in.cfg.valid && (in.cfg.capacity > level_max_ || in.cfg.rate > level_max_)) {
    throw std::invalid_argument("LeakyBucketReference: capacity or rate wider than level_bits");
  }
  Outputs out;
  if (in.advance) {
    bool found = false;
    std::uint32_t winner = 0;
    std::uint32_t winner_excess = 0;
    for (std::uint32_t k = 0; k < config_.num_kernels; ++k) {
      Bucket& b = buckets_[k];
      if (!b.active || (in.cfg.valid && in.cfg.kernel == k)) continue;
      const std::uint64_t filled = std::uint64_t{b.level} + b.rate;
      b.level = filled > level_max_ ? level_max_ : static_cast<std::uint32_t>(filled);
      if (b.level >= b.capacity) {
        const std::uint32_t excess = b.level - b.capacity;
        if (!found || excess > winner_excess) {  // strictly larger: ties keep the lowest index
          found = true;
          winner = k;
          winner_excess = excess;
        }
      }
    }
    if (found) {
      buckets_[winner].level = winner_excess;
      out.grant_valid = true;
      out.grant_kernel = winner;
      ++grants_;
    }
  }
  if (in.cfg.valid) {
    Bucket& b = buckets_[in.cfg.kernel];
    b.active = in.cfg.active;
    b.capacity = in.cfg.capacity;
    b.rate = in.cfg.rate;
    if (in.cfg.clear || !in.cfg.active) b.level = 0;
  }
  return out;
}

}  // namespace gpumux
