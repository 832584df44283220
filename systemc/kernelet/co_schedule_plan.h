#pragma once
// FindCoSchedule (Kernelet Algorithm 1) over the kernels a run has waiting, three ways: by the Markov
// model (Kernelet itself), by measured pair IPCs (the paper's OPT) and at random (MC). The kernelet policy
// (policy/kernelet.h) calls these; `gpumux kernelet` prints what they decide. Plain C++: no SystemC.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu_config.h"
#include "core/rng.h"
#include "kernelet/characterisation.h"
#include "kernelet/markov_model.h"
#include "sm/occupancy.h"

namespace gpumux::kernelet {

/// One waiting kernel: its characterisation and its occupancy on this GPU.
struct Candidate {
  const KernelCharacter* character = nullptr;
  const Occupancy* occupancy = nullptr;
};

/// Most thread blocks of candidate `b` that fit on an SM beside `na` of candidate `a`.
using FitsAlongside = std::function<std::uint32_t(std::size_t a, std::uint32_t na, std::size_t b)>;

struct PlanRequest {
  const Characterisation* characterisation = nullptr;
  std::vector<Candidate> candidates;  ///< in arrival order (ties go to the earlier)
  FitsAlongside fits;
  double alpha_p = 0.4;  ///< 4.3: prune pairs whose PUR differs by less
  double alpha_m = 0.1;  ///< 4.3: prune pairs whose MUR differs by less
};

/// Algorithm 1's <K1, K2, size1, size2>: positions in the candidates, thread blocks per SM; with the
/// co-scheduling profit (Eq. 1) it expects.
struct PairPlan {
  std::size_t first = 0;
  std::size_t second = 0;
  std::uint32_t first_per_sm = 0;
  std::uint32_t second_per_sm = 0;
  double profit = 0;
};

/// Every ratio (n1, n2), n1, n2 >= 1, at which the two candidates fit on one SM together, n1 ascending.
[[nodiscard]] std::vector<std::pair<std::uint32_t, std::uint32_t>> fitting_ratios(const PlanRequest& request,
                                                                                  std::size_t a,
                                                                                  std::size_t b);

/// The Markov model's inputs of one kernel (kernelet/markov_model.h) from its characterisation; Rm capped
/// just below 1, which the model refuses (no kernel is memory instructions only).
[[nodiscard]] KernelTraits traits_of(const KernelCharacter& k);

/// The Markov model's view of this GPU (kernelet/markov_model.h): the characterisation's latency and
/// bandwidth parameters, the SM's resources (shared memory: its largest carve-out).
[[nodiscard]] SmModel sm_model_of(const Characterisation& c, const SmResources& sm);

/// Kernelet: FindCoSchedule (kernelet/co_schedule.h) over the candidates: the pair 4.3 keeps with the
/// largest CP by the Markov model at its balanced ratio (Eq. 8). nullopt when it runs one kernel alone.
[[nodiscard]] std::optional<PairPlan> plan_by_model(const PlanRequest& request, const SmResources& sm);

/// OPT (5.1): every pair at every ratio measured (the file's pairs), no pruning; the largest measured CP.
/// nullopt when no measured ratio of any pair has a positive CP.
[[nodiscard]] std::optional<PairPlan> plan_by_measurement(const PlanRequest& request);

/// MC (5.1): a pair drawn uniformly, then one of its fitting ratios; nullopt when no pair fits together.
[[nodiscard]] std::optional<PairPlan> plan_at_random(const PlanRequest& request, Rng& rng);

}  // namespace gpumux::kernelet
