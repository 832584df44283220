#include "kernelet/co_schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpumux::kernelet {

namespace {

/// Delta T values this close (relative) are a tie in balanced_slice_ratio: the chain's solve leaves
/// rounding of a few 1e-15, which must not decide between sizes the model cannot tell apart.
constexpr double kTimeTieTolerance = 1e-9;
/// The least CP find_co_schedule counts as a gain: two halves of one kernel have CP = 0 exactly in the
/// model (their C is the kernel's IPC alone), which the solve's rounding may leave a few 1e-16 above 0.
constexpr double kMinimumProfit = 1e-9;

void require_ipc(const char* function, const char* field, double ipc) {
  if (!(ipc > 0.0) || !std::isfinite(ipc)) {
    throw std::invalid_argument(std::string(function) + ": " + field + " must be finite and > 0, got " +
                                std::to_string(ipc));
  }
}

void validate(const PruneThresholds& thresholds) {
  if (!(thresholds.pur >= 0.0) || !std::isfinite(thresholds.pur)) {
    throw std::invalid_argument("PruneThresholds: pur (alpha_p) must be finite and >= 0, got " +
                                std::to_string(thresholds.pur));
  }
  if (!(thresholds.mur >= 0.0) || !std::isfinite(thresholds.mur)) {
    throw std::invalid_argument("PruneThresholds: mur (alpha_m) must be finite and >= 0, got " +
                                std::to_string(thresholds.mur));
  }
}

bool same_time(double a, double b) { return std::abs(a - b) <= kTimeTieTolerance * std::max(a, b); }

}  // namespace

double co_scheduling_profit(const std::vector<double>& concurrent_ipc, const std::vector<double>& alone_ipc) {
  if (concurrent_ipc.empty() || concurrent_ipc.size() != alone_ipc.size()) {
    throw std::invalid_argument(
        "co_scheduling_profit: concurrent_ipc and alone_ipc must have the same non-zero "
        "length, got " +
        std::to_string(concurrent_ipc.size()) + " and " + std::to_string(alone_ipc.size()));
  }
  double weighted_speedup = 0;
  for (std::size_t i = 0; i < alone_ipc.size(); ++i) {
    require_ipc("co_scheduling_profit", "alone_ipc", alone_ipc[i]);
    if (!(concurrent_ipc[i] >= 0.0) || !std::isfinite(concurrent_ipc[i])) {
      throw std::invalid_argument("co_scheduling_profit: concurrent_ipc must be finite and >= 0, got " +
                                  std::to_string(concurrent_ipc[i]));
    }
    weighted_speedup += concurrent_ipc[i] / alone_ipc[i];
  }
  if (!(weighted_speedup > 0.0)) {
    throw std::invalid_argument("co_scheduling_profit: concurrent_ipc must not all be 0");
  }
  return 1.0 - 1.0 / weighted_speedup;
}

double slice_time_difference(double instructions_per_tb_first, std::uint32_t tbs_first, double ipc_first,
                             double instructions_per_tb_second, std::uint32_t tbs_second, double ipc_second) {
  require_ipc("slice_time_difference", "ipc_first", ipc_first);
  require_ipc("slice_time_difference", "ipc_second", ipc_second);
  return std::abs(instructions_per_tb_first * tbs_first / ipc_first -
                  instructions_per_tb_second * tbs_second / ipc_second);
}

std::vector<SliceSizes> candidate_slice_sizes(const KernelTraits& first, const KernelTraits& second,
                                              const SmModel& sm) {
  std::vector<SliceSizes> candidates;
  // Fitting is closed downwards (fewer blocks always fit), so for each P1 the largest fitting P2 is the
  // only one that may be maximal, and it is when P1 + 1 does not fit beside it.
  for (std::uint32_t p1 = 1; p1 <= sm.max_thread_blocks; ++p1) {
    if (!fit_together(first, p1, second, 1, sm)) break;
    std::uint32_t p2 = 1;
    while (fit_together(first, p1, second, p2 + 1, sm)) ++p2;
    if (!fit_together(first, p1 + 1, second, p2, sm)) candidates.push_back(SliceSizes{p1, p2});
  }
  return candidates;
}

PairEvaluation evaluate_slice_sizes(const KernelTraits& first, const KernelTraits& second, SliceSizes sizes,
                                    double alone_ipc_first, double alone_ipc_second, const SmModel& sm,
                                    const ModelOptions& options) {
  require_ipc("evaluate_slice_sizes", "alone_ipc_first", alone_ipc_first);
  require_ipc("evaluate_slice_sizes", "alone_ipc_second", alone_ipc_second);
  if (sizes.first < 1 || sizes.second < 1) {
    throw std::invalid_argument("evaluate_slice_sizes: sizes must both be >= 1, got " +
                                std::to_string(sizes.first) + " and " + std::to_string(sizes.second));
  }
  const PairIpc ipc = concurrent_ipc(first, sizes.first, second, sizes.second, sm, options);
  PairEvaluation evaluation;
  evaluation.sizes = sizes;
  evaluation.concurrent_ipc_first = ipc.first;
  evaluation.concurrent_ipc_second = ipc.second;
  evaluation.alone_ipc_first = alone_ipc_first;
  evaluation.alone_ipc_second = alone_ipc_second;
  evaluation.time_difference = slice_time_difference(first.instructions_per_tb, sizes.first, ipc.first,
                                                     second.instructions_per_tb, sizes.second, ipc.second);
  evaluation.profit = co_scheduling_profit({ipc.first, ipc.second}, {alone_ipc_first, alone_ipc_second});
  return evaluation;
}

PairEvaluation balanced_slice_ratio(const KernelTraits& first, const KernelTraits& second,
                                    double alone_ipc_first, double alone_ipc_second, const SmModel& sm,
                                    const ModelOptions& options) {
  const std::vector<SliceSizes> candidates = candidate_slice_sizes(first, second, sm);
  if (candidates.empty()) {
    throw std::invalid_argument("balanced_slice_ratio: no thread block of '" + first.name +
                                "' fits beside one of '" + second.name + "'");
  }
  PairEvaluation best;
  bool have_best = false;
  for (const SliceSizes& sizes : candidates) {
    const PairEvaluation candidate =
        evaluate_slice_sizes(first, second, sizes, alone_ipc_first, alone_ipc_second, sm, options);
    const bool better = !have_best || (same_time(candidate.time_difference, best.time_difference)
                                           ? candidate.profit > best.profit
                                           : candidate.time_difference < best.time_difference);
    if (better) {
      best = candidate;
      have_best = true;
    }
  }
  return best;
}

PairEvaluation balanced_slice_ratio(const KernelTraits& first, const KernelTraits& second, const SmModel& sm,
                                    const ModelOptions& options) {
  const std::uint32_t first_alone = tbs_alone(first, sm);
  const std::uint32_t second_alone = tbs_alone(second, sm);
  if (first_alone == 0 || second_alone == 0) {
    throw std::invalid_argument("balanced_slice_ratio: no thread block of '" +
                                (first_alone == 0 ? first.name : second.name) + "' fits on an SM");
  }
  return balanced_slice_ratio(first, second, alone_ipc(first, first_alone, sm, options),
                              alone_ipc(second, second_alone, sm, options), sm, options);
}

bool is_pruned(const KernelTraits& a, const KernelTraits& b, const PruneThresholds& thresholds) {
  validate(thresholds);
  validate(a);
  validate(b);
  const bool pur_close = std::abs(a.pur - b.pur) < thresholds.pur;
  const bool mur_close = std::abs(a.mur - b.mur) < thresholds.mur;
  return thresholds.rule == PruneRule::kEitherClose ? pur_close || mur_close : pur_close && mur_close;
}

std::size_t count_pruned_pairs(const std::vector<KernelTraits>& kernels, const PruneThresholds& thresholds) {
  std::size_t pruned = 0;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    for (std::size_t j = i + 1; j < kernels.size(); ++j) {
      pruned += is_pruned(kernels[i], kernels[j], thresholds) ? 1 : 0;
    }
  }
  return pruned;
}

CoSchedule find_co_schedule(const std::vector<KernelTraits>& pending, const SmModel& sm,
                            const PruneThresholds& thresholds, const ModelOptions& options) {
  if (pending.empty()) throw std::invalid_argument("find_co_schedule: pending must not be empty");
  validate(thresholds);
  std::vector<std::uint32_t> alone_tbs;
  alone_tbs.reserve(pending.size());
  for (const KernelTraits& kernel : pending) {
    alone_tbs.push_back(tbs_alone(kernel, sm));
    if (alone_tbs.back() == 0) {
      throw std::invalid_argument("find_co_schedule: no thread block of '" + kernel.name + "' fits on an SM");
    }
  }

  CoSchedule result;
  result.kernel_first = 0;
  result.size_first = alone_tbs[0];

  // Lines 1-2 of FindCoSchedule: the candidate pairs, pruned (4.3).
  std::vector<std::pair<std::size_t, std::size_t>> all_pairs;
  std::vector<std::pair<std::size_t, std::size_t>> kept_pairs;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    for (std::size_t j = i + 1; j < pending.size(); ++j) {
      all_pairs.emplace_back(i, j);
      if (!is_pruned(pending[i], pending[j], thresholds)) kept_pairs.emplace_back(i, j);
    }
  }
  result.pairs_pruned = all_pairs.size() - kept_pairs.size();
  if (kept_pairs.empty() && !all_pairs.empty()) {
    kept_pairs = all_pairs;  // the fallback of find_co_schedule's comment
    result.pruning_relaxed = true;
    result.pairs_pruned = 0;
  }
  if (kept_pairs.empty()) return result;

  // Lines 3-4: CP at each pair's balanced ratio; the largest CP above kMinimumProfit wins.
  std::vector<double> alone(pending.size());
  for (std::size_t k = 0; k < pending.size(); ++k) {
    alone[k] = alone_ipc(pending[k], alone_tbs[k], sm, options);
  }
  double best_profit = kMinimumProfit;
  for (const auto& [i, j] : kept_pairs) {
    if (candidate_slice_sizes(pending[i], pending[j], sm).empty()) {
      ++result.pairs_unfit;
      continue;
    }
    const PairEvaluation evaluation =
        balanced_slice_ratio(pending[i], pending[j], alone[i], alone[j], sm, options);
    ++result.pairs_evaluated;
    if (evaluation.profit > best_profit) {
      best_profit = evaluation.profit;
      result.paired = true;
      result.kernel_first = i;
      result.kernel_second = j;
      result.size_first = evaluation.sizes.first;
      result.size_second = evaluation.sizes.second;
      result.evaluation = evaluation;
    }
  }
  return result;
}

}  // namespace gpumux::kernelet
