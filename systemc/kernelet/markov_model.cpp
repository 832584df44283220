#include "kernelet/markov_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

// uBLAS's release configuration whatever the build type: without NDEBUG it bounds-checks every element
// access and multiplies each LU factorisation back to check it, ten times slower (1.6 ms instead of
// 0.17 ms for 81 states), and the scheduler solves a chain for every candidate ratio of every pair. The
// indices here are computed, not read, and the solution is checked below. No other file of gpumux
// includes uBLAS, so its templates are instantiated with one configuration only.
#ifndef BOOST_UBLAS_NDEBUG
#define BOOST_UBLAS_NDEBUG 1
#endif
#include <boost/numeric/ublas/lu.hpp>
#include <boost/numeric/ublas/matrix.hpp>
#include <boost/numeric/ublas/vector.hpp>

namespace gpumux::kernelet {

namespace {

/// Dense transition matrices beyond this many states take over 100 MB and seconds to solve.
constexpr std::size_t kMaxChainStates = 4096;
/// Rounding a solve may leave under zero (stationary_distribution).
constexpr double kNegativeRoundingTolerance = 1e-10;

constexpr std::size_t kNoState = std::numeric_limits<std::size_t>::max();

std::string number(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

[[noreturn]] void reject(const std::string& owner, const std::string& field, const std::string& requirement,
                         double value) {
  throw std::invalid_argument(owner + ": " + field + " must be " + requirement + ", got " + number(value));
}

void require_unit_interval(const std::string& owner, const std::string& field, double value) {
  if (!(value >= 0.0 && value <= 1.0)) reject(owner, field, "in [0, 1]", value);
}

void require_memory_ratio(const std::string& owner, const std::string& field, double value) {
  if (!(value >= 0.0 && value < 1.0)) {
    reject(owner, field, "in [0, 1) (Rm = 1 leaves the chain without a unique steady state)", value);
  }
}

void require_positive(const std::string& owner, const std::string& field, double value) {
  if (!(value > 0.0) || !std::isfinite(value)) reject(owner, field, "finite and > 0", value);
}

void require_non_negative(const std::string& owner, const std::string& field, double value) {
  if (!(value >= 0.0) || !std::isfinite(value)) reject(owner, field, "finite and >= 0", value);
}

void require_at_least_one(const std::string& owner, const std::string& field, std::uint32_t value) {
  if (value < 1) reject(owner, field, ">= 1", value);
}

std::uint64_t ceil_div(std::uint64_t numerator, std::uint64_t denominator) {
  return (numerator + denominator - 1) / denominator;
}

void validate(const ChainKernel& kernel, std::size_t position) {
  const std::string owner = "ChainKernel[" + std::to_string(position) + "]";
  require_positive(owner, "warps_per_unit", kernel.warps_per_unit);
  require_memory_ratio(owner, "memory_ratio", kernel.memory_ratio);
  require_unit_interval(owner, "uncoalesced_share", kernel.uncoalesced_share);
}

void validate(const VirtualSm& vsm) {
  const std::string owner = "VirtualSm";
  require_positive(owner, "peak_ipc", vsm.peak_ipc);
  require_positive(owner, "bandwidth_requests_per_cycle", vsm.bandwidth_requests_per_cycle);
  require_non_negative(owner, "unloaded_latency_cycles", vsm.unloaded_latency_cycles);
  require_non_negative(owner, "latency_slope", vsm.latency_slope);
  if (!std::isfinite(vsm.latency_intercept_cycles) ||
      !(vsm.unloaded_latency_cycles + vsm.latency_intercept_cycles >= 1.0)) {
    reject(owner, "latency_intercept_cycles", "finite with unloaded_latency_cycles + it >= 1",
           vsm.latency_intercept_cycles);
  }
  if (!(vsm.requests_per_uncoalesced_instruction >= 1.0) ||
      !std::isfinite(vsm.requests_per_uncoalesced_instruction)) {
    reject(owner, "requests_per_uncoalesced_instruction", "finite and >= 1",
           vsm.requests_per_uncoalesced_instruction);
  }
}

bool has_coalesced_idle(const ChainKernel& kernel) {
  return kernel.units > 0 && kernel.memory_ratio > 0 && kernel.uncoalesced_share < 1;
}

bool has_uncoalesced_idle(const ChainKernel& kernel) {
  return kernel.units > 0 && kernel.memory_ratio > 0 && kernel.uncoalesced_share > 0;
}

/// One kernel's own states and their positions.
class KernelSpace {
 public:
  explicit KernelSpace(const ChainKernel& kernel)
      : side_(kernel.units + 1U), index_(side_ * side_, kNoState) {
    const std::uint32_t max_coalesced = has_coalesced_idle(kernel) ? kernel.units : 0;
    for (std::uint32_t coalesced = 0; coalesced <= max_coalesced; ++coalesced) {
      const std::uint32_t max_uncoalesced = has_uncoalesced_idle(kernel) ? kernel.units - coalesced : 0;
      for (std::uint32_t uncoalesced = 0; uncoalesced <= max_uncoalesced; ++uncoalesced) {
        index_[coalesced * side_ + uncoalesced] = states_.size();
        states_.push_back(IdleUnits{coalesced, uncoalesced});
      }
    }
  }

  [[nodiscard]] const std::vector<IdleUnits>& states() const { return states_; }
  [[nodiscard]] std::size_t index(std::uint32_t coalesced, std::uint32_t uncoalesced) const {
    return index_[coalesced * side_ + uncoalesced];
  }

 private:
  std::size_t side_;
  std::vector<std::size_t> index_;
  std::vector<IdleUnits> states_;
};

/// C(n, k) as a double (exact up to n = 56; the chains stay far below).
double choose(std::uint32_t n, std::uint32_t k) {
  k = std::min(k, n - k);
  double result = 1.0;
  for (std::uint32_t i = 1; i <= k; ++i) result = result * (n - k + i) / i;
  return result;
}

/// P(X = k), X ~ Binomial(n, p), k = 0..n.
std::vector<double> binomial_pmf(std::uint32_t n, double p) {
  std::vector<double> pmf(n + 1U);
  for (std::uint32_t k = 0; k <= n; ++k) {
    pmf[k] = choose(n, k) * std::pow(p, k) * std::pow(1.0 - p, n - k);
  }
  return pmf;
}

/// What the kernels of one joint state share in its round (4.4): its duration and memory latencies.
struct Round {
  double duration_cycles = 1;
  double coalesced_latency_cycles = 1;
  double uncoalesced_latency_cycles = 1;
};

double ready_warps(const ChainKernel& kernel, const IdleUnits& idle) {
  return (kernel.units - idle.coalesced - idle.uncoalesced) * kernel.warps_per_unit;
}

/// D(S): one cycle per ready warp on a single-issue scheduler (4.4: "(W - i) cycles"), scaled by its
/// issue rate, and one cycle when nothing is ready (4.4: "In the case i = W, the round duration is one").
/// A round shorter than a cycle (fewer ready warps than the scheduler could issue) also lasts one: the
/// scheduler polls every warp once a round.
double round_duration_cycles(double ready_warp_count, const VirtualSm& vsm) {
  return std::max(1.0, ready_warp_count / vsm.peak_ipc);
}

Round round_of(const std::vector<ChainKernel>& kernels, const JointState& state, const VirtualSm& vsm) {
  double ready = 0;
  double outstanding_requests = 0;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    ready += ready_warps(kernels[k], state[k]);
    // Each idle warp holds one memory instruction: one request if coalesced, R if not (4.4).
    outstanding_requests +=
        kernels[k].warps_per_unit *
        (state[k].coalesced + state[k].uncoalesced * vsm.requests_per_uncoalesced_instruction);
  }
  Round round;
  round.duration_cycles = round_duration_cycles(ready, vsm);
  round.coalesced_latency_cycles = memory_latency_cycles(vsm, outstanding_requests);
  // The last of an uncoalesced instruction's R requests leaves (R - 1) / B after its first (header).
  round.uncoalesced_latency_cycles =
      round.coalesced_latency_cycles +
      vsm.latency_slope * (vsm.requests_per_uncoalesced_instruction - 1.0) / vsm.bandwidth_requests_per_cycle;
  return round;
}

/// P_i->r (4.4): D / L, at most 1 (header: a round as long as the latency returns every request). L >= 1
/// (validated) and D >= 1, so it is > 0.
double return_probability(double duration_cycles, double latency_cycles) {
  return std::min(1.0, duration_cycles / latency_cycles);
}

/// One kernel's row of Eq. 2 from `from`: the probability of each of its states after the round. A
/// ready unit stays (1 - Rm), goes coalesced-idle (Rm (1 - u)) or uncoalesced-idle (Rm u): the counts
/// are multinomial. An idle unit of each kind returns with its own probability: the counts that stay
/// are binomial. The new state adds the units that went idle to those that stayed idle; the sum runs
/// over every combination, which are mutually exclusive.
void kernel_round_row(const ChainKernel& kernel, const KernelSpace& space, const IdleUnits& from,
                      const Round& round, std::vector<double>& row) {
  std::fill(row.begin(), row.end(), 0.0);
  const std::uint32_t ready = kernel.units - from.coalesced - from.uncoalesced;
  const double to_coalesced = kernel.memory_ratio * (1.0 - kernel.uncoalesced_share);
  const double to_uncoalesced = kernel.memory_ratio * kernel.uncoalesced_share;
  const double stay_ready = 1.0 - kernel.memory_ratio;
  const std::vector<double> coalesced_stay = binomial_pmf(
      from.coalesced, 1.0 - return_probability(round.duration_cycles, round.coalesced_latency_cycles));
  const std::vector<double> uncoalesced_stay = binomial_pmf(
      from.uncoalesced, 1.0 - return_probability(round.duration_cycles, round.uncoalesced_latency_cycles));
  for (std::uint32_t went_coalesced = 0; went_coalesced <= ready; ++went_coalesced) {
    for (std::uint32_t went_uncoalesced = 0; went_coalesced + went_uncoalesced <= ready; ++went_uncoalesced) {
      const std::uint32_t stayed_ready = ready - went_coalesced - went_uncoalesced;
      const double leave = choose(ready, went_coalesced) * choose(ready - went_coalesced, went_uncoalesced) *
                           std::pow(to_coalesced, went_coalesced) *
                           std::pow(to_uncoalesced, went_uncoalesced) * std::pow(stay_ready, stayed_ready);
      // Zero exactly for a kind the kernel has no states for (its probability is 0): skipping it keeps
      // every index below valid.
      if (leave == 0.0) continue;
      for (std::uint32_t kept_coalesced = 0; kept_coalesced <= from.coalesced; ++kept_coalesced) {
        for (std::uint32_t kept_uncoalesced = 0; kept_uncoalesced <= from.uncoalesced; ++kept_uncoalesced) {
          const std::size_t to =
              space.index(kept_coalesced + went_coalesced, kept_uncoalesced + went_uncoalesced);
          row[to] += leave * coalesced_stay[kept_coalesced] * uncoalesced_stay[kept_uncoalesced];
        }
      }
    }
  }
}

/// The local state index of each kernel in each joint state (mixed radix, last kernel fastest).
std::vector<std::vector<std::size_t>> joint_indices(const std::vector<KernelSpace>& spaces,
                                                    std::size_t count) {
  std::vector<std::vector<std::size_t>> locals(count, std::vector<std::size_t>(spaces.size(), 0));
  for (std::size_t joint = 0; joint < count; ++joint) {
    std::size_t rest = joint;
    for (std::size_t k = spaces.size(); k-- > 0;) {
      locals[joint][k] = rest % spaces[k].states().size();
      rest /= spaces[k].states().size();
    }
  }
  return locals;
}

double state_product(const std::vector<ChainKernel>& kernels, std::uint32_t unit_cap) {
  double product = 1;
  for (ChainKernel kernel : kernels) {
    kernel.units = std::min(kernel.units, unit_cap);
    product *= static_cast<double>(kernel_state_count(kernel));
  }
  return product;
}

}  // namespace

void validate(const KernelTraits& kernel) {
  const std::string owner = "KernelTraits '" + kernel.name + "'";
  require_memory_ratio(owner, "memory_instruction_ratio", kernel.memory_instruction_ratio);
  require_unit_interval(owner, "uncoalesced_share", kernel.uncoalesced_share);
  require_at_least_one(owner, "warps_per_tb", kernel.warps_per_tb);
  require_positive(owner, "instructions_per_tb", kernel.instructions_per_tb);
  require_at_least_one(owner, "threads_per_tb", kernel.threads_per_tb);
  require_non_negative(owner, "pur", kernel.pur);
  require_non_negative(owner, "mur", kernel.mur);
}

void validate(const SmModel& sm) {
  const std::string owner = "SmModel";
  require_at_least_one(owner, "warp_schedulers", sm.warp_schedulers);
  require_positive(owner, "peak_ipc_per_scheduler", sm.peak_ipc_per_scheduler);
  require_at_least_one(owner, "max_threads", sm.max_threads);
  require_at_least_one(owner, "registers", sm.registers);
  require_at_least_one(owner, "max_thread_blocks", sm.max_thread_blocks);
  require_at_least_one(owner, "max_warps", sm.max_warps);
  require_non_negative(owner, "unloaded_latency_cycles", sm.unloaded_latency_cycles);
  require_positive(owner, "bandwidth_requests_per_cycle", sm.bandwidth_requests_per_cycle);
  require_non_negative(owner, "latency_slope", sm.latency_slope);
  if (!std::isfinite(sm.latency_intercept_cycles) ||
      !(sm.unloaded_latency_cycles + sm.latency_intercept_cycles >= 1.0)) {
    reject(owner, "latency_intercept_cycles", "finite with unloaded_latency_cycles + it >= 1",
           sm.latency_intercept_cycles);
  }
  if (!(sm.requests_per_uncoalesced_instruction >= 1.0) ||
      !std::isfinite(sm.requests_per_uncoalesced_instruction)) {
    reject(owner, "requests_per_uncoalesced_instruction", "finite and >= 1",
           sm.requests_per_uncoalesced_instruction);
  }
}

std::uint32_t tbs_alone(const KernelTraits& kernel, const SmModel& sm) {
  validate(kernel);
  validate(sm);
  std::uint64_t fit = sm.max_thread_blocks;
  const auto limit = [&fit](std::uint64_t capacity, std::uint64_t per_tb) {
    if (per_tb > 0) fit = std::min(fit, capacity / per_tb);
  };
  limit(sm.max_threads, kernel.threads_per_tb);
  limit(sm.registers, kernel.registers_per_tb);
  limit(sm.shared_memory_bytes, kernel.shared_memory_per_tb);
  limit(sm.max_warps, kernel.warps_per_tb);
  return static_cast<std::uint32_t>(fit);
}

bool fit_together(const KernelTraits& first, std::uint32_t tbs_first, const KernelTraits& second,
                  std::uint32_t tbs_second, const SmModel& sm) {
  validate(first);
  validate(second);
  validate(sm);
  const auto within = [&](std::uint64_t capacity, std::uint64_t first_per_tb, std::uint64_t second_per_tb) {
    return std::uint64_t{tbs_first} * first_per_tb + std::uint64_t{tbs_second} * second_per_tb <= capacity;
  };
  return within(sm.max_thread_blocks, 1, 1) &&
         within(sm.max_threads, first.threads_per_tb, second.threads_per_tb) &&
         within(sm.registers, first.registers_per_tb, second.registers_per_tb) &&
         within(sm.shared_memory_bytes, first.shared_memory_per_tb, second.shared_memory_per_tb) &&
         within(sm.max_warps, first.warps_per_tb, second.warps_per_tb);
}

VirtualSm virtual_sm(const SmModel& sm) {
  validate(sm);
  VirtualSm vsm;
  vsm.peak_ipc = sm.peak_ipc_per_scheduler;
  vsm.bandwidth_requests_per_cycle = sm.bandwidth_requests_per_cycle / sm.warp_schedulers;
  vsm.unloaded_latency_cycles = sm.unloaded_latency_cycles;
  vsm.latency_slope = sm.latency_slope;
  vsm.latency_intercept_cycles = sm.latency_intercept_cycles;
  vsm.requests_per_uncoalesced_instruction = sm.requests_per_uncoalesced_instruction;
  return vsm;
}

ChainKernel chain_kernel(const KernelTraits& kernel, std::uint32_t tbs_per_sm, const SmModel& sm,
                         ModelUnit unit) {
  validate(kernel);
  validate(sm);
  ChainKernel chain;
  chain.memory_ratio = kernel.memory_instruction_ratio;
  chain.uncoalesced_share = kernel.uncoalesced_share;
  if (tbs_per_sm == 0) return chain;
  const std::uint64_t warps_on_sm = std::uint64_t{tbs_per_sm} * kernel.warps_per_tb;
  const std::uint64_t units = unit == ModelUnit::kThreadBlock ? ceil_div(tbs_per_sm, sm.warp_schedulers)
                                                              : ceil_div(warps_on_sm, sm.warp_schedulers);
  chain.units = static_cast<std::uint32_t>(units);
  // The virtual SM's share of the kernel's warps (4.4 "Adaptation"), spread evenly over the units.
  chain.warps_per_unit = static_cast<double>(warps_on_sm) / sm.warp_schedulers / static_cast<double>(units);
  return chain;
}

std::size_t kernel_state_count(const ChainKernel& kernel) {
  const std::size_t n = kernel.units;
  if (has_coalesced_idle(kernel) && has_uncoalesced_idle(kernel)) return (n + 1) * (n + 2) / 2;
  if (has_coalesced_idle(kernel) || has_uncoalesced_idle(kernel)) return n + 1;
  return 1;
}

std::vector<ChainKernel> cap_units(std::vector<ChainKernel> kernels, std::size_t max_states) {
  if (max_states < 1) throw std::invalid_argument("ModelOptions: max_states must be >= 1, got 0");
  std::uint32_t most_units = 0;
  for (const ChainKernel& kernel : kernels) most_units = std::max(most_units, kernel.units);
  const auto limit = static_cast<double>(max_states);
  if (state_product(kernels, most_units) <= limit) return kernels;
  // The largest common cap within the bound; 1 when even that is over it (one unit each is the floor).
  std::uint32_t cap = 1;
  while (cap + 1 < most_units && state_product(kernels, cap + 1) <= limit) ++cap;
  for (ChainKernel& kernel : kernels) {
    if (kernel.units <= cap) continue;
    kernel.warps_per_unit = kernel.warps_per_unit * kernel.units / cap;
    kernel.units = cap;
  }
  return kernels;
}

double memory_latency_cycles(const VirtualSm& vsm, double outstanding_requests) {
  return vsm.unloaded_latency_cycles +
         vsm.latency_slope * outstanding_requests / vsm.bandwidth_requests_per_cycle +
         vsm.latency_intercept_cycles;
}

TransitionMatrix build_transition_matrix(const std::vector<ChainKernel>& kernels, const VirtualSm& vsm) {
  validate(vsm);
  if (kernels.empty()) throw std::invalid_argument("build_transition_matrix: kernels must not be empty");
  std::vector<KernelSpace> spaces;
  spaces.reserve(kernels.size());
  double count = 1;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    validate(kernels[k], k);
    spaces.emplace_back(kernels[k]);
    count *= static_cast<double>(spaces.back().states().size());
  }
  if (count > static_cast<double>(kMaxChainStates)) {
    throw std::invalid_argument("build_transition_matrix: the chain has " + number(count) +
                                " states, more than " + std::to_string(kMaxChainStates) +
                                " (use thread-block units or a smaller ModelOptions::max_states)");
  }
  const auto states = static_cast<std::size_t>(count);
  const std::vector<std::vector<std::size_t>> locals = joint_indices(spaces, states);

  TransitionMatrix p;
  p.states.resize(states);
  for (std::size_t s = 0; s < states; ++s) {
    for (std::size_t k = 0; k < kernels.size(); ++k) p.states[s].push_back(spaces[k].states()[locals[s][k]]);
  }
  p.probabilities.assign(states * states, 0.0);

  std::vector<std::vector<double>> kernel_rows(kernels.size());
  for (std::size_t k = 0; k < kernels.size(); ++k) kernel_rows[k].resize(spaces[k].states().size());
  for (std::size_t from = 0; from < states; ++from) {
    const Round round = round_of(kernels, p.states[from], vsm);
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      kernel_round_row(kernels[k], spaces[k], p.states[from][k], round, kernel_rows[k]);
    }
    // The kernels move independently given the state they share (4.4): the product of their rows.
    double* row = &p.probabilities[from * states];
    for (std::size_t to = 0; to < states; ++to) {
      double product = 1.0;
      for (std::size_t k = 0; k < kernels.size() && product != 0.0; ++k) {
        product *= kernel_rows[k][locals[to][k]];
      }
      row[to] = product;
    }
  }
  return p;
}

std::vector<double> stationary_distribution(const TransitionMatrix& p) {
  namespace ublas = boost::numeric::ublas;
  const std::size_t n = p.size();
  if (n == 0) throw std::invalid_argument("stationary_distribution: empty transition matrix");
  // Row i of the system is pi's balance at state i: sum_j pi_j P_ji - pi_i = 0; the last is replaced by
  // the normalisation sum_j pi_j = 1 (the balance equations are one short of full rank).
  ublas::matrix<double> system(n, n);
  for (std::size_t i = 0; i + 1 < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) system(i, j) = p.at(j, i) - (i == j ? 1.0 : 0.0);
  }
  for (std::size_t j = 0; j < n; ++j) system(n - 1, j) = 1.0;
  ublas::vector<double> solution(n, 0.0);
  solution(n - 1) = 1.0;
  ublas::permutation_matrix<std::size_t> pivots(n);
  if (ublas::lu_factorize(system, pivots) != 0) {
    throw std::logic_error("stationary_distribution: singular system (the chain has no unique steady state)");
  }
  ublas::lu_substitute(system, pivots, solution);

  std::vector<double> pi(n);
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double value = solution(i);
    if (!std::isfinite(value) || value < -kNegativeRoundingTolerance) {
      throw std::logic_error("stationary_distribution: entry " + std::to_string(i) + " is " + number(value));
    }
    value = std::max(0.0, value);
    pi[i] = value;
    sum += value;
  }
  for (double& value : pi) value /= sum;
  return pi;
}

ChainSolution solve_chain(const std::vector<ChainKernel>& kernels, const VirtualSm& vsm) {
  ChainSolution solution;
  solution.transitions = build_transition_matrix(kernels, vsm);
  solution.stationary = stationary_distribution(solution.transitions);
  // Eqs. 4-6 as a renewal-reward ratio: instructions per round over cycles per round, both expected
  // under the steady state.
  std::vector<double> issued(kernels.size(), 0.0);
  double cycles = 0;
  for (std::size_t s = 0; s < solution.transitions.size(); ++s) {
    const JointState& state = solution.transitions.states[s];
    const double weight = solution.stationary[s];
    double ready = 0;
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const double kernel_ready = ready_warps(kernels[k], state[k]);
      issued[k] += weight * kernel_ready;
      ready += kernel_ready;
    }
    cycles += weight * round_duration_cycles(ready, vsm);
  }
  solution.virtual_sm_ipc.resize(kernels.size());
  for (std::size_t k = 0; k < kernels.size(); ++k) solution.virtual_sm_ipc[k] = issued[k] / cycles;
  return solution;
}

double alone_ipc(const KernelTraits& kernel, std::uint32_t tbs_per_sm, const SmModel& sm,
                 const ModelOptions& options) {
  if (tbs_per_sm > tbs_alone(kernel, sm)) {
    throw std::invalid_argument("alone_ipc: " + std::to_string(tbs_per_sm) + " thread blocks of '" +
                                kernel.name + "' do not fit on an SM (at most " +
                                std::to_string(tbs_alone(kernel, sm)) + ")");
  }
  if (tbs_per_sm == 0) return 0.0;
  const std::vector<ChainKernel> chain =
      cap_units({chain_kernel(kernel, tbs_per_sm, sm, options.unit)}, options.max_states);
  // The virtual SM holds 1 / S of the SM (4.4 "Adaptation"): S of them make the SM.
  return solve_chain(chain, virtual_sm(sm)).virtual_sm_ipc[0] * sm.warp_schedulers;
}

PairIpc concurrent_ipc(const KernelTraits& first, std::uint32_t tbs_first, const KernelTraits& second,
                       std::uint32_t tbs_second, const SmModel& sm, const ModelOptions& options) {
  if (!fit_together(first, tbs_first, second, tbs_second, sm)) {
    throw std::invalid_argument("concurrent_ipc: " + std::to_string(tbs_first) + " thread blocks of '" +
                                first.name + "' and " + std::to_string(tbs_second) + " of '" + second.name +
                                "' do not fit on one SM together");
  }
  const std::vector<ChainKernel> chain = cap_units(
      {chain_kernel(first, tbs_first, sm, options.unit), chain_kernel(second, tbs_second, sm, options.unit)},
      options.max_states);
  const std::vector<double> ipc = solve_chain(chain, virtual_sm(sm)).virtual_sm_ipc;
  return PairIpc{ipc[0] * sm.warp_schedulers, ipc[1] * sm.warp_schedulers};
}

}  // namespace gpumux::kernelet
