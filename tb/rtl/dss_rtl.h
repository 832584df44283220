#pragma once
// DssRtl<V>: a plain C++ top for the Verilated rtl/dss_token_policy.sv, with the cycle-level
// interface of the reference model (gpumux::DssReference): step(Inputs) -> Outputs is one clock, and
// the KSRT / SMST read ports give the same Slot / Sm views. One VerilatedContext per instance.
//
// Clocking: in each step the event is applied with the clock low and the combinational logic settled,
// the (Mealy) outputs are sampled, then the rising edge updates the registers. The table views read
// after step() are therefore the state after the edge, as DssReference::slot() / sm() are.

#include <cstdint>
#include <string>
#include <vector>

#include "clocked_top.h"
#include "policy/dss_encoding.h"
#include "policy/dss_reference.h"
#include "rtl_bits.h"

namespace gpumux::rtl {

/// The state and outputs of one cycle as the RTL shows them.
struct DssSnapshot {
  DssReference::Outputs out;
  std::vector<DssReference::Slot> slots;  ///< granted is not an RTL register: always 0
  std::vector<DssReference::Sm> sms;
};

template <class V>
class DssRtl {
 public:
  /// `wave`: VCD file to dump every cycle into (empty: none).
  explicit DssRtl(const DssReference::Config& config, const std::string& wave = {})
      : config_(config), top_("dss_token_policy", wave), slot_w_(width_for(config.num_slots)) {
    reset();
  }

  /// Asynchronous reset for one cycle; leaves the clock low.
  void reset() {
    set_event(DssReference::Inputs::none());
    top_.reset();
  }

  /// One clock cycle with the event `in`.
  DssReference::Outputs step(const DssReference::Inputs& in) {
    set_event(in);
    top_.settle_low();
    const V& p = top_.ports();
    DssReference::Outputs out;
    out.assign.valid = p.assign_valid_o != 0;
    out.assign.sm = static_cast<std::uint32_t>(p.assign_sm_o);
    out.assign.slot = static_cast<std::uint32_t>(p.assign_slot_o);
    out.reserve.valid = p.reserve_valid_o != 0;
    out.reserve.sm = static_cast<std::uint32_t>(p.reserve_sm_o);
    out.reserve.next_slot = static_cast<std::uint32_t>(p.reserve_next_o);
    out.busy = p.busy_o != 0;
    top_.rising_edge();
    ++cycles_;
    return out;
  }

  [[nodiscard]] DssReference::Slot slot(std::uint32_t i) const {
    DssReference::Slot s;
    const V& p = top_.ports();
    s.valid = get_bits(p.slot_valid_o, i, 1) != 0;
    s.tokens = static_cast<std::int32_t>(sign_extend(
        get_bits(p.slot_tokens_o, i * config_.token_bits, config_.token_bits), config_.token_bits));
    s.has_tbs = get_bits(p.slot_has_tbs_o, i, 1) != 0;
    return s;
  }

  [[nodiscard]] DssReference::Sm sm(std::uint32_t i) const {
    DssReference::Sm m;
    const V& p = top_.ports();
    m.state = static_cast<DssReference::SmState>(
        get_bits(p.sm_state_o, i * dss_encoding::kSmStateW, dss_encoding::kSmStateW));
    m.kernel_valid = get_bits(p.sm_kernel_valid_o, i, 1) != 0;
    m.kernel = static_cast<std::uint32_t>(get_bits(p.sm_kernel_o, i * slot_w_, slot_w_));
    m.next_valid = get_bits(p.sm_next_valid_o, i, 1) != 0;
    m.next = static_cast<std::uint32_t>(get_bits(p.sm_next_o, i * slot_w_, slot_w_));
    return m;
  }

  [[nodiscard]] DssSnapshot snapshot(const DssReference::Outputs& out) const {
    DssSnapshot snap;
    snap.out = out;
    for (std::uint32_t i = 0; i < config_.num_slots; ++i) snap.slots.push_back(slot(i));
    for (std::uint32_t i = 0; i < config_.num_sms; ++i) snap.sms.push_back(sm(i));
    return snap;
  }

  [[nodiscard]] bool busy() const { return top_.ports().busy_o != 0; }
  [[nodiscard]] std::uint64_t cycles() const { return cycles_; }
  [[nodiscard]] const DssReference::Config& config() const { return config_; }
  /// An RTL assertion ($error / $fatal) fired.
  [[nodiscard]] bool assertion_failed() const { return top_.assertion_failed(); }

 private:
  static unsigned width_for(std::uint32_t entries) {
    unsigned w = 1;
    while ((std::uint64_t{1} << w) < entries) ++w;
    return w;
  }

  void set_event(const DssReference::Inputs& in) {
    V& p = top_.ports();
    set_port(p.event_kind_i, static_cast<unsigned>(in.kind));
    set_port(p.event_index_i, in.index);
    set_port(p.event_tokens_i, static_cast<std::uint32_t>(in.tokens));
    set_port(p.event_flag_i, in.flag ? 1U : 0U);
  }

  DssReference::Config config_;
  ClockedTop<V> top_;
  unsigned slot_w_ = 1;
  std::uint64_t cycles_ = 0;
};

}  // namespace gpumux::rtl
