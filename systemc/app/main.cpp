// The gpumux command line: run | list | bench. Every simulation runs in a forked child process
// (SystemC elaborates once per process); this process only parses, dispatches and reports.

#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "app/commands.h"
#include "core/error.h"
#include "top/simulation.h"

namespace {

constexpr const char* kUsage = R"(gpumux - a SystemC/TLM-2.0 model of multiprogrammed GPU scheduling hardware

usage:
  gpumux run --gpu FILE --workload FILE [--policy NAME] [--policy-opt KEY=VALUE]
             [--preemption context-switch|drain] [--seed N] [--out DIR]
             [--vcd FILE] [--timeline FILE] [--jobs N] [--timeout S] [--no-cache] [--quiet]
  gpumux experiment FILE --out DIR [--jobs N] [--timeout S] [--dry-run] [--no-cache] [--quiet]
                    [--backend local|slurm] [--runs-per-task N] [--slurm-arg=ARG]...
  gpumux experiment --collect DIR [--quiet]
  gpumux list policies|gpus|kernels [--gpu FILE]
  gpumux bench [--json] [--tbs N] [--gpu FILE] [--policy NAME] [--preemption M]
  gpumux phases --kernels FILE [--kernel NAME] [--gpu FILE] [--json]
  gpumux profile --gpu FILE --kernels FILE [--kernel NAME]... --out FILE [--sm-model tb|warp] [--jobs N]
  gpumux stm --profiles FILE --set K1,K2,... [--exhaustive] [--measure --gpu FILE --kernels FILE]
             [--allocations] [--scaling N1,N2,...] [--json]
  gpumux characterise --gpu FILE --kernels FILE [--kernel NAME]... --out FILE [--slicing] [--pairs]
  gpumux kernelet --profiles FILE --gpu FILE [--alpha-p X] [--alpha-m X] [--json]
  gpumux --help | --version

every simulation has a wall-clock limit: --timeout S, default 3600 s, 0 none
exit codes: 0 success, 1 internal error, invariant violation or timeout, 2 bad input or usage
docs: docs/user-guide.md, docs/config.md
)";

}  // namespace

int main(int argc, char** argv) {
  // SystemC prints a banner when its kernel starts; keep stdout for our own report.
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return gpumux::kExitBadInput;
  }
  const std::string command = args.front();
  args.erase(args.begin());
  try {
    if (command == "--help" || command == "-h" || command == "help") {
      std::cout << kUsage;
      return gpumux::kExitOk;
    }
    if (command == "--version") {
      std::cout << "gpumux " << GPUMUX_VERSION << '\n';
      return gpumux::kExitOk;
    }
    if (command == "run") return gpumux::run_command(args);
    if (command == "list") return gpumux::list_command(args);
    if (command == "bench") return gpumux::bench_command(args);
    if (command == "experiment") return gpumux::experiment_command(args);
    if (command == "phases") return gpumux::phases_command(args);
    if (command == "profile") return gpumux::profile_command(args);
    if (command == "stm") return gpumux::stm_command(args);
    if (command == "characterise") return gpumux::characterise_command(args);
    if (command == "kernelet") return gpumux::kernelet_command(args);
    std::cerr << "gpumux: unknown command '" << command << "'\n\n" << kUsage;
    return gpumux::kExitBadInput;
  } catch (const gpumux::SimulationFailed& e) {
    std::cerr << "gpumux: simulation failed: " << e.what() << '\n';
    return gpumux::kExitInternal;
  } catch (const gpumux::InputError& e) {
    std::cerr << "gpumux: error: " << e.what() << '\n';
    return gpumux::kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gpumux: internal error: " << e.what() << '\n';
    return gpumux::kExitInternal;
  }
}
