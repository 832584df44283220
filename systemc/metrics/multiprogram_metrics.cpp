#include "metrics/multiprogram_metrics.h"

#include <algorithm>
#include <stdexcept>

namespace gpumux {

MultiprogramMetrics compute_metrics(const std::vector<ProcessTimes>& times) {
  if (times.empty()) throw std::invalid_argument("metrics need at least one process");
  MultiprogramMetrics m;
  for (const ProcessTimes& t : times) {
    if (!(t.isolated > 0) || !(t.multiprogram > 0)) {
      throw std::invalid_argument("turnaround times must be positive");
    }
    const double ntt = t.multiprogram / t.isolated;
    m.ntt.push_back(ntt);
    m.antt += ntt;
    m.stp += t.isolated / t.multiprogram;
  }
  m.antt /= static_cast<double>(times.size());
  const auto [lo, hi] = std::minmax_element(m.ntt.begin(), m.ntt.end());
  m.fairness = *lo / *hi;
  return m;
}

}  // namespace gpumux
