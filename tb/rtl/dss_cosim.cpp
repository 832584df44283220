// Co-simulation (GPUMUX_COSIM_RTL): the Verilated rtl/dss_token_policy.sv as the DSS policy's decision
// logic (DssImplementation, policy/dss.h). Linked into gpumux-cosim-rtl only; cosim_main.cpp installs
// the factory. One Verilated model per parameter set of the shipped GPU configurations.

#include "dss_cosim.h"

#include <stdexcept>
#include <string>

#include "Vdss_gtx480.h"
#include "Vdss_k20c.h"
#include "core/error.h"
#include "dss_check.h"
#include "dss_rtl.h"

namespace gpumux::rtl {

namespace {

template <class V>
class RtlImplementation final : public DssImplementation {
 public:
  RtlImplementation(const DssReference::Config& config, const std::string& wave) : rtl_(config, wave) {}

  DssReference::Outputs step(const DssReference::Inputs& in, const DssReference& reference) override {
    const DssReference::Outputs out = rtl_.step(in);
    if (rtl_.assertion_failed()) {
      throw std::logic_error("an RTL assertion failed in cycle " + std::to_string(cycle_));
    }
    // The tables after the edge must be the reference's; the policy compares the outputs itself, so
    // they are passed as the expected ones here.
    const std::string diff = compare(reference, out, rtl_.snapshot(out));
    if (!diff.empty()) throw std::logic_error("RTL cycle " + std::to_string(cycle_) + ": " + diff);
    ++cycle_;
    return out;
  }

 private:
  DssRtl<V> rtl_;
  std::uint64_t cycle_ = 0;
};

bool matches(const DssReference::Config& c, std::uint32_t sms, std::uint32_t slots, std::uint32_t bits) {
  return c.num_sms == sms && c.num_slots == slots && c.token_bits == bits && c.start_on_preempt_done;
}

}  // namespace

void install_dss_cosimulation(const std::string& wave) {
  set_dss_implementation_factory([wave](const DssReference::Config& c) -> std::unique_ptr<DssImplementation> {
    // Must match the verilate() calls of gpumux-cosim-rtl in tb/rtl/CMakeLists.txt.
    if (matches(c, 13, 13, 8)) return std::make_unique<RtlImplementation<Vdss_k20c>>(c, wave);
    if (matches(c, 15, 8, 8)) return std::make_unique<RtlImplementation<Vdss_gtx480>>(c, wave);
    throw InputError("no Verilated dss_token_policy for " + describe_config(c) +
                     " (built: NumSms=13 NumSlots=13 TokenW=8 and NumSms=15 NumSlots=8 TokenW=8, "
                     "StartOnPreemptDone=1)");
  });
}

}  // namespace gpumux::rtl
