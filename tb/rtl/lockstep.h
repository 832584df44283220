#pragma once
// LockstepPair<Ref, Rtl>: a C++ reference model and its Verilated block (a plain C++ top such as
// DssRtl or LeakyBucketRtl) clocked together by a cross-check. It holds the pair, counts the cycles
// that agreed and keeps the report of the first disagreement; each block's driver derives from it and
// supplies step(), which compares what that block exposes.

#include <cstdint>
#include <optional>
#include <string>

namespace gpumux::rtl {

template <class Ref, class Rtl>
class LockstepPair {
 public:
  /// `wave`: VCD file for the RTL (empty: none).
  LockstepPair(const typename Ref::Config& config, const std::string& wave)
      : ref_(config), rtl_(config, wave) {}

  void reset() {
    ref_.reset();
    rtl_.reset();
    cycle_ = 0;
  }

  /// --inject-mismatch: in cycle `cycle` of the next scenario (counted from its reset) the reference
  /// model's outputs, as compared and shown in the wave, are altered (nullopt: none).
  void inject_at(std::optional<std::uint64_t> cycle) { inject_ = cycle; }

  [[nodiscard]] const Ref& ref() const { return ref_; }
  /// The report of the first disagreement (empty while they agree).
  [[nodiscard]] const std::string& failure() const { return failure_; }
  /// Cycles that agreed.
  [[nodiscard]] std::uint64_t cycle() const { return cycle_; }
  /// The reference model's outputs in the last cycle.
  [[nodiscard]] const typename Ref::Outputs& last() const { return last_; }

 protected:
  /// Records the disagreement of this cycle (parameters, inputs, both outputs, what differs); false.
  bool disagree(const std::string& parameters, const std::string& inputs, const std::string& ref_out,
                const std::string& rtl_out, const std::string& diff) {
    failure_ = parameters + "\n  cycle " + std::to_string(cycle_) + " (in the --wave VCD at " +
               std::to_string(rtl_.mismatch_ps()) + " ps, where mismatch goes to 1): inputs " + inputs +
               "\n  reference: " + ref_out + "\n  RTL:       " + rtl_out + "\n  " + diff;
    return false;
  }
  /// This cycle agreed; true.
  bool agree() {
    ++cycle_;
    return true;
  }

  /// The injected mismatch falls in this cycle.
  [[nodiscard]] bool injecting() const { return inject_ && *inject_ == cycle_; }

  Ref ref_;
  Rtl rtl_;
  std::uint64_t cycle_ = 0;
  std::string failure_;
  typename Ref::Outputs last_{};
  std::optional<std::uint64_t> inject_;
};

}  // namespace gpumux::rtl
