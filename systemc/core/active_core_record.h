#pragma once
// What active-core detection (Awatramani 4.4, GpuConfig::active_cores) did for one kernel: plain data the
// SM driver fills and stats.json's `active_cores` section reports (metrics/run_result.h serialises it).

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.h"

namespace gpumux {

/// One IPC sample (4.4.2.4): from the moment the cores paused for it had drained (or the count rose) until
/// `sampling_period_waves` waves of the kernel's thread blocks completed on the active cores.
struct ActiveCoreSample {
  std::uint32_t active_cores = 0;
  TimePs start_ps = 0;
  TimePs end_ps = 0;
  std::uint64_t instructions = 0;   ///< warp instructions the GPU issued in the sample
  std::uint64_t thread_blocks = 0;  ///< the kernel's thread blocks completed in it
  double ipc = 0;                   ///< instructions / core cycles of the sample
};

/// Detection for one kernel launch: from its first thread block until it finished.
struct ActiveCoreRecord {
  std::uint32_t launch = 0;  ///< the kernel's launch index (stats.json kernels[])
  std::string detector;      ///< "onac" or "seq-det"
  std::uint32_t cores = 0;   ///< the GPU's SMs (N_max)
  TimePs start_ps = 0;       ///< its first thread block: detection starts
  bool detected = false;
  /// Detection time: the optimal count was known (the last sample's end); 0 when not detected.
  TimePs detected_ps = 0;
  std::uint32_t n_opt = 0;  ///< the count detected, or the count when detection stopped
  /// "detected", "out of thread blocks" (every block issued before a sample ended: the tail's IPC is not
  /// the kernel's) or "kernel finished".
  std::string ended_by;
  std::vector<ActiveCoreSample> samples;
};

}  // namespace gpumux
