// gpumux-cosim-rtl: `gpumux run` with the Verilated rtl/dss_token_policy.sv deciding for the `dss`
// policy (co-simulation, CMake option GPUMUX_COSIM_RTL). Same options and outputs as `gpumux run`,
// plus --wave FILE (VCD of the RTL). The same run gives a byte-identical stats.json.
//
//   gpumux-cosim-rtl run --gpu FILE --workload FILE --policy dss [...] [--wave FILE]

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "core/error.h"
#include "dss_cosim.h"
#include "top/simulation.h"

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args.front() != "run") {
    std::cerr << "usage: gpumux-cosim-rtl run <gpumux run options> [--wave FILE]\n";
    return gpumux::kExitBadInput;
  }
  args.erase(args.begin());
  for (const auto& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::cout
          << "gpumux-cosim-rtl run: `gpumux run` with the Verilated rtl/dss_token_policy.sv deciding for\n"
             "the dss policy; stats.json is byte-identical to gpumux's. One extra option:\n"
             "  --wave FILE                        VCD waveform of the RTL block (every port and "
             "register)\n\n";
      break;
    }
  }
  std::string wave;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--wave") {
      if (i + 1 >= args.size()) {
        std::cerr << "gpumux-cosim-rtl: --wave needs a file\n";
        return gpumux::kExitBadInput;
      }
      wave = args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                 args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      break;
    }
  }
  try {
    gpumux::rtl::install_dss_cosimulation(wave);
    return gpumux::run_command(args);
  } catch (const gpumux::SimulationFailed& e) {
    std::cerr << "gpumux-cosim-rtl: simulation failed: " << e.what() << '\n';
    return gpumux::kExitInternal;
  } catch (const gpumux::InputError& e) {
    std::cerr << "gpumux-cosim-rtl: " << e.what() << '\n';
    return gpumux::kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gpumux-cosim-rtl: " << e.what() << '\n';
    return gpumux::kExitInternal;
  }
}
