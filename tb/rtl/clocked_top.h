#pragma once
// ClockedTop<V>: what every plain C++ top of a Verilated block in tb/rtl needs, whatever its ports:
// one VerilatedContext per instance (tests stay independent), an optional VCD of every port and
// register, an asynchronous reset and the two halves of a clock cycle. The block's own wrapper
// (DssRtl, LeakyBucketRtl) sets the inputs, samples the (Mealy) outputs between the halves and
// reads the tables out after the edge.
//
// Time axis (the VCD's, 1 ps timescale, and the context's $time): cycle c of the clock occupies
// [ps_of(c), ps_of(c + 1)) on the grid of gpumux::CoreClock (the warp-level SMs' grid): the inputs are
// applied with the clock low at ps_of(c), the rising edge comes half a period later. Cycles follow
// each other back to back; with a Timebase::now (co-simulation), a cycle starts no earlier than the
// first edge at or after the model's time, so the RTL's cycles sit on the SystemC model's time axis
// and the RTL is silent (no dump) while it is not clocked.
//
// A testbench top with a `model_time` input gets the model's time (ps) of every cycle there.
//
// Requires the block's clock and reset to be named clk_i and rst_ni (lowRISC style).

#include <verilated.h>
#include <verilated_vcd_c.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "sm/warp/core_clock.h"

namespace gpumux::rtl {

/// True for a testbench top (tb/rtl/*_tb.sv) with the testbench-only inputs for the waveform
/// (expected values, `mismatch`); false for a bare block (scripts/rtl-report's Vdss).
template <class V, class = void>
struct HasTestbenchPorts : std::false_type {};
template <class V>
struct HasTestbenchPorts<V, std::void_t<decltype(std::declval<V&>().mismatch)>> : std::true_type {};
/// True for a testbench top with a `model_time` input (the DSS one), which gets the model's time.
template <class V, class = void>
struct HasModelTime : std::false_type {};
template <class V>
struct HasModelTime<V, std::void_t<decltype(std::declval<V&>().model_time)>> : std::true_type {};

/// Where a ClockedTop's cycles sit in time.
struct Timebase {
  double clock_mhz = 1000.0;  ///< the clock; cross-checks: 1 GHz, 1 ns per cycle
  /// Co-simulation: the model's current time in ps; a cycle starts at the first clock edge at or after
  /// it (and after the previous cycle). Empty: cycles back to back from time 0.
  std::function<std::uint64_t()> now;
};

template <class V>
class ClockedTop {
 public:
  /// `name`: the instance name in the VCD; `wave`: VCD file to dump every edge into (empty: none).
  ClockedTop(const char* name, const std::string& wave, Timebase timebase = {})
      : context_(std::make_unique<VerilatedContext>()),
        clock_(timebase.clock_mhz),
        now_(std::move(timebase.now)) {
    context_->debug(0);
    context_->fatalOnError(false);  // a failed RTL assertion is reported by the test, not abort()
    if (!wave.empty()) context_->traceEverOn(true);
    top_ = std::make_unique<V>(context_.get(), name);
    if (!wave.empty()) {
      trace_ = std::make_unique<VerilatedVcdC>();
      top_->trace(trace_.get(), 99);
      trace_->set_time_resolution("1ps");
      trace_->set_time_unit("1ps");
      trace_->open(wave.c_str());
    }
  }
  ClockedTop(const ClockedTop&) = delete;
  ClockedTop& operator=(const ClockedTop&) = delete;
  ~ClockedTop() {
    top_->final();
    if (trace_) {
      // The last cycle keeps its width in a viewer: one more time point, at the next cycle's start.
      trace_->dump(clock_.ps_of(next_cycle_));
      trace_->close();
    }
  }

  /// Asynchronous reset held over one rising edge, in a cycle of its own (the first of the time axis
  /// when it is the first reset: the RTL comes out of reset at time 0, before any model event). The
  /// caller sets the inputs to their idle values first; reset is released with the next cycle.
  void reset() {
    begin_cycle(false);
    top_->rst_ni = 0;
    top_->clk_i = 0;
    eval_and_dump(low_ps_);
    top_->clk_i = 1;
    eval_and_dump(edge_ps_);
    release_reset_ = true;
  }

  /// First half of a cycle: clock low, the inputs just set propagate; outputs may be sampled after.
  /// `before_dump` runs after the evaluation and before the dump: it may sample the outputs and set
  /// testbench-only inputs, which then appear at the cycle's start in the VCD.
  template <class BeforeDump>
  void settle_low(BeforeDump&& before_dump) {
    begin_cycle(true);
    if (release_reset_) top_->rst_ni = 1;
    release_reset_ = false;
    top_->clk_i = 0;
    context_->time(low_ps_);
    top_->eval();
    before_dump();
    eval_and_dump(low_ps_);
  }
  void settle_low() {
    settle_low([] {});
  }

  /// Second half: the rising edge updates the registers. `before_dump` runs after the edge is
  /// evaluated and before it is dumped: it may read the registers and set testbench-only inputs
  /// (expected values, a mismatch marker), which then appear at the edge's time in the VCD.
  template <class BeforeDump>
  void rising_edge(BeforeDump&& before_dump) {
    top_->clk_i = 1;
    context_->time(edge_ps_);
    top_->eval();
    before_dump();
    eval_and_dump(edge_ps_);
  }
  void rising_edge() {
    rising_edge([] {});
  }

  [[nodiscard]] V& ports() { return *top_; }
  [[nodiscard]] const V& ports() const { return *top_; }
  /// A VCD is written (testbench-only inputs need not be set otherwise).
  [[nodiscard]] bool tracing() const { return trace_ != nullptr; }
  /// An RTL assertion ($error / $fatal) fired.
  [[nodiscard]] bool assertion_failed() const { return context_->gotError(); }
  /// Time (ps) of the current cycle's start (clock low, inputs applied) and of its rising edge.
  [[nodiscard]] std::uint64_t cycle_ps() const { return low_ps_; }
  [[nodiscard]] std::uint64_t edge_ps() const { return edge_ps_; }

 private:
  void begin_cycle(bool follow_model) {
    std::uint64_t cycle = next_cycle_;
    if (follow_model && now_) {
      const std::uint64_t model_ps = now_();
      cycle = std::max(cycle, clock_.cycle_at_or_after(model_ps));
      if constexpr (HasModelTime<V>::value) top_->model_time = model_ps;
    }
    next_cycle_ = cycle + 1;
    low_ps_ = clock_.ps_of(cycle);
    edge_ps_ = low_ps_ + (clock_.ps_of(cycle + 1) - low_ps_) / 2;
  }

  void eval_and_dump(std::uint64_t ps) {
    context_->time(ps);
    top_->eval();
    if (trace_) trace_->dump(ps);
  }

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<V> top_;
  std::unique_ptr<VerilatedVcdC> trace_;
  CoreClock clock_;
  std::function<std::uint64_t()> now_;
  std::uint64_t next_cycle_ = 0;
  std::uint64_t low_ps_ = 0;
  std::uint64_t edge_ps_ = 0;
  bool release_reset_ = false;
};

}  // namespace gpumux::rtl
