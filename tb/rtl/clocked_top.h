#pragma once
// ClockedTop<V>: what every plain C++ top of a Verilated block in tb/rtl needs, whatever its ports:
// one VerilatedContext per instance (tests stay independent), an optional VCD of every port and
// register, an asynchronous reset and the two halves of a clock cycle. The block's own wrapper
// (DssRtl, LeakyBucketRtl) sets the inputs, samples the (Mealy) outputs between the halves and
// reads the tables out after the edge.
//
// Requires the block's clock and reset to be named clk_i and rst_ni (lowRISC style).

#include <verilated.h>
#include <verilated_vcd_c.h>

#include <memory>
#include <string>

namespace gpumux::rtl {

template <class V>
class ClockedTop {
 public:
  /// `name`: the instance name in the VCD; `wave`: VCD file to dump every edge into (empty: none).
  ClockedTop(const char* name, const std::string& wave) : context_(std::make_unique<VerilatedContext>()) {
    context_->debug(0);
    context_->fatalOnError(false);  // a failed RTL assertion is reported by the test, not abort()
    if (!wave.empty()) context_->traceEverOn(true);
    top_ = std::make_unique<V>(context_.get(), name);
    if (!wave.empty()) {
      trace_ = std::make_unique<VerilatedVcdC>();
      top_->trace(trace_.get(), 99);
      trace_->open(wave.c_str());
    }
  }
  ClockedTop(const ClockedTop&) = delete;
  ClockedTop& operator=(const ClockedTop&) = delete;
  ~ClockedTop() {
    top_->final();
    if (trace_) trace_->close();
  }

  /// Asynchronous reset held over one rising edge; leaves the clock low and reset released. The
  /// caller sets the inputs to their idle values first.
  void reset() {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    eval_and_dump();
    top_->clk_i = 1;
    eval_and_dump();
    top_->clk_i = 0;
    top_->rst_ni = 1;
    eval_and_dump();
  }

  /// First half of a cycle: clock low, the inputs just set propagate; outputs may be sampled after.
  void settle_low() {
    top_->clk_i = 0;
    eval_and_dump();
  }

  /// Second half: the rising edge updates the registers.
  void rising_edge() {
    top_->clk_i = 1;
    eval_and_dump();
  }

  [[nodiscard]] V& ports() { return *top_; }
  [[nodiscard]] const V& ports() const { return *top_; }
  /// An RTL assertion ($error / $fatal) fired.
  [[nodiscard]] bool assertion_failed() const { return context_->gotError(); }

 private:
  void eval_and_dump() {
    top_->eval();
    if (trace_) trace_->dump(context_->time());
    context_->timeInc(1);
  }

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<V> top_;
  std::unique_ptr<VerilatedVcdC> trace_;
};

}  // namespace gpumux::rtl
