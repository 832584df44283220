#pragma once
// Co-simulation of the DSS policy with the Verilated RTL (see dss_cosim.cpp).

#include <string>

#include "policy/dss.h"

namespace gpumux::rtl {

/// Every DssPolicy created from now on decides with the Verilated rtl/dss_token_policy.sv, checked
/// against DssReference in every cycle. `wave`: VCD file of the RTL (empty: none).
void install_dss_cosimulation(const std::string& wave);

}  // namespace gpumux::rtl
