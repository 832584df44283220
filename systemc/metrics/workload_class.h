#pragma once
// Workload classes of Awatramani 4.3.1.2 (C-strong, C-weak, MEM) for one kernel launch, from what
// Perf-Sat (engine/perf_sat.h) measured in a run. Plain C++.
//
// The thesis defines the classes by how performance follows the thread-block count per core:
//   C-strong: performance keeps improving up to N_max, so the optimal count is N_max;
//   C-weak:   performance saturates at an optimal count below N_max ("launching the fourth thread block
//             would not result in a better performance");
//   MEM:      as C-weak, but performance decreases beyond the optimal count.
// From one Perf-Sat run (docs/user-guide.md "Workload classes" states the rule):
//   D = the median over the SMs of the count Perf-Sat detected (over the SMs where it settled, else no
//   class). D = N_max: C-strong. Otherwise the SMs' samples give the performance at D and at D+1 blocks
//   (warp instructions per core cycle over all samples run at that count): D+1 more than 2% below D
//   (the thesis's 2% rule for the optimal count, 4.3.3.2): MEM; else C-weak.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "metrics/run_result.h"

namespace gpumux {

/// One Perf-Sat sample as the rule needs it.
struct ClassSample {
  std::uint32_t blocks = 0;
  std::uint64_t instructions = 0;
  std::uint64_t cycles = 0;
};

/// Perf-Sat on one SM for the kernel.
struct ClassSm {
  std::uint32_t detected = 0;
  bool settled = false;
  std::vector<ClassSample> samples;
};

struct WorkloadClass {
  std::string name;  ///< "C-strong", "C-weak", "MEM"; empty: not classified (`reason` says why)
  std::string reason;
  std::uint32_t detected = 0;  ///< D (0: none)
  double ipc_at_detected = 0;  ///< performance at D (0: no sample)
  double ipc_above = 0;        ///< performance at D+1 (0: no sample)
};

/// The 2% of the thesis's optimal-count rule (4.3.3.2).
inline constexpr double kSaturationThreshold = 0.02;

[[nodiscard]] WorkloadClass classify_workload(std::uint32_t n_max, const std::vector<ClassSm>& sms);

/// Per kernel launch: Perf-Sat's detections over the SMs and the workload class (Awatramani 4.3), as
/// stats.json's kernels[].perf_sat and experiments' outcomes report them.
struct KernelPerfSat {
  std::uint32_t n_max = 0;
  std::uint32_t sms = 0;
  std::uint32_t settled = 0;
  double detected_mean = 0;  ///< over every SM it ran on (the thesis reports the mean across cores)
  std::uint32_t detected_min = 0;
  std::uint32_t detected_max = 0;
  WorkloadClass workload_class;
};

/// Launch `launch` (index into RunResult::kernels, occupancy `tbs_per_sm`) in a run's Perf-Sat records.
[[nodiscard]] KernelPerfSat kernel_perf_sat(const PerfSatResult& perf_sat, std::size_t launch,
                                            std::uint32_t tbs_per_sm);

}  // namespace gpumux
