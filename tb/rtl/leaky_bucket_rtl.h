#pragma once
// LeakyBucketRtl<V>: a plain C++ top for the Verilated rtl/leaky_bucket.sv with the cycle-level
// interface of gpumux::LeakyBucketReference (step(Inputs) -> Outputs is one clock; bucket() reads
// the active bit and level after the edge). One VerilatedContext per instance.

#include <cstdint>
#include <string>

#include "clocked_top.h"
#include "policy/leaky_bucket_reference.h"
#include "rtl_bits.h"

namespace gpumux::rtl {

template <class V>
class LeakyBucketRtl {
 public:
  /// `wave`: VCD file to dump every cycle into (empty: none).
  explicit LeakyBucketRtl(const LeakyBucketReference::Config& config, const std::string& wave = {})
      : config_(config), top_("leaky_bucket", wave) {
    reset();
  }

  /// Asynchronous reset for one cycle; leaves the clock low.
  void reset() {
    set_inputs(LeakyBucketReference::Inputs::none());
    top_.reset();
  }

  /// One clock cycle with the inputs `in`.
  LeakyBucketReference::Outputs step(const LeakyBucketReference::Inputs& in) {
    set_inputs(in);
    top_.settle_low();
    LeakyBucketReference::Outputs out;
    out.grant_valid = top_.ports().grant_valid_o != 0;
    out.grant_kernel = static_cast<std::uint32_t>(top_.ports().grant_kernel_o);
    top_.rising_edge();
    return out;
  }

  /// Active bit and level (capacity and rate are not read out).
  [[nodiscard]] LeakyBucketReference::Bucket bucket(std::uint32_t k) const {
    LeakyBucketReference::Bucket b;
    b.active = get_bits(top_.ports().active_o, k, 1) != 0;
    b.level = static_cast<std::uint32_t>(
        get_bits(top_.ports().level_o, k * config_.level_bits, config_.level_bits));
    return b;
  }

  [[nodiscard]] bool assertion_failed() const { return top_.assertion_failed(); }

 private:
  void set_inputs(const LeakyBucketReference::Inputs& in) {
    V& p = top_.ports();
    set_port(p.advance_i, in.advance ? 1U : 0U);
    set_port(p.cfg_valid_i, in.cfg.valid ? 1U : 0U);
    set_port(p.cfg_kernel_i, in.cfg.kernel);
    set_port(p.cfg_active_i, in.cfg.active ? 1U : 0U);
    set_port(p.cfg_clear_i, in.cfg.clear ? 1U : 0U);
    set_port(p.cfg_capacity_i, in.cfg.capacity);
    set_port(p.cfg_rate_i, in.cfg.rate);
  }

  LeakyBucketReference::Config config_;
  ClockedTop<V> top_;
};

}  // namespace gpumux::rtl
