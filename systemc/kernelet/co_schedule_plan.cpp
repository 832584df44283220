#include "kernelet/co_schedule_plan.h"

#include <algorithm>

#include <stdexcept>

#include "kernelet/co_schedule.h"
#include "kernelet/markov_model.h"

namespace gpumux::kernelet {

std::vector<std::pair<std::uint32_t, std::uint32_t>> fitting_ratios(const PlanRequest& request, std::size_t a,
                                                                    std::size_t b) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ratios;
  const std::uint32_t most_a = request.candidates.at(a).occupancy->tbs_per_sm;
  for (std::uint32_t na = 1; na <= most_a; ++na) {
    const std::uint32_t most_b = request.fits(a, na, b);
    for (std::uint32_t nb = 1; nb <= most_b; ++nb) ratios.emplace_back(na, nb);
  }
  return ratios;
}

KernelTraits traits_of(const KernelCharacter& k) {
  KernelTraits t;
  t.name = k.kernel;
  // The model refuses Rm = 1 (no kernel is all memory instructions: kernelet/markov_model.h).
  t.memory_instruction_ratio = std::min(k.memory_ratio, 0.999);
  t.uncoalesced_share = k.uncoalesced_share;
  t.warps_per_tb = k.warps_per_tb;
  t.instructions_per_tb = k.instructions_per_tb;
  t.threads_per_tb = k.threads_per_tb;
  t.registers_per_tb = k.registers_per_tb;
  t.shared_memory_per_tb = k.shared_memory_per_tb;
  t.pur = k.pur;
  t.mur = k.mur;
  return t;
}

SmModel sm_model_of(const Characterisation& c, const SmResources& sm) {
  SmModel m;
  m.warp_schedulers = c.model.warp_schedulers;
  m.peak_ipc_per_scheduler = c.model.peak_ipc_per_sm / c.model.warp_schedulers;
  m.max_threads = sm.max_threads;
  m.registers = sm.registers;
  m.shared_memory_bytes = sm.shared_memory_configs.empty() ? 0 : sm.shared_memory_configs.back();
  m.max_thread_blocks = sm.max_thread_blocks;
  m.max_warps = sm.max_warps;
  m.unloaded_latency_cycles = c.model.latency_cycles;
  // One SM stands for all (4.4): its share of the GPU's bandwidth.
  m.bandwidth_requests_per_cycle = c.model.requests_per_cycle / c.sms;
  m.latency_slope = c.model.latency_slope;
  m.latency_intercept_cycles = c.model.latency_offset;
  m.requests_per_uncoalesced_instruction = c.model.uncoalesced_requests;
  return m;
}

std::optional<PairPlan> plan_by_model(const PlanRequest& request, const SmResources& sm) {
  std::vector<KernelTraits> pending;
  pending.reserve(request.candidates.size());
  for (const Candidate& c : request.candidates) pending.push_back(traits_of(*c.character));
  const CoSchedule chosen = find_co_schedule(pending, sm_model_of(*request.characterisation, sm),
                                             PruneThresholds{request.alpha_p, request.alpha_m});
  if (!chosen.paired) return std::nullopt;
  return PairPlan{chosen.kernel_first, chosen.kernel_second, chosen.size_first, chosen.size_second,
                  chosen.evaluation.profit};
}

std::optional<PairPlan> plan_by_measurement(const PlanRequest& request) {
  std::optional<PairPlan> best;
  const std::vector<Candidate>& c = request.candidates;
  for (std::size_t a = 0; a < c.size(); ++a) {
    for (std::size_t b = a + 1; b < c.size(); ++b) {
      for (const auto& [na, nb] : fitting_ratios(request, a, b)) {
        const PairMeasurement* m =
            request.characterisation->find_pair(c[a].character->kernel, na, c[b].character->kernel, nb);
        if (m == nullptr) continue;
        const bool same_order = m->first == c[a].character->kernel && m->first_per_sm == na;
        const double ipc_a = same_order ? m->first_ipc : m->second_ipc;
        const double ipc_b = same_order ? m->second_ipc : m->first_ipc;
        if (!(c[a].character->ipc > 0 && c[b].character->ipc > 0 && ipc_a + ipc_b > 0)) continue;
        const double cp = co_scheduling_profit({ipc_a, ipc_b}, {c[a].character->ipc, c[b].character->ipc});
        if (cp > 0 && (!best || cp > best->profit)) best = PairPlan{a, b, na, nb, cp};
      }
    }
  }
  return best;
}

std::optional<PairPlan> plan_at_random(const PlanRequest& request, Rng& rng) {
  const std::size_t n = request.candidates.size();
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) {
      if (!fitting_ratios(request, a, b).empty()) pairs.emplace_back(a, b);
    }
  }
  if (pairs.empty()) return std::nullopt;
  const auto [a, b] = pairs[rng.below(pairs.size())];
  const std::vector<std::pair<std::uint32_t, std::uint32_t>> ratios = fitting_ratios(request, a, b);
  const auto [na, nb] = ratios[rng.below(ratios.size())];
  return PairPlan{a, b, na, nb, 0};
}

}  // namespace gpumux::kernelet
