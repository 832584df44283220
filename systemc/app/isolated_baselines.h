#pragma once
// Isolated (single-program) baselines, T^SP: each process of a workload simulated alone on the same
// GPU with the fcfs policy (on the SMs and on the DMA engines) and the same seed and repeat count. Results
// are cached on disk, keyed by everything that determines them (the process, its kernels, the GPU, seed,
// TB-duration mode and the gpumux binary itself), so repeated runs and experiments simulate each baseline
// once.

#include <string>
#include <vector>

#include "core/gpu_config.h"
#include "core/workload.h"
#include "frontend/copy_policy.h"
#include "metrics/run_result.h"
#include "top/simulation.h"

namespace gpumux {

/// The copy policy of every isolated baseline. A process alone has one priority, so npq would order its
/// copies as fcfs does (ties in arrival order): runs under either copy policy share the baselines.
inline constexpr CopyPolicy kBaselineCopyPolicy = CopyPolicy::kFcfs;

struct IsolatedOptions {
  std::uint64_t seed = 1;
  unsigned jobs = 1;
  bool use_cache = true;
  unsigned wall_timeout_s = kDefaultWallTimeoutS;  ///< per baseline simulation; 0: none
  std::string cache_dir;  ///< empty: $GPUMUX_CACHE_DIR, else $XDG_CACHE_HOME/gpumux, else ~/.cache/gpumux
};

/// The workload holding only process `p`, arriving at time 0, run exactly `repeat` times.
[[nodiscard]] Workload isolated_workload(const Workload& workload, std::size_t p);

/// One RunResult per process of `workload`, in order.
[[nodiscard]] std::vector<RunResult> isolated_baselines(const GpuConfig& gpu, const Workload& workload,
                                                        const IsolatedOptions& options);

}  // namespace gpumux
