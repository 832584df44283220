#pragma once
// LeakyBucketReference: the cycle-level reference model of leaky-bucket thread-block interleaving
// (Liang et al., 4.1, Figs. 4-5). Plain C++ with no SystemC or engine types: the simulator policy
// `leaky-bucket` (policy/leaky_bucket.h) draws its interleave order from it, and rtl/leaky_bucket.sv
// is checked against it cycle by cycle under Verilator. One call of step() is one clock cycle.
//
// Liang: "each kernel to be executed concurrently has an independent bucket filling with tokens at a
// rate of one token per cycle. Each bucket's maximum capacity is computed to correspond to the
// desired relative allocation rate, where larger capacities mean less frequent allocations. When a
// bucket reaches its capacity, one thread block is placed in the queue, and the bucket is emptied."
// The cycles are abstract: they only order the thread blocks.
//
// State per bucket (kernel): active, capacity, rate, level; all unsigned `level_bits` wide. Values are
// fixed point with kFracBits fractional bits by convention (rate 1.0 = 1 << kFracBits, one token per
// cycle); the arithmetic is plain integer arithmetic, so any common scale works.
//
// One cycle (step):
//  - advance: every active bucket not configured in this cycle fills by its rate (saturating at
//    2^level_bits - 1). A bucket whose level reached its capacity is full. Of the full buckets the one
//    with the largest excess (level - capacity) is granted: grant{valid, kernel} in this cycle, and its
//    bucket is emptied by one capacity (the excess carries over, so fractional capacities and buckets
//    that had to wait lose no rate). Ties: the lowest kernel index. At most one grant per cycle.
//  - cfg: kernel `cfg.kernel` gets active / capacity / rate; its level is cleared when cfg.clear or
//    !cfg.active, else kept (rate compensation: a new rate without losing the bucket's fill). A
//    configured bucket neither fills nor is granted in that cycle. cfg and advance may come together.
//  - Rate compensation (Liang: "we can compensate the leaky-bucket filling rate to ensure that the
//    actual allocation meets the desired allocation considering latency variation"): the policy
//    writes rate_k proportional to share_k / (mean thread-block time of k).
//
// Shares: with rate_k = share_k and capacity = sum of the shares for every bucket, kernel k is granted
// share_k / sum of shares of all grants, exactly one grant per cycle after start-up, in integers
// (no rounding drift). Outputs are Mealy (from the state before the edge and the cycle's inputs).
// Protocol violations (kernel index out of range) throw std::invalid_argument and change nothing.

#include <cstdint>
#include <vector>

namespace gpumux {

class LeakyBucketReference {
 public:
  static constexpr std::uint32_t kFracBits = 8;  ///< fixed-point convention: 1.0 = 256

  struct Config {
    std::uint32_t num_kernels = 4;  ///< buckets
    std::uint32_t level_bits = 24;  ///< width of level, capacity and rate; 2..32
  };

  struct Configure {
    bool valid = false;
    std::uint32_t kernel = 0;
    bool active = false;
    bool clear = false;  ///< empty the bucket (a new kernel); else keep its level
    std::uint32_t capacity = 0;
    std::uint32_t rate = 0;
  };

  struct Inputs {
    bool advance = false;  ///< one interleaving cycle: fill, grant
    Configure cfg;

    static Inputs none() { return {}; }
    static Inputs tick() { return {true, {}}; }
    static Inputs configure(std::uint32_t kernel, bool active, std::uint32_t capacity, std::uint32_t rate,
                            bool clear, bool advance = false) {
      return {advance, {true, kernel, active, clear, capacity, rate}};
    }
  };

  struct Outputs {
    bool grant_valid = false;
    std::uint32_t grant_kernel = 0;  ///< 0 when !grant_valid
  };

  struct Bucket {
    bool active = false;
    std::uint32_t capacity = 0;
    std::uint32_t rate = 0;
    std::uint32_t level = 0;
  };

  /// Throws std::invalid_argument on an invalid configuration.
  explicit LeakyBucketReference(const Config& config);

  void reset();
  Outputs step(const Inputs& in);

  [[nodiscard]] const Config& config() const { return config_; }
  [[nodiscard]] std::uint32_t num_kernels() const { return config_.num_kernels; }
  [[nodiscard]] std::uint32_t level_max() const { return level_max_; }
  [[nodiscard]] const Bucket& bucket(std::uint32_t k) const { return buckets_.at(k); }
  [[nodiscard]] const std::vector<Bucket>& buckets() const { return buckets_; }
  [[nodiscard]] std::uint64_t grants() const { return grants_; }

 private:
  Config config_;
  std::uint32_t level_max_ = 0;
  std::vector<Bucket> buckets_;
  std::uint64_t grants_ = 0;
};

}  // namespace gpumux
