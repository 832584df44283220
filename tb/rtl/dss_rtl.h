#pragma once
// DssRtl<V>: a plain C++ top for the Verilated rtl/dss_token_policy.sv, with the cycle-level
// interface of the reference model (gpumux::DssReference): step(Inputs) -> Outputs is one clock, and
// the KSRT / SMST read ports give the same Slot / Sm views. One VerilatedContext per instance.
//
// Clocking: in each step the event is applied with the clock low and the combinational logic settled,
// the (Mealy) outputs are sampled, then the rising edge updates the registers. The table views read
// after step() are therefore the state after the edge, as DssReference::slot() / sm() are.

#include <verilated.h>
#include <verilated_vcd_c.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
      : config_(config), context_(std::make_unique<VerilatedContext>()) {
    context_->debug(0);
    context_->fatalOnError(false);  // a failed RTL assertion is reported by the test, not abort()
    if (!wave.empty()) context_->traceEverOn(true);
    top_ = std::make_unique<V>(context_.get(), "dss_token_policy");
    slot_w_ = width_for(config.num_slots);
    if (!wave.empty()) {
      trace_ = std::make_unique<VerilatedVcdC>();
      top_->trace(trace_.get(), 99);
      trace_->open(wave.c_str());
    }
    reset();
  }
  DssRtl(const DssRtl&) = delete;
  DssRtl& operator=(const DssRtl&) = delete;
  ~DssRtl() {
    top_->final();
    if (trace_) trace_->close();
  }

  /// Asynchronous reset for one cycle; leaves the clock low.
  void reset() {
    set_event(DssReference::Inputs::none());
    top_->clk_i = 0;
    top_->rst_ni = 0;
    eval_and_dump();
    top_->clk_i = 1;
    eval_and_dump();
    top_->clk_i = 0;
    top_->rst_ni = 1;
    eval_and_dump();
  }

  /// One clock cycle with the event `in`.
  DssReference::Outputs step(const DssReference::Inputs& in) {
    set_event(in);
    top_->clk_i = 0;
    eval_and_dump();
    DssReference::Outputs out;
    out.assign.valid = top_->assign_valid_o != 0;
    out.assign.sm = static_cast<std::uint32_t>(top_->assign_sm_o);
    out.assign.slot = static_cast<std::uint32_t>(top_->assign_slot_o);
    out.reserve.valid = top_->reserve_valid_o != 0;
    out.reserve.sm = static_cast<std::uint32_t>(top_->reserve_sm_o);
    out.reserve.next_slot = static_cast<std::uint32_t>(top_->reserve_next_o);
    out.busy = top_->busy_o != 0;
    top_->clk_i = 1;
    eval_and_dump();
    ++cycles_;
    return out;
  }

  [[nodiscard]] DssReference::Slot slot(std::uint32_t i) const {
    DssReference::Slot s;
    s.valid = get_bits(top_->slot_valid_o, i, 1) != 0;
    s.tokens = static_cast<std::int32_t>(sign_extend(
        get_bits(top_->slot_tokens_o, i * config_.token_bits, config_.token_bits), config_.token_bits));
    s.has_tbs = get_bits(top_->slot_has_tbs_o, i, 1) != 0;
    return s;
  }

  [[nodiscard]] DssReference::Sm sm(std::uint32_t i) const {
    DssReference::Sm m;
    m.state = static_cast<DssReference::SmState>(get_bits(top_->sm_state_o, i * 2, 2));
    m.kernel_valid = get_bits(top_->sm_kernel_valid_o, i, 1) != 0;
    m.kernel = static_cast<std::uint32_t>(get_bits(top_->sm_kernel_o, i * slot_w_, slot_w_));
    m.next_valid = get_bits(top_->sm_next_valid_o, i, 1) != 0;
    m.next = static_cast<std::uint32_t>(get_bits(top_->sm_next_o, i * slot_w_, slot_w_));
    return m;
  }

  [[nodiscard]] DssSnapshot snapshot(const DssReference::Outputs& out) const {
    DssSnapshot snap;
    snap.out = out;
    for (std::uint32_t i = 0; i < config_.num_slots; ++i) snap.slots.push_back(slot(i));
    for (std::uint32_t i = 0; i < config_.num_sms; ++i) snap.sms.push_back(sm(i));
    return snap;
  }

  [[nodiscard]] bool busy() const { return top_->busy_o != 0; }
  [[nodiscard]] std::uint64_t cycles() const { return cycles_; }
  [[nodiscard]] const DssReference::Config& config() const { return config_; }
  /// An RTL assertion ($error / $fatal) fired.
  [[nodiscard]] bool assertion_failed() const { return context_->gotError(); }

 private:
  static unsigned width_for(std::uint32_t entries) {
    unsigned w = 1;
    while ((std::uint64_t{1} << w) < entries) ++w;
    return w;
  }

  void set_event(const DssReference::Inputs& in) {
    set_port(top_->event_kind_i, static_cast<unsigned>(in.kind));
    set_port(top_->event_index_i, in.index);
    set_port(top_->event_tokens_i, static_cast<std::uint32_t>(in.tokens));
    set_port(top_->event_flag_i, in.flag ? 1U : 0U);
  }

  void eval_and_dump() {
    top_->eval();
    if (trace_) trace_->dump(context_->time());
    context_->timeInc(1);
  }

  DssReference::Config config_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<V> top_;
  std::unique_ptr<VerilatedVcdC> trace_;
  unsigned slot_w_ = 1;
  std::uint64_t cycles_ = 0;
};

}  // namespace gpumux::rtl
