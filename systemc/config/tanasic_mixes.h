#pragma once
// Random multiprogrammed workloads as Tanasic et al. build them (ISCA 2014, 4.1): "co-scheduling
// several benchmark applications chosen randomly", each replayed until all have completed at least
// `repeat` runs, statistics over the completed runs.
//
// For each process count n and mix index k (0-based), with one generator per n seeded from mix_seed:
//  - the first process of mix k is application perm[k mod A], where perm is a seeded shuffle of the A
//    applications (so with mixes_per_count a multiple of A every application leads equally often;
//    Tanasic 4.2: "all the benchmark applications appear the same number of times as the
//    high-priority process");
//  - the other n-1 are drawn at random without replacement from the remaining applications, or with
//    replacement when n > A (a repeated application is named "app-2", "app-3", ...);
//  - a mix with the same set of applications as an earlier mix of that count is drawn again (all
//    arrivals at 0 make the order of the processes nearly irrelevant), while other sets remain;
//  - every process arrives at time 0, or, with arrival_offset_max_us > 0, at an offset drawn
//    uniformly from [0, arrival_offset_max_us);
//  - replay mode, replay limit, TB-duration mode, kernel libraries and each application's `repeat`
//    come from the applications file.
// The same mix_seed always gives the same mixes; adding a process count does not change the others.

#include <cstdint>
#include <string>
#include <vector>

#include "core/workload.h"

namespace gpumux {

struct TanasicMix {
  Workload workload;                      ///< named "<n>proc-mixKK" (KK from 01)
  std::vector<std::string> applications;  ///< the application of each process, in process order
};

/// `applications`: the workload whose processes are the applications. Throws std::invalid_argument
/// when it has no process or a count is 0.
[[nodiscard]] std::vector<TanasicMix> generate_tanasic_mixes(const Workload& applications,
                                                             const std::vector<std::uint32_t>& process_counts,
                                                             std::uint32_t mixes_per_count,
                                                             std::uint64_t mix_seed,
                                                             double arrival_offset_max_us);

}  // namespace gpumux
