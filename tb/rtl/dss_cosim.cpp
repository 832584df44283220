// Co-simulation (GPUMUX_COSIM_RTL): the Verilated rtl/dss_token_policy.sv as the DSS policy's decision
// logic (DssImplementation, policy/dss.h). Linked into gpumux-cosim-rtl, where cosim_main.cpp installs
// the factory, and into gpumux_rtl_tests, which drives every built variant through it. One Verilated
// model (testbench top tb/rtl/dss_token_policy_tb.sv) per parameter set of the shipped GPU
// configurations and per search parallelism (EntriesPerCycle) built for it.
//
// The RTL's waveform is on the SystemC model's time axis: the RTL is clocked at the GPU's core clock
// and only while the policy steps it, each batch of events from the first core clock edge at or after
// the model time of the policy hook (sc_time_stamp(), ps), right after the previous batch when that
// has not ended yet. The model applies a decision at its hook's time (the search costs no simulated
// time, policy/dss.h); the RTL shows it as many core cycles later as the search took. The testbench
// top's model_time carries the hook's time, its exp_* the reference model's values, mismatch the
// cycles where they differ.

#include "dss_cosim.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "Vdss_gtx480.h"
#include "Vdss_gtx480_p15.h"
#include "Vdss_gtx480_p4.h"
#include "Vdss_k20c.h"
#include "Vdss_k20c_p13.h"
#include "Vdss_k20c_p2.h"
#include "Vdss_k20c_p5.h"
#include "core/error.h"
#include "dss_check.h"
#include "dss_rtl.h"

namespace gpumux::rtl {

namespace {

template <class V>
class RtlImplementation final : public DssImplementation {
 public:
  RtlImplementation(const DssReference::Config& config, const std::string& wave, Timebase timebase)
      : rtl_(config, wave, std::move(timebase)), expected_(config) {}

  DssReference::Outputs step(const DssReference::Inputs& in, const DssReference& reference) override {
    // The policy's reference model has been stepped with `in` but does not hand out its outputs; a
    // second one, stepped with the same events, gives them for the wave's expected outputs.
    const DssReference::Outputs expected = expected_.step(in);
    std::string tables;
    const DssReference::Outputs out = rtl_.step(in, reference, expected, [&](const DssReference::Outputs& o) {
      const DssSnapshot snap = rtl_.snapshot(o);
      if (compare(reference, expected, snap).empty()) return false;
      // The policy compares the outputs itself; the tables after the edge are checked here.
      tables = compare(reference, o, snap);
      return true;
    });
    if (rtl_.assertion_failed()) {
      throw std::logic_error("an RTL assertion failed in cycle " + std::to_string(cycle_));
    }
    if (!tables.empty()) throw std::logic_error("RTL cycle " + std::to_string(cycle_) + ": " + tables);
    ++cycle_;
    return out;
  }

 private:
  DssRtl<V> rtl_;
  DssReference expected_;
  std::uint64_t cycle_ = 0;
};

bool matches(const DssReference::Config& c, std::uint32_t sms, std::uint32_t slots, std::uint32_t bits,
             std::uint32_t per_cycle) {
  return c.num_sms == sms && c.num_slots == slots && c.token_bits == bits && c.start_on_preempt_done &&
         c.entries_per_cycle == per_cycle;
}

std::unique_ptr<DssImplementation> make_implementation(const DssReference::Config& c, const std::string& wave,
                                                       const Timebase& timebase) {
  // Must match the verilate() calls in tb/rtl/CMakeLists.txt (the k20c and gtx480 sets).
  if (matches(c, 13, 13, 8, 1)) return std::make_unique<RtlImplementation<Vdss_k20c>>(c, wave, timebase);
  if (matches(c, 13, 13, 8, 2)) return std::make_unique<RtlImplementation<Vdss_k20c_p2>>(c, wave, timebase);
  if (matches(c, 13, 13, 8, 5)) return std::make_unique<RtlImplementation<Vdss_k20c_p5>>(c, wave, timebase);
  if (matches(c, 13, 13, 8, 13)) return std::make_unique<RtlImplementation<Vdss_k20c_p13>>(c, wave, timebase);
  if (matches(c, 15, 8, 8, 1)) return std::make_unique<RtlImplementation<Vdss_gtx480>>(c, wave, timebase);
  if (matches(c, 15, 8, 8, 4)) return std::make_unique<RtlImplementation<Vdss_gtx480_p4>>(c, wave, timebase);
  if (matches(c, 15, 8, 8, 15)) {
    return std::make_unique<RtlImplementation<Vdss_gtx480_p15>>(c, wave, timebase);
  }
  throw InputError(
      "no Verilated dss_token_policy for " + describe_config(c) +
      " (built: NumSms=13 NumSlots=13 TokenW=8 with EntriesPerCycle 1, 2, 5 or 13, and NumSms=15 "
      "NumSlots=8 TokenW=8 with EntriesPerCycle 1, 4 or 15; StartOnPreemptDone=1)");
}

}  // namespace

std::unique_ptr<DssImplementation> make_dss_rtl_implementation(const DssReference::Config& config) {
  return make_implementation(config, {}, Timebase{});
}

void install_dss_cosimulation(const std::string& wave, double core_clock_mhz,
                              std::function<std::uint64_t()> now) {
  const Timebase timebase{core_clock_mhz, std::move(now)};
  set_dss_implementation_factory(
      [wave, timebase](const DssReference::Config& c) { return make_implementation(c, wave, timebase); });
}

}  // namespace gpumux::rtl
