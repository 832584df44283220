#pragma once
// Kernelet's co-scheduling decision (Zhong and He, 4.2-4.4): the co-scheduling profit of Eq. 1, the
// balanced slice ratio of Eq. 8, the PUR/MUR pruning of 4.3 and Algorithm 1's FindCoSchedule, which
// picks the two pending kernels and their slice sizes to run together next. Plain C++ on the Markov
// model of kernelet/markov_model.h; no SystemC types. Slice sizes are thread blocks per SM (the paper's
// slice of P thread blocks per SM is P x SMs thread blocks of the grid).
//
// Programming errors (an empty pending list, negative IPCs, NaN thresholds, a kernel that does not fit
// on an SM alone) throw std::invalid_argument naming the field.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernelet/markov_model.h"

namespace gpumux::kernelet {

/// CP, Eq. 1: 1 - 1 / sum_i (cIPC_i / IPC_i), cIPC_i the IPC of kernel i in the co-schedule and IPC_i
/// alone. The equation's fraction is 1 over sum_{i=1}^{n}; its layout also allows 1 - (1/n) sum_i, which
/// gives 0.5 for two kernels that merely share the SM half and half (no gain at all), so that reading is
/// not "the performance benefit" the text defines. sum_i cIPC_i / IPC_i is the weighted speedup of the
/// CPU co-scheduling studies the paper follows ([20], [39]): the co-schedule does in time T what takes
/// T x sum_i cIPC_i / IPC_i one kernel after another, so CP is the share of time saved: 0 without gain,
/// > 0 with gain (1 - 1/n when each of n kernels keeps its alone IPC), < 0 with loss.
/// std::invalid_argument unless both lists have the same non-zero length, every alone IPC is > 0 and
/// every concurrent IPC >= 0 with a positive sum.
[[nodiscard]] double co_scheduling_profit(const std::vector<double>& concurrent_ipc,
                                          const std::vector<double>& alone_ipc);

/// Delta T, Eq. 8, cycles: |I_K1 x P_K1 / IPC_K1 - I_K2 x P_K2 / IPC_K2|, the difference between the
/// times the two slices take in the co-schedule (I: warp instructions per thread block, P: thread blocks
/// per SM, IPC: the kernel's concurrent IPC per SM). std::invalid_argument for an IPC <= 0.
[[nodiscard]] double slice_time_difference(double instructions_per_tb_first, std::uint32_t tbs_first,
                                           double ipc_first, double instructions_per_tb_second,
                                           std::uint32_t tbs_second, double ipc_second);

/// Thread blocks per SM of each kernel of a co-schedule.
struct SliceSizes {
  std::uint32_t first = 0;
  std::uint32_t second = 0;

  friend bool operator==(const SliceSizes& a, const SliceSizes& b) {
    return a.first == b.first && a.second == b.second;
  }
};

/// The candidate slice sizes of Eq. 8's search: every (P1, P2), both >= 1, that fit on one SM together
/// and leave no room for another thread block of either kernel, by ascending P1. Eq. 8 is an absolute
/// time, so over every fitting pair it would favour the smallest slices ((1, 1) always has a small
/// Delta T) and leave the SM half empty; the paper tunes the slices "for GPU utilization" (4.2), so only
/// sizes that fill the SM compete. Empty when one thread block of each does not fit together.
[[nodiscard]] std::vector<SliceSizes> candidate_slice_sizes(const KernelTraits& first,
                                                            const KernelTraits& second, const SmModel& sm);

/// The model's verdict on one co-schedule of two kernels. IPCs are per SM (markov_model.h).
struct PairEvaluation {
  SliceSizes sizes;
  double concurrent_ipc_first = 0;   ///< cIPC_K1 (Eq. 5)
  double concurrent_ipc_second = 0;  ///< cIPC_K2 (Eq. 6)
  double alone_ipc_first = 0;        ///< IPC_K1: alone at tbs_alone (Eq. 4)
  double alone_ipc_second = 0;       ///< IPC_K2
  double time_difference = 0;        ///< Delta T (Eq. 8), cycles
  double profit = 0;                 ///< CP (Eq. 1)
};

/// Eqs. 5-8 and 1 for `sizes`, given the kernels' alone IPCs (> 0; computed once per kernel by the caller).
[[nodiscard]] PairEvaluation evaluate_slice_sizes(const KernelTraits& first, const KernelTraits& second,
                                                  SliceSizes sizes, double alone_ipc_first,
                                                  double alone_ipc_second, const SmModel& sm,
                                                  const ModelOptions& options = {});

/// The balanced slice ratio (4.4, Eq. 8): the candidate_slice_sizes with the least Delta T; among equal
/// Delta T (within 1e-9 relative) the larger CP, then the first in candidate order. Its evaluation, with
/// the alone IPCs given (> 0). std::invalid_argument when no candidate fits.
[[nodiscard]] PairEvaluation balanced_slice_ratio(const KernelTraits& first, const KernelTraits& second,
                                                  double alone_ipc_first, double alone_ipc_second,
                                                  const SmModel& sm, const ModelOptions& options = {});

/// The same, computing each kernel's alone IPC at tbs_alone (std::invalid_argument when 0).
[[nodiscard]] PairEvaluation balanced_slice_ratio(const KernelTraits& first, const KernelTraits& second,
                                                  const SmModel& sm, const ModelOptions& options = {});

/// Which pairs 4.3's pruning drops.
enum class PruneRule {
  /// The text of 4.3: "prune the co-schedule if the two kernels have PUR difference lower than alpha_p,
  /// or have MUR difference lower than alpha_m".
  kEitherClose,
  /// Both differences lower. Table 6 (pairs pruned among the eight kernels of Table 4 on the C2050) is
  /// this rule's: its first three rows follow from Table 4 exactly and no cell by more than 3, whereas
  /// the text's rule prunes all 28 pairs at alpha_p = 1.0 for every alpha_m (Table 6: 4 to 28).
  kBothClose,
};

/// alpha_p and alpha_m (4.3); the defaults are the paper's for the C2050 (5.4: 0.4 and 0.1).
struct PruneThresholds {
  double pur = 0.4;  ///< alpha_p, >= 0
  double mur = 0.1;  ///< alpha_m, >= 0
  PruneRule rule = PruneRule::kEitherClose;
};

/// True when 4.3 drops the pair: |PUR_a - PUR_b| < alpha_p or (kBothClose: and) |MUR_a - MUR_b| < alpha_m.
/// Thresholds of 0 prune nothing.
[[nodiscard]] bool is_pruned(const KernelTraits& a, const KernelTraits& b, const PruneThresholds& thresholds);

/// Unordered pairs of distinct positions of `kernels` that is_pruned drops (Table 6's count).
[[nodiscard]] std::size_t count_pruned_pairs(const std::vector<KernelTraits>& kernels,
                                             const PruneThresholds& thresholds);

/// FindCoSchedule's answer, <K1, K2, size1, size2> (Algorithm 1). Kernels are positions in `pending`.
struct CoSchedule {
  /// True: run kernel_first and kernel_second together. False: run kernel_first alone at size_first
  /// thread blocks per SM (its tbs_alone); kernel_second and size_second are 0.
  bool paired = false;
  std::size_t kernel_first = 0;
  std::size_t kernel_second = 0;
  std::uint32_t size_first = 0;   ///< thread blocks per SM
  std::uint32_t size_second = 0;  ///< thread blocks per SM
  PairEvaluation evaluation;      ///< the chosen pair's (paired only)

  std::size_t pairs_pruned = 0;     ///< dropped by 4.3 (0 when pruning was relaxed)
  std::size_t pairs_unfit = 0;      ///< survived pruning but no thread block of each fits together
  std::size_t pairs_evaluated = 0;  ///< balanced_slice_ratio calls
  /// True when every pair was pruned and the pairs were evaluated without pruning (find_co_schedule).
  bool pruning_relaxed = false;
};

/// Procedure FindCoSchedule of Algorithm 1 on the pending kernels R. Every unordered pair of distinct
/// positions i < j (K1 = pending[i], K2 = pending[j]) that 4.3 keeps is evaluated at its balanced slice
/// ratio; the pair with the largest CP wins, the first in (i, j) order on equal CP, provided its CP is
/// above 1e-9 (CP = 0, no gain, must not win through the solve's rounding). Each kernel's alone IPC is
/// computed once, at tbs_alone.
///
/// When every pair is pruned, the paper asks to change the thresholds; it says increase them, but a
/// pair is pruned when a difference is *below* a threshold, so larger ones prune more (Table 6). Lowering
/// them ends at no pruning, which is what this does at once: every pair is evaluated and
/// pruning_relaxed is set (the model costs well under a millisecond a pair, so pruning saves time only).
///
/// Fewer than two kernels, or no pair with CP above 1e-9 (co-running would not beat running them one
/// after another, Eq. 1): pending[0] alone (the oldest pending kernel, Algorithm 1's queue order) at its
/// tbs_alone, paired false. std::invalid_argument for an empty `pending` or a kernel of which no thread
/// block fits on an SM.
[[nodiscard]] CoSchedule find_co_schedule(const std::vector<KernelTraits>& pending, const SmModel& sm,
                                          const PruneThresholds& thresholds = {},
                                          const ModelOptions& options = {});

}  // namespace gpumux::kernelet
