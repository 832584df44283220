#pragma once
// Loads a kernel library (configs/kernels/*.yaml): each kernel's grid, per-TB resources and
// thread-block time profile. The GPU is needed only to turn `mean_cycles` into time; whether a kernel
// fits on that GPU's SMs is checked where a workload uses it (config/workload_loader).

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/gpu_config.h"
#include "core/kernel_desc.h"

namespace gpumux {

/// Kernels in file order. KernelDesc::library is the file's `name:` (default: the file stem).
[[nodiscard]] std::vector<std::shared_ptr<const KernelDesc>> load_kernel_library(const std::string& path,
                                                                                 const GpuConfig& gpu);

/// Every key a kernel library may hold, nested keys as dotted paths ("kernels.tb_time.mean_us"), from
/// the lists the loader reads against.
[[nodiscard]] std::vector<std::string> kernel_library_keys();

/// Everything the loader made of one kernel (its library's name included; its position in the file
/// not): the thread-block time as the effective mean in ps, whichever unit the file used. The
/// isolated-baseline cache key hashes it (tb/unit/baseline_cache_key_test.cpp changes every key of
/// kernel_library_keys() in turn and checks the key follows).
[[nodiscard]] nlohmann::json kernel_document(const KernelDesc& kernel);

}  // namespace gpumux
