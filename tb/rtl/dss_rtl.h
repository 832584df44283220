#pragma once
// DssRtl<V>: a plain C++ top for the Verilated rtl/dss_token_policy.sv, with the cycle-level
// interface of the reference model (gpumux::DssReference): step(Inputs) -> Outputs is one clock, and
// the KSRT / SMST read ports give the same Slot / Sm views. One VerilatedContext per instance.
//
// Clocking: in each step the event is applied with the clock low and the combinational logic settled,
// the (Mealy) outputs are sampled, then the rising edge updates the registers. The table views read
// after step() are therefore the state after the edge, as DssReference::slot() / sm() are.
//
// V is either the testbench top tb/rtl/dss_token_policy_tb.sv (cross-checks, co-simulation), whose
// extra inputs put the reference model's expected outputs and tables, a mismatch marker and the
// model's time into the VCD beside the RTL's signals, or the bare block (scripts/rtl-report).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "clocked_top.h"
#include "policy/dss_encoding.h"
#include "policy/dss_reference.h"
#include "rtl_bits.h"
#include "rtl_gtkwave.h"

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
  static constexpr bool kTestbench = HasTestbenchPorts<V>::value;

  /// `wave`: VCD file to dump every cycle into (empty: none); `timebase`: where the cycles sit in it.
  explicit DssRtl(const DssReference::Config& config, const std::string& wave = {}, Timebase timebase = {})
      : config_(config),
        top_("dss_token_policy", wave, std::move(timebase)),
        slot_w_(width_for(config.num_slots)) {
    // The GTKWave save file and translate filters beside the VCD (tb/rtl/rtl_gtkwave.h).
    if constexpr (kTestbench) {
      if (!wave.empty()) write_dss_gtkwave(wave, config);
    }
    reset();
  }

  /// Asynchronous reset for one cycle; leaves the clock low.
  void reset() {
    set_event(DssReference::Inputs::none());
    mark(false, 0);
    if constexpr (kTestbench) {
      if (top_.tracing()) {  // the wave expects the reference model's state after its reset
        set_expected_outputs(DssReference::Outputs{});
        set_expected_tables(DssReference(config_));
      }
    }
    top_.reset();
  }

  /// One clock cycle with the event `in`.
  DssReference::Outputs step(const DssReference::Inputs& in) {
    return run_cycle(in, nullptr, DssReference::Outputs{},
                     [](const DssReference::Outputs&) { return false; });
  }

  /// One clock cycle with the event `in`, the reference model beside the RTL: `ref` has been stepped
  /// with `in` and gave `expected`. After the edge, `check(the RTL's outputs)` says whether the RTL
  /// differs (true: mismatch; it may read the tables, snapshot(outputs)). On the testbench top the
  /// VCD shows `expected` with the RTL's outputs from the cycle's start, `ref`'s tables with the RTL's
  /// after the edge, and `mismatch`: 1 from the cycle's start when the outputs differ, from the edge
  /// when `check` finds a difference.
  template <class Check>
  DssReference::Outputs step(const DssReference::Inputs& in, const DssReference& ref,
                             const DssReference::Outputs& expected, Check&& check) {
    return run_cycle(in, &ref, expected, std::forward<Check>(check));
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
  /// VCD time (ps) at which the mismatch marker last went to 1: the start of the cycle when the
  /// outputs differ, its rising edge when only the tables (or a check after the edge) do.
  [[nodiscard]] std::uint64_t mismatch_ps() const { return mismatch_ps_; }
  [[nodiscard]] std::uint64_t cycles() const { return cycles_; }
  [[nodiscard]] const DssReference::Config& config() const { return config_; }
  /// An RTL assertion ($error / $fatal) fired.
  [[nodiscard]] bool assertion_failed() const { return top_.assertion_failed(); }

 private:
  template <class Check>
  DssReference::Outputs run_cycle(const DssReference::Inputs& in, const DssReference* ref,
                                  const DssReference::Outputs& expected, Check&& check) {
    set_event(in);
    if constexpr (kTestbench) {
      if (ref != nullptr && top_.tracing()) set_expected_outputs(expected);
    }
    DssReference::Outputs out;
    top_.settle_low([&] {
      const V& p = top_.ports();
      out.assign.valid = p.assign_valid_o != 0;
      out.assign.sm = static_cast<std::uint32_t>(p.assign_sm_o);
      out.assign.slot = static_cast<std::uint32_t>(p.assign_slot_o);
      out.reserve.valid = p.reserve_valid_o != 0;
      out.reserve.sm = static_cast<std::uint32_t>(p.reserve_sm_o);
      out.reserve.next_slot = static_cast<std::uint32_t>(p.reserve_next_o);
      out.busy = p.busy_o != 0;
      // Differing outputs are marked where they show, at the cycle's start.
      if (ref != nullptr) mark(!same(out, expected), top_.cycle_ps());
    });
    top_.rising_edge([&] {
      const bool mismatch = check(out);
      if constexpr (kTestbench) {
        if (ref != nullptr && top_.tracing()) set_expected_tables(*ref);
      }
      if (ref != nullptr) mark(mismatch, top_.edge_ps());
    });
    ++cycles_;
    return out;
  }

  static bool same(const DssReference::Outputs& a, const DssReference::Outputs& b) {
    return a.busy == b.busy && a.assign.valid == b.assign.valid && a.assign.sm == b.assign.sm &&
           a.assign.slot == b.assign.slot && a.reserve.valid == b.reserve.valid &&
           a.reserve.sm == b.reserve.sm && a.reserve.next_slot == b.reserve.next_slot;
  }

  /// The mismatch marker of this cycle from `ps` on (the time kept when it first goes to 1).
  void mark(bool mismatch, std::uint64_t ps) {
    if (mismatch && !marked_) mismatch_ps_ = ps;
    marked_ = mismatch;
    if constexpr (kTestbench) {
      if (top_.tracing()) set_port(top_.ports().mismatch, mismatch ? 1U : 0U);
    }
  }

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

  void set_expected_outputs(const DssReference::Outputs& e) {
    V& p = top_.ports();
    set_port(p.exp_assign_valid, e.assign.valid ? 1U : 0U);
    set_port(p.exp_assign_sm, e.assign.sm);
    set_port(p.exp_assign_slot, e.assign.slot);
    set_port(p.exp_reserve_valid, e.reserve.valid ? 1U : 0U);
    set_port(p.exp_reserve_sm, e.reserve.sm);
    set_port(p.exp_reserve_next, e.reserve.next_slot);
    set_port(p.exp_busy, e.busy ? 1U : 0U);
  }

  void set_expected_tables(const DssReference& ref) {
    V& p = top_.ports();
    const unsigned tw = config_.token_bits;
    for (std::uint32_t i = 0; i < config_.num_slots; ++i) {
      const DssReference::Slot& s = ref.slot(i);
      put_bits(p.exp_slot_valid, i, 1, s.valid ? 1U : 0U);
      put_bits(p.exp_slot_tokens, i * tw, tw,
               static_cast<std::uint64_t>(static_cast<std::int64_t>(s.tokens)));
      put_bits(p.exp_slot_has_tbs, i, 1, s.has_tbs ? 1U : 0U);
    }
    const unsigned sw = dss_encoding::kSmStateW;
    for (std::uint32_t i = 0; i < config_.num_sms; ++i) {
      const DssReference::Sm& m = ref.sm(i);
      put_bits(p.exp_sm_state, i * sw, sw, static_cast<std::uint64_t>(m.state));
      put_bits(p.exp_sm_kernel_valid, i, 1, m.kernel_valid ? 1U : 0U);
      put_bits(p.exp_sm_kernel, i * slot_w_, slot_w_, m.kernel);
      put_bits(p.exp_sm_next_valid, i, 1, m.next_valid ? 1U : 0U);
      put_bits(p.exp_sm_next, i * slot_w_, slot_w_, m.next);
    }
  }

  DssReference::Config config_;
  ClockedTop<V> top_;
  unsigned slot_w_ = 1;
  std::uint64_t cycles_ = 0;
  bool marked_ = false;
  std::uint64_t mismatch_ps_ = 0;
};

}  // namespace gpumux::rtl
