#pragma once
// Loads a GPU description (configs/gpus/*.yaml) into a validated GpuConfig. The keys, their units
// and defaults are documented in docs/config.md; every problem is an InputError naming file, line
// and key.

#include <string>

#include "core/gpu_config.h"

namespace gpumux {

[[nodiscard]] GpuConfig load_gpu_config(const std::string& path);

}  // namespace gpumux
