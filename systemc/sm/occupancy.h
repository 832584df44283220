#pragma once
// Static occupancy: how many thread blocks of a kernel fit on one SM, and which resource limits it.
// Tanasic 2.3: "The number of thread blocks that can run concurrently is thus determined by the
// first fully used hardware resource." Which shared-memory carve-out the SM is configured with follows
// the GPU's carve-out rule (core/gpu_config.h CarveoutRule; Kepler's is Tanasic Table 2's footnote: the
// smallest carve-out that holds one thread block of the kernel).

#include <cstdint>
#include <string>
#include <vector>

#include "core/gpu_config.h"
#include "core/kernel_desc.h"
#include "core/workload.h"

namespace gpumux {

/// What one thread block of a kernel takes from an SM.
struct TbFootprint {
  std::uint32_t registers = 0;
  std::uint32_t shared_memory = 0;
  std::uint32_t threads = 0;
  std::uint32_t warps = 0;
};

struct Occupancy {
  std::uint32_t tbs_per_sm = 0;            ///< 0 when one TB does not fit
  std::uint32_t shared_memory_config = 0;  ///< chosen carve-out in bytes (0 if none fits)
  std::string limited_by;  ///< "registers", "shared_memory", "threads", "warps", "thread_blocks"
  TbFootprint footprint;
  /// Thread blocks per SM under the largest carve-out: what the hardware allows. Above tbs_per_sm
  /// when the GPU's carve-out rule costs the kernel occupancy (carveout_warning()).
  std::uint32_t tbs_per_sm_largest_carveout = 0;
};

[[nodiscard]] TbFootprint footprint_of(const KernelDesc& kernel, std::uint32_t warp_size);

/// Occupancy of `kernel` alone on an SM of `gpu`.
[[nodiscard]] Occupancy compute_occupancy(const KernelDesc& kernel, const GpuConfig& gpu);

/// Empty when the carve-out rule gives `kernel` the occupancy the largest carve-out allows; else one line
/// naming the kernel, the GPU, the rule, both carve-outs and both occupancies (shown by gpumux run,
/// experiment and list kernels: the rule never lowers occupancy silently).
[[nodiscard]] std::string carveout_warning(const KernelDesc& kernel, const GpuConfig& gpu);

/// carveout_warning() of every distinct kernel `workload` launches, in launch order (none: empty).
[[nodiscard]] std::vector<std::string> carveout_warnings(const Workload& workload, const GpuConfig& gpu);

/// Bytes of on-chip context (registers and shared memory) of one thread block: what a context
/// switch saves and restores (Tanasic 3.2: registers of every thread plus the TB's shared memory).
[[nodiscard]] std::uint64_t context_bytes_per_tb(const KernelDesc& kernel);
/// The same for a thread block of footprint `f`: its registers (4 B each) and its shared memory.
[[nodiscard]] std::uint64_t context_bytes(const TbFootprint& f);

}  // namespace gpumux
