#pragma once
// Loads a multiprogrammed workload (configs/workloads/*.yaml): the kernel libraries it draws from
// (paths relative to the workload file), and its processes with their streams of commands. Every
// kernel a workload launches must fit on one SM of `gpu` (static occupancy > 0), so a run can never
// stall on a kernel that the hardware could not accept.

#include <string>

#include "core/gpu_config.h"
#include "core/workload.h"

namespace gpumux {

[[nodiscard]] Workload load_workload(const std::string& path, const GpuConfig& gpu);

/// Empty when `workload` declares no `gpus:` or names `gpu`; else a one-line warning naming the
/// workload, the GPUs it is meant for (file:line) and `gpu` (gpumux run prints it on stderr).
[[nodiscard]] std::string workload_gpu_warning(const Workload& workload, const GpuConfig& gpu);

namespace config {
class YamlNode;
}
/// A `kernel_launch` value (`synchronous` or `asynchronous`); InputError at the node otherwise.
[[nodiscard]] KernelLaunchMode read_kernel_launch_mode(const config::YamlNode& node);

}  // namespace gpumux
