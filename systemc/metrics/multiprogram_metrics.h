#pragma once
// Multiprogram metrics of Eyerman and Eeckhout, as used by Tanasic 4.1 and Pai 6:
//   NTT_i = T_i^MP / T_i^SP       (normalized turnaround time; lower is better)
//   ANTT  = mean of NTT_i
//   STP   = sum of T_i^SP / T_i^MP (system throughput; higher is better)
//   fairness = min NTT / max NTT  (Pai's StrictF: min slowdown over max slowdown; 1 is fair)

#include <vector>

namespace gpumux {

struct ProcessTimes {
  double isolated = 0;      ///< T^SP, mean turnaround when running alone
  double multiprogram = 0;  ///< T^MP, mean turnaround in the workload
};

struct MultiprogramMetrics {
  std::vector<double> ntt;  ///< per process
  double antt = 0;
  double stp = 0;
  double fairness = 0;
};

/// Throws std::invalid_argument when the list is empty or a time is not positive.
[[nodiscard]] MultiprogramMetrics compute_metrics(const std::vector<ProcessTimes>& times);

}  // namespace gpumux
