// gpumux-cosim-rtl: `gpumux run` with the Verilated rtl/dss_token_policy.sv deciding for the `dss`
// policy (co-simulation, CMake option GPUMUX_COSIM_RTL). Same options and outputs as `gpumux run`,
// plus --wave FILE (VCD of the RTL, on the model's time axis at the GPU's core clock: a decision sits
// beside the model VCD's change for it). The same run gives a byte-identical stats.json.
//
//   gpumux-cosim-rtl run --gpu FILE --workload FILE --policy dss [...] [--wave FILE]

#include <systemc>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "app/run_record.h"
#include "config/gpu_loader.h"
#include "core/error.h"
#include "dss_cosim.h"
#include "top/simulation.h"

namespace {

/// The value of `--name VALUE` or `--name=VALUE` in `args` (empty: not given).
std::string option_value(const std::vector<std::string>& args, const std::string& name) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) return args[i + 1];
    if (args[i].rfind(name + "=", 0) == 0) return args[i].substr(name.size() + 1);
  }
  return {};
}

/// The core clock of the run's GPU (--gpu FILE, or the GPU file a --replay stats.json names): the RTL
/// wave's clock. InputError when neither is given.
double core_clock_mhz(const std::vector<std::string>& args) {
  std::string gpu = option_value(args, "--gpu");
  if (const std::string replay = option_value(args, "--replay"); gpu.empty() && !replay.empty()) {
    gpu = gpumux::read_recorded_run(replay).gpu_file;
  }
  if (gpu.empty()) {
    throw gpumux::InputError("--wave: the RTL's clock is the GPU's; give --gpu FILE or --replay STATS");
  }
  return gpumux::load_gpu_config(gpu).core_clock_mhz;
}

}  // namespace

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
             "  --wave FILE                        VCD waveform of the RTL block: every port and register,\n"
             "                                     the reference model's expected values and a mismatch\n"
             "                                     marker, on the model's time axis (the GPU's core "
             "clock)\n\n";
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
    // The model's time in ps (SystemC's default resolution, as the engine reads it).
    gpumux::rtl::install_dss_cosimulation(wave, wave.empty() ? 1000.0 : core_clock_mhz(args), [] {
      return static_cast<std::uint64_t>(sc_core::sc_time_stamp().value());
    });
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
