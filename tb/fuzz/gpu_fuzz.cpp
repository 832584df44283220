// libFuzzer harness: GPU files (config/gpu_loader.h). See docs/fuzzing.md.

#include <cstddef>
#include <cstdint>

#include "config/gpu_loader.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gpumux::fuzz::InputFile input("gpus");
  const std::string& path = input.write(data, size);
  gpumux::fuzz::run_loader([&] { (void)gpumux::load_gpu_config(path); });
  return 0;
}
