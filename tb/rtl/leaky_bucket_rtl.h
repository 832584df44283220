#pragma once
// LeakyBucketRtl<V>: a plain C++ top for the Verilated rtl/leaky_bucket.sv with the cycle-level
// interface of gpumux::LeakyBucketReference (step(Inputs) -> Outputs is one clock; bucket() reads
// the active bit and level after the edge). One VerilatedContext per instance.

#include <verilated.h>
#include <verilated_vcd_c.h>

#include <cstdint>
#include <memory>
#include <string>

#include "policy/leaky_bucket_reference.h"
#include "rtl_bits.h"

namespace gpumux::rtl {

template <class V>
class LeakyBucketRtl {
 public:
  explicit LeakyBucketRtl(const LeakyBucketReference::Config& config, const std::string& wave = {})
      : config_(config), context_(std::make_unique<VerilatedContext>()) {
    context_->fatalOnError(false);
    if (!wave.empty()) context_->traceEverOn(true);
    top_ = std::make_unique<V>(context_.get(), "leaky_bucket");
    if (!wave.empty()) {
      trace_ = std::make_unique<VerilatedVcdC>();
      top_->trace(trace_.get(), 99);
      trace_->open(wave.c_str());
    }
    reset();
  }
  LeakyBucketRtl(const LeakyBucketRtl&) = delete;
  LeakyBucketRtl& operator=(const LeakyBucketRtl&) = delete;
  ~LeakyBucketRtl() {
    top_->final();
    if (trace_) trace_->close();
  }

  void reset() {
    set_inputs(LeakyBucketReference::Inputs::none());
    top_->clk_i = 0;
    top_->rst_ni = 0;
    eval_and_dump();
    top_->clk_i = 1;
    eval_and_dump();
    top_->clk_i = 0;
    top_->rst_ni = 1;
    eval_and_dump();
  }

  LeakyBucketReference::Outputs step(const LeakyBucketReference::Inputs& in) {
    set_inputs(in);
    top_->clk_i = 0;
    eval_and_dump();
    LeakyBucketReference::Outputs out;
    out.grant_valid = top_->grant_valid_o != 0;
    out.grant_kernel = static_cast<std::uint32_t>(top_->grant_kernel_o);
    top_->clk_i = 1;
    eval_and_dump();
    return out;
  }

  /// Active bit and level (capacity and rate are not read out).
  [[nodiscard]] LeakyBucketReference::Bucket bucket(std::uint32_t k) const {
    LeakyBucketReference::Bucket b;
    b.active = get_bits(top_->active_o, k, 1) != 0;
    b.level = static_cast<std::uint32_t>(get_bits(top_->level_o, k * config_.level_bits, config_.level_bits));
    return b;
  }

  [[nodiscard]] bool assertion_failed() const { return context_->gotError(); }

 private:
  void set_inputs(const LeakyBucketReference::Inputs& in) {
    set_port(top_->advance_i, in.advance ? 1U : 0U);
    set_port(top_->cfg_valid_i, in.cfg.valid ? 1U : 0U);
    set_port(top_->cfg_kernel_i, in.cfg.kernel);
    set_port(top_->cfg_active_i, in.cfg.active ? 1U : 0U);
    set_port(top_->cfg_clear_i, in.cfg.clear ? 1U : 0U);
    set_port(top_->cfg_capacity_i, in.cfg.capacity);
    set_port(top_->cfg_rate_i, in.cfg.rate);
  }

  void eval_and_dump() {
    top_->eval();
    if (trace_) trace_->dump(context_->time());
    context_->timeInc(1);
  }

  LeakyBucketReference::Config config_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<V> top_;
  std::unique_ptr<VerilatedVcdC> trace_;
};

}  // namespace gpumux::rtl
