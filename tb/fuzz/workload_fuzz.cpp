// libFuzzer harness: workloads (config/workload_loader.h), against the shipped Kepler K20c. The input
// sits in a scratch configs/workloads/, so `kernel_libraries: [../kernels/parboil.yaml]` loads the
// shipped library. See docs/fuzzing.md.

#include <cstddef>
#include <cstdint>

#include "config/workload_loader.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpumux::fuzz::InputFile input("workloads");
  const gpumux::GpuConfig& gpu = gpumux::fuzz::kepler_k20c();
  const std::string& path = input.write(data, size);
  gpumux::fuzz::run_loader([&] { (void)gpumux::load_workload(path, gpu); });
  return 0;
}
