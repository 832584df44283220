#pragma once
// Loads a kernel library (configs/kernels/*.yaml): each kernel's grid, per-TB resources and
// thread-block time profile. The GPU is needed only to turn `mean_cycles` into time; whether a kernel
// fits on that GPU's SMs is checked where a workload uses it (config/workload_loader).

#include <memory>
#include <string>
#include <vector>

#include "core/gpu_config.h"
#include "core/kernel_desc.h"

namespace gpumux {

/// Kernels in file order. KernelDesc::library is the file's `name:` (default: the file stem).
[[nodiscard]] std::vector<std::shared_ptr<const KernelDesc>> load_kernel_library(const std::string& path,
                                                                                 const GpuConfig& gpu);

}  // namespace gpumux
