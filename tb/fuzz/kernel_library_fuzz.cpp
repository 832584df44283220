// libFuzzer harness: kernel libraries (config/kernel_library_loader.h), against the shipped Kepler
// K20c (`mean_cycles` needs a clock). See docs/fuzzing.md.

#include <cstddef>
#include <cstdint>

#include "config/kernel_library_loader.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpumux::fuzz::InputFile input("kernels");
  const gpumux::GpuConfig& gpu = gpumux::fuzz::kepler_k20c();
  const std::string& path = input.write(data, size);
  gpumux::fuzz::run_loader([&] { (void)gpumux::load_kernel_library(path, gpu); });
  return 0;
}
