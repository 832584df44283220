#pragma once
// LeakyBucketRtl<V>: a plain C++ top for the Verilated rtl/leaky_bucket.sv with the cycle-level
// interface of gpumux::LeakyBucketReference (step(Inputs) -> Outputs is one clock; bucket() reads
// the active bit and level after the edge). One VerilatedContext per instance. V is the testbench top
// tb/rtl/leaky_bucket_tb.sv, whose extra inputs put the reference model's expected grant and buckets
// and a mismatch marker into the VCD beside the RTL's signals, or the bare block.

#include <cstdint>
#include <string>
#include <utility>

#include "clocked_top.h"
#include "policy/leaky_bucket_reference.h"
#include "rtl_bits.h"
#include "rtl_gtkwave.h"

namespace gpumux::rtl {

template <class V>
class LeakyBucketRtl {
 public:
  static constexpr bool kTestbench = HasTestbenchPorts<V>::value;

  /// `wave`: VCD file to dump every cycle into (empty: none).
  explicit LeakyBucketRtl(const LeakyBucketReference::Config& config, const std::string& wave = {})
      : config_(config), top_("leaky_bucket", wave) {
    // The GTKWave save file beside the VCD (tb/rtl/rtl_gtkwave.h).
    if constexpr (kTestbench) {
      if (!wave.empty()) write_leaky_bucket_gtkwave(wave, config);
    }
    reset();
  }

  /// Asynchronous reset for one cycle; leaves the clock low.
  void reset() {
    set_inputs(LeakyBucketReference::Inputs::none());
    mark(false, 0);
    if constexpr (kTestbench) {
      if (top_.tracing()) {  // the wave expects the reference model's state after its reset
        set_expected(LeakyBucketReference::Outputs{}, LeakyBucketReference(config_));
      }
    }
    top_.reset();
  }

  /// One clock cycle with the inputs `in`.
  LeakyBucketReference::Outputs step(const LeakyBucketReference::Inputs& in) {
    return run_cycle(in, nullptr, LeakyBucketReference::Outputs{},
                     [](const LeakyBucketReference::Outputs&) { return false; });
  }

  /// One clock cycle with the reference model beside the RTL: `ref` has been stepped with `in` and gave
  /// `expected`; after the edge `check(the RTL's outputs)` says whether the RTL differs (it may read
  /// bucket()). On the testbench top the VCD shows `expected` with the RTL's grant from the cycle's
  /// start, `ref`'s buckets with the RTL's after the edge, and `mismatch`: 1 from the cycle's start when
  /// the grant differs, from the edge when `check` finds a difference.
  template <class Check>
  LeakyBucketReference::Outputs step(const LeakyBucketReference::Inputs& in, const LeakyBucketReference& ref,
                                     const LeakyBucketReference::Outputs& expected, Check&& check) {
    return run_cycle(in, &ref, expected, std::forward<Check>(check));
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
  /// VCD time (ps) at which the mismatch marker last went to 1: the start of the cycle when the
  /// grant differs, its rising edge when only the buckets (or a check after the edge) do.
  [[nodiscard]] std::uint64_t mismatch_ps() const { return mismatch_ps_; }

 private:
  void set_expected_grant(const LeakyBucketReference::Outputs& expected) {
    set_port(top_.ports().exp_grant_valid, expected.grant_valid ? 1U : 0U);
    set_port(top_.ports().exp_grant_kernel, expected.grant_kernel);
  }

  void set_expected_buckets(const LeakyBucketReference& ref) {
    V& p = top_.ports();
    for (std::uint32_t k = 0; k < config_.num_kernels; ++k) {
      const LeakyBucketReference::Bucket& b = ref.bucket(k);
      put_bits(p.exp_active, k, 1, b.active ? 1U : 0U);
      put_bits(p.exp_level, k * config_.level_bits, config_.level_bits, b.level);
    }
  }

  void set_expected(const LeakyBucketReference::Outputs& expected, const LeakyBucketReference& ref) {
    set_expected_grant(expected);
    set_expected_buckets(ref);
  }

  /// The mismatch marker of this cycle from `ps` on (the time kept when it first goes to 1).
  void mark(bool mismatch, std::uint64_t ps) {
    if (mismatch && !marked_) mismatch_ps_ = ps;
    marked_ = mismatch;
    if constexpr (kTestbench) {
      if (top_.tracing()) set_port(top_.ports().mismatch, mismatch ? 1U : 0U);
    }
  }

  template <class Check>
  LeakyBucketReference::Outputs run_cycle(const LeakyBucketReference::Inputs& in,
                                          const LeakyBucketReference* ref,
                                          const LeakyBucketReference::Outputs& expected, Check&& check) {
    set_inputs(in);
    if constexpr (kTestbench) {
      if (ref != nullptr && top_.tracing()) set_expected_grant(expected);
    }
    LeakyBucketReference::Outputs out;
    top_.settle_low([&] {
      out.grant_valid = top_.ports().grant_valid_o != 0;
      out.grant_kernel = static_cast<std::uint32_t>(top_.ports().grant_kernel_o);
      // A differing grant is marked where it shows, at the cycle's start.
      if (ref != nullptr) {
        mark(out.grant_valid != expected.grant_valid || out.grant_kernel != expected.grant_kernel,
             top_.cycle_ps());
      }
    });
    top_.rising_edge([&] {
      const bool mismatch = check(out);
      if constexpr (kTestbench) {
        if (ref != nullptr && top_.tracing()) set_expected_buckets(*ref);
      }
      if (ref != nullptr) mark(mismatch, top_.edge_ps());
    });
    return out;
  }

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
  bool marked_ = false;
  std::uint64_t mismatch_ps_ = 0;
};

}  // namespace gpumux::rtl
