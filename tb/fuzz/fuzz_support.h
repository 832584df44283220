#pragma once
// Shared by the libFuzzer harnesses of the config loaders (tb/fuzz/*_fuzz.cpp, docs/fuzzing.md).
//
// The loaders read files and resolve the paths inside them (kernel libraries, workloads, the GPU)
// relative to the file's folder. So each input is written to a file inside a scratch copy of the
// repository's configs/ tree: configs/<kind>/ is a real folder holding symlinks to the shipped files of
// that kind plus the input, the other kinds are symlinks, and `../kernels/parboil.yaml` in a workload
// input finds the shipped library just as it does from configs/workloads/. Nothing is written into the
// repository.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "core/gpu_config.h"

namespace gpumux::fuzz {

/// The scratch tree of one harness process; removed when the process exits normally.
class InputFile {
 public:
  /// `kind`: the configs/ folder the input pretends to live in ("gpus", "kernels", "workloads",
  /// "experiments").
  explicit InputFile(const std::string& kind);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  /// Writes the input (replacing the previous one) and returns its path.
  [[nodiscard]] const std::string& write(const std::uint8_t* data, std::size_t size) const;

 private:
  std::filesystem::path root_;
  std::string path_;
};

/// The shipped Kepler K20c (configs/gpus/kepler-k20c.yaml), loaded once: the GPU the kernel-library and
/// workload harnesses load against.
[[nodiscard]] const GpuConfig& kepler_k20c();

/// Runs `load` on the input. An InputError is the expected outcome for bad input; any other exception
/// is a bug (bad input must always be exit 2 with file, line and key), so it is printed and the
/// process aborts, which libFuzzer reports as a crash and saves the input.
void run_loader(const std::function<void()>& load);

}  // namespace gpumux::fuzz
