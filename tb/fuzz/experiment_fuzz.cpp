// libFuzzer harness: experiments (config/experiment_loader.h). Does everything `gpumux experiment` does
// with the file before simulating: loads it, expands the grid (loads the GPU and workloads it names,
// generates the Tanasic mixes) and validates it against the policy and analysis registries, since
// that is where the file's values meet each other. The input sits in a scratch
// configs/experiments/, so `../gpus/...` and `../workloads/...` find the shipped files.
// See docs/fuzzing.md.

#include <cstddef>
#include <cstdint>

#include "app/experiment/check.h"
#include "config/experiment_loader.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpumux::fuzz::InputFile input("experiments");
  const std::string& path = input.write(data, size);
  gpumux::fuzz::run_loader([&] {
    const gpumux::ExperimentConfig config = gpumux::load_experiment(path);
    gpumux::validate_experiment(config, gpumux::expand_experiment(config));
  });
  return 0;
}
