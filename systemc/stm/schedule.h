#pragma once
// Spatial-temporal schedules of a set of kernels (Liang et al., TPDS 2015): the STM heuristic
// (3.2, Algorithm 1 with its dp_select), the sequential baseline, and the exhaustive optimum (3.1,
// Appendices A-B, Algorithms 2-3). Plain C++ on the estimates of stm/estimate.h; no SystemC types.
//
// A schedule is a list of phases run one after another; each phase is a configuration whose kernels run
// concurrently on their SMs. Kernels are named by their position in ProfileSet::kernels; the set K to
// schedule is a list of distinct positions, in the order Algorithm 1 numbers them k_1..k_n. To schedule
// one kernel several times (Table 1 replicates kernels up to 50), repeat its profile in a ProfileSet
// (profiles_for below).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stm/estimate.h"
#include "stm/kernel_profile.h"

namespace gpumux::stm {

/// Phases in order and the schedule's latency: the sum of the phases' latencies (3.1: phases do not
/// overlap, so their order does not change the sum).
struct Schedule {
  std::vector<Configuration> phases;
  double latency_ns = 0;
};

/// The GPU of `profiles` with a copy of the profile of each of `kernels`, in order; a name may repeat.
/// InputError (exit 2) for a name with no profile, suggesting the closest profiled name.
[[nodiscard]] ProfileSet profiles_for(const ProfileSet& profiles, const std::vector<std::string>& kernels);

/// 0, 1, ..., n - 1: every kernel of `profiles`.
[[nodiscard]] std::vector<std::size_t> all_kernels(const ProfileSet& profiles);

/// Algorithm 1's dp_select(K), K = k_1..k_n = `kernels` (n >= 1): the configuration with the largest
/// imp (Eq. 1) found by the dynamic program over Config[i][j] / Improve[i][j], the first i kernels on j
/// SMs, i = 1..n, j = 0..M; returns Config[n][M]. Where the printed algorithm leaves points open:
///  - Config[i][0] is the empty configuration (m = j offers k_i alone on j SMs).
///  - Config[1][j] = {<k_1, j>} with Improve[1][j] = 0 (lines 11-12).
///  - m runs 0..j (line 17), and m = 0 adds no tuple: k_i gets no SMs and is not in the configuration.
///    The prose's "max over 0 <= m < j" drops m = j; it makes no difference, since k_i alone on j SMs
///    never improves on 0 (its DRR is at least R_i[j] and the penalty at least 1).
///  - Improve[i][j] starts at 0 (line 16); when no candidate beats it, Config[i][j] keeps Config[i-1][j].
///    So every Config[i][j] uses exactly j SMs, and Config[n][M] falls back to {<k_1, M>}: k_1 alone,
///    the sequential choice (Definition 1's sm_i < M does not hold for it).
///  - Consequence of the above: every Config[i][j] holds k_1, so each phase Algorithm 1 picks holds the
///    first kernel left; the order of `kernels` matters.
///  - A candidate beats the best so far only by more than 1e-9 of its seq_lat: summing the thread
///    blocks' latencies in DRR leaves rounding noise (a few 1e-15 relative), which must not make a tie
///    (kernels that scale perfectly) look like an improvement.
/// Cost: about n M^2 / 2 imp() evaluations, each a DRR over the blocks of at most min(n, M) kernels.
[[nodiscard]] Configuration dp_select(const ProfileSet& profiles, const std::vector<std::size_t>& kernels);

/// Algorithm 1: dp_select on the kernels left, its configuration is the next phase, its kernels leave
/// K (the others keep their order); until none is left. The latency is the sum of phase_latency_ns over
/// the phases (a kernel alone is its R[M], several con_lat, Eq. 4). Every phase uses all M SMs. At most
/// n dp_select calls: 50 kernels on 15 SMs with ~100-1000 thread blocks each take seconds (Table 1: tens).
[[nodiscard]] Schedule stm_schedule(const ProfileSet& profiles, const std::vector<std::size_t>& kernels);

/// The sequential baseline: each kernel alone on all M SMs, in the given order; latency sum R_i[M].
[[nodiscard]] Schedule sequential_schedule(const ProfileSet& profiles,
                                           const std::vector<std::size_t>& kernels);

/// The latency of one phase, ns, as the exhaustive search asks it: measured by a simulation, or
/// estimated. +infinity marks an allocation that cannot run; NaN and negative values are errors.
using PhaseOracle = std::function<double(const Configuration&)>;

/// The size of the exhaustive search for n kernels on M SMs (Appendix A). Counts saturate at
/// UINT64_MAX.
struct ExhaustiveSize {
  std::uint64_t schedules = 0;     ///< temporal schedules: the Bell number B_n (A1), valid or not
  std::uint64_t oracle_calls = 0;  ///< sum over the phases S, 1 <= |S| <= M, of C(M-1, |S|-1) (A2)
};
[[nodiscard]] ExhaustiveSize exhaustive_size(std::size_t kernels, std::uint32_t sms);

/// Every phase the exhaustive search evaluates (Appendix A), in its order: each subset S of `kernels` with
/// 1..M members (subsets by bit pattern, kernels in the given order) with each allocation of all M SMs to
/// its kernels, each >= 1 (compositions in lexicographic order). For callers that evaluate the phases
/// themselves before the search (gpumux stm --measure simulates them all at once).
[[nodiscard]] std::vector<Configuration> every_phase(const ProfileSet& profiles,
                                                     const std::vector<std::size_t>& kernels);

/// B_n, the number of set partitions of n items (A1; B_0 = 1), saturating at UINT64_MAX (from B_26).
[[nodiscard]] std::uint64_t bell_number(std::size_t n);

/// Bounds the exhaustive search: it is refused before it starts when larger.
struct ExhaustiveLimits {
  /// With the estimate as oracle each call is one DRR, 10-100 us for phases of a few hundred to a few
  /// thousand thread blocks: 2 million calls are minutes. A measured oracle (a simulation per call)
  /// wants far fewer.
  std::uint64_t max_oracle_calls = 2'000'000;
  /// Set partitions enumerated, each summed over its phases: B_13 = 27.6 million passes, B_14 does not.
  std::uint64_t max_schedules = 50'000'000;
};

struct ExhaustiveResult {
  Schedule best;                   ///< the first schedule of least latency in enumeration order
  std::uint64_t oracle_calls = 0;  ///< = exhaustive_size(n, M).oracle_calls
  std::uint64_t schedules = 0;     ///< valid temporal schedules compared (no phase of more than M kernels)
};

/// The optimal spatial-temporal schedule (3.1, Algorithms 2-3). Every phase S (a subset of `kernels`
/// with 1..M kernels) is evaluated once: for each allocation of all M SMs to its kernels, each >= 1
/// (the C(M-1, |S|-1) compositions), `oracle` gives the latency (Algorithm 2); the least is the phase's.
/// Then every set partition of the kernels (restricted-growth strings; Bell many) is a temporal
/// schedule, and the one whose phases sum to the least wins (Algorithm 3). `oracle` empty: the estimate
/// phase_latency_ns. InputError (exit 2) before any call when the search exceeds `limits` (the message
/// gives the counts) or has more than 20 kernels (one table entry per subset); std::invalid_argument for bad
/// kernel positions or an oracle answer that is NaN or negative.
[[nodiscard]] ExhaustiveResult exhaustive_optimum(const ProfileSet& profiles,
                                                  const std::vector<std::size_t>& kernels,
                                                  const PhaseOracle& oracle = {},
                                                  const ExhaustiveLimits& limits = {});

/// "{va:5, bs:10} | {mci:15}": the phases in order.
[[nodiscard]] std::string to_string(const ProfileSet& profiles, const Schedule& schedule);

}  // namespace gpumux::stm
