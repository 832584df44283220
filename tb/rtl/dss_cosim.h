#pragma once
// Co-simulation of the DSS policy with the Verilated RTL (see dss_cosim.cpp).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "policy/dss.h"

namespace gpumux::rtl {

/// Every DssPolicy created from now on decides with the Verilated rtl/dss_token_policy.sv, checked
/// against DssReference in every cycle. `wave`: VCD file of the RTL (empty: none), on the model's time
/// axis: one RTL cycle per period of the GPU's core clock (`core_clock_mhz`), each batch of the
/// policy's events from the first clock edge at or after the model time of its hook (`now`, ps:
/// sc_time_stamp(), read in cosim_main.cpp, since Verilator's headers must not see SystemC's).
void install_dss_cosimulation(const std::string& wave, double core_clock_mhz,
                              std::function<std::uint64_t()> now);

/// The implementation install_dss_cosimulation's factory builds for `config` (no wave): the Verilated
/// block of the same parameters, search parallelism (entries_per_cycle) included. InputError when no
/// such model is built (tb/rtl/CMakeLists.txt lists them).
std::unique_ptr<DssImplementation> make_dss_rtl_implementation(const DssReference::Config& config);

}  // namespace gpumux::rtl
