#include "stm/schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "config/yaml_reader.h"
#include "core/error.h"

namespace gpumux::stm {

namespace {

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();
/// dp_select's tie band, relative to the candidate's seq_lat (schedule.h).
constexpr double kTieTolerance = 1e-9;
/// The exhaustive search keeps one entry per subset of the kernels (2^n): 20 kernels, a million entries.
/// (With the default limits B_n stops it at 13 kernels anyway.)
constexpr std::size_t kMaxExhaustiveKernels = 20;

std::uint64_t add_saturating(std::uint64_t a, std::uint64_t b) {
  return a > kSaturated - b ? kSaturated : a + b;
}

std::uint64_t multiply_saturating(std::uint64_t a, std::uint64_t b) {
  return a != 0 && b > kSaturated / a ? kSaturated : a * b;
}

/// C(n, k) for k = 0..max_k (saturating), by Pascal's rule: no division, so saturation stays an upper bound.
std::vector<std::uint64_t> binomial_row(std::size_t n, std::size_t max_k) {
  std::vector<std::uint64_t> row(max_k + 1, 0);
  row[0] = 1;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t k = std::min(i, max_k); k >= 1; --k) {
      row[k] = add_saturating(row[k], row[k - 1]);
    }
  }
  return row;
}

/// std::invalid_argument unless `kernels` are distinct positions in profiles.kernels (and M >= 1).
void check_kernels(const ProfileSet& profiles, const std::vector<std::size_t>& kernels) {
  if (profiles.sms < 1) {
    throw std::invalid_argument("profiles of GPU '" + profiles.gpu + "' with no SMs");
  }
  std::vector<bool> seen(profiles.kernels.size(), false);
  for (const std::size_t k : kernels) {
    if (k >= profiles.kernels.size()) {
      throw std::invalid_argument("kernel position " + std::to_string(k) + " of " +
                                  std::to_string(profiles.kernels.size()) + " profiles");
    }
    if (seen[k]) {
      throw std::invalid_argument("kernel '" + profiles.kernels[k].kernel +
                                  "' twice in the set to schedule (repeat its profile to run it twice)");
    }
    seen[k] = true;
  }
}

/// Calls `visit(parts)` for every composition of `total` into parts.size() parts >= 1, in lexicographic
/// order (Appendix A2: C(total - 1, parts - 1) of them). `at` is the part being chosen.
template <typename Visit>
void for_each_composition(std::vector<std::uint32_t>& parts, std::size_t at, std::uint32_t left,
                          Visit& visit) {
  if (at + 1 == parts.size()) {
    parts[at] = left;
    visit(parts);
    return;
  }
  const auto later = static_cast<std::uint32_t>(parts.size() - at - 1);  // each of the later parts takes >= 1
  for (std::uint32_t part = 1; part + later <= left; ++part) {
    parts[at] = part;
    for_each_composition(parts, at + 1, left - part, visit);
  }
}

}  // namespace

ProfileSet profiles_for(const ProfileSet& profiles, const std::vector<std::string>& kernels) {
  ProfileSet chosen = profiles;
  chosen.kernels.clear();
  chosen.kernels.reserve(kernels.size());
  for (const std::string& name : kernels) {
    const KernelProfile* profile = profiles.find(name);
    if (profile == nullptr) {
      std::vector<std::string> names;
      names.reserve(profiles.kernels.size());
      for (const KernelProfile& k : profiles.kernels) {
        names.push_back(k.kernel);
      }
      const std::string suggestion = config::closest_name(name, names);
      throw InputError("no profile for kernel '" + name + "'" +
                       (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)") +
                       " among the profiles of GPU '" + profiles.gpu + "'; profile it with `gpumux profile`");
    }
    chosen.kernels.push_back(*profile);
  }
  return chosen;
}

std::vector<std::size_t> all_kernels(const ProfileSet& profiles) {
  std::vector<std::size_t> kernels(profiles.kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    kernels[i] = i;
  }
  return kernels;
}

Configuration dp_select(const ProfileSet& profiles, const std::vector<std::size_t>& kernels) {
  check_kernels(profiles, kernels);
  if (kernels.empty()) {
    throw std::invalid_argument("dp_select: no kernels");
  }
  const std::uint32_t sms = profiles.sms;
  // Two rows of Algorithm 1's tables suffice: row i reads only row i - 1. previous[j] = Config[i-1][j].
  std::vector<Configuration> previous(sms + 1);
  std::vector<Configuration> current(sms + 1);
  for (std::uint32_t j = 1; j <= sms; ++j) {
    previous[j] = {{kernels[0], j}};  // line 11: Config[1][j] = {<k_1, j>}; Improve[1][j] = 0
  }
  // previous_improve[j] = Improve[i-1][j]: > 0 exactly when a candidate won that entry (a winner beats 0 by
  // the tie band), 0 when Config[i-1][j] was kept.
  std::vector<double> previous_improve(sms + 1, 0.0);  // line 12: Improve[1][j] = 0
  std::vector<double> current_improve(sms + 1, 0.0);
  for (std::size_t i = 1; i < kernels.size(); ++i) {
    for (std::uint32_t j = 1; j <= sms; ++j) {
      // Line 16, and line 17's m = 0 without recomputing it: that candidate is Config[i-1][j] itself, whose
      // imp is deterministic. If it won its entry, its imp Improve[i-1][j] beats 0 again; if it was kept
      // there, it lost to 0 there and loses again. Either way Config[i][j] starts as Config[i-1][j] (k_i
      // gets no SMs, m = 0 adds no tuple) with Improve[i-1][j].
      double improve = previous_improve[j];
      Configuration config = previous[j];
      for (std::uint32_t m = 1; m <= j; ++m) {  // line 17
        Configuration candidate = previous[j - m];
        candidate.push_back({kernels[i], m});
        const double seq = seq_lat_ns(profiles, candidate);
        const double temp = seq - con_lat_ns(profiles, candidate);  // line 18: imp(), Eq. 1
        if (temp > improve + kTieTolerance * seq) {                 // line 19, with the tie band
          improve = temp;
          config = std::move(candidate);
        }
      }
      current[j] = std::move(config);
      current_improve[j] = improve;
    }
    std::swap(previous, current);
    std::swap(previous_improve, current_improve);
  }
  return previous[sms];  // line 26: Config[n][M]
}

Schedule stm_schedule(const ProfileSet& profiles, const std::vector<std::size_t>& kernels) {
  check_kernels(profiles, kernels);
  Schedule schedule;
  std::vector<std::size_t> left = kernels;  // Algorithm 1, line 1: K
  while (!left.empty()) {                   // line 3
    Configuration phase = dp_select(profiles, left);
    // Line 5: the kernels of the phase leave K; the others keep their order (k_1 is the fallback).
    left.erase(std::remove_if(left.begin(), left.end(),
                              [&phase](std::size_t k) {
                                return std::any_of(phase.begin(), phase.end(),
                                                   [k](const Allocation& a) { return a.kernel == k; });
                              }),
               left.end());
    schedule.latency_ns += phase_latency_ns(profiles, phase);
    schedule.phases.push_back(std::move(phase));  // line 6
  }
  return schedule;
}

Schedule sequential_schedule(const ProfileSet& profiles, const std::vector<std::size_t>& kernels) {
  check_kernels(profiles, kernels);
  Schedule schedule;
  for (const std::size_t k : kernels) {
    schedule.phases.push_back({{k, profiles.sms}});
    schedule.latency_ns += phase_latency_ns(profiles, schedule.phases.back());
  }
  return schedule;
}

std::uint64_t bell_number(std::size_t n) {
  // The Bell triangle: each row starts with the previous row's last entry, each entry adds the one above
  // its left neighbour; row n starts with B_n.
  std::vector<std::uint64_t> row = {1};
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::uint64_t> next = {row.back()};
    next.reserve(row.size() + 1);
    for (const std::uint64_t above : row) {
      next.push_back(add_saturating(next.back(), above));
    }
    row = std::move(next);
  }
  return row[0];
}

ExhaustiveSize exhaustive_size(std::size_t kernels, std::uint32_t sms) {
  ExhaustiveSize size;
  size.schedules = bell_number(kernels);
  if (sms == 0) {
    return size;
  }
  // Phases of k kernels: C(n, k) subsets, each C(M - 1, k - 1) allocations (Appendix A2).
  const std::size_t max_k = std::min<std::size_t>(kernels, sms);
  const std::vector<std::uint64_t> subsets = binomial_row(kernels, max_k);
  const std::vector<std::uint64_t> allocations = binomial_row(sms - 1, max_k);
  for (std::size_t k = 1; k <= max_k; ++k) {
    size.oracle_calls =
        add_saturating(size.oracle_calls, multiply_saturating(subsets[k], allocations[k - 1]));
  }
  return size;
}

std::vector<Configuration> every_phase(const ProfileSet& profiles, const std::vector<std::size_t>& kernels) {
  check_kernels(profiles, kernels);
  const std::size_t n = kernels.size();
  if (n >= 64) {
    throw std::invalid_argument("every_phase of " + std::to_string(n) + " kernels: at most 63");
  }
  std::vector<Configuration> out;
  for (std::uint64_t set = 1; set < (std::uint64_t{1} << n); ++set) {
    Configuration config;
    for (std::size_t i = 0; i < n; ++i) {
      if ((set >> i) & 1U) {
        config.push_back({kernels[i], 0});
      }
    }
    if (config.size() > profiles.sms) {
      continue;  // a phase of more than M kernels is invalid (3.1)
    }
    std::vector<std::uint32_t> parts(config.size());
    auto visit = [&](const std::vector<std::uint32_t>& allocation) {
      for (std::size_t i = 0; i < config.size(); ++i) {
        config[i].sms = allocation[i];
      }
      out.push_back(config);
    };
    for_each_composition(parts, 0, profiles.sms, visit);
  }
  return out;
}

ExhaustiveResult exhaustive_optimum(const ProfileSet& profiles, const std::vector<std::size_t>& kernels,
                                    const PhaseOracle& oracle, const ExhaustiveLimits& limits) {
  check_kernels(profiles, kernels);
  const std::size_t n = kernels.size();
  const std::uint32_t sms = profiles.sms;
  const ExhaustiveSize size = exhaustive_size(n, sms);
  if (n > kMaxExhaustiveKernels || size.oracle_calls > limits.max_oracle_calls ||
      size.schedules > limits.max_schedules) {
    throw InputError("the exhaustive search of " + std::to_string(n) + " kernels on " + std::to_string(sms) +
                     " SMs is too large: " + std::to_string(size.oracle_calls) + " phase latencies (limit " +
                     std::to_string(limits.max_oracle_calls) + ") over " + std::to_string(size.schedules) +
                     " temporal schedules (limit " + std::to_string(limits.max_schedules) + "), at most " +
                     std::to_string(kMaxExhaustiveKernels) +
                     " kernels; use fewer kernels or the STM heuristic");
  }
  ExhaustiveResult result;
  if (n == 0) {
    return result;
  }
  const PhaseOracle estimate = [&profiles](const Configuration& c) { return phase_latency_ns(profiles, c); };
  const PhaseOracle& latency_of = oracle ? oracle : estimate;

  // Algorithm 2 once per phase kernel set S (bit i: kernels[i]), |S| <= M: the least latency over the
  // allocations of all M SMs with each kernel >= 1.
  const std::size_t subsets = std::size_t{1} << n;
  std::vector<double> phase_ns(subsets, std::numeric_limits<double>::infinity());
  std::vector<Configuration> phase_config(subsets);
  for (std::size_t set = 1; set < subsets; ++set) {
    Configuration config;
    for (std::size_t i = 0; i < n; ++i) {
      if ((set >> i) & 1U) {
        config.push_back({kernels[i], 0});
      }
    }
    if (config.size() > sms) {
      continue;  // a phase of more than M kernels is invalid (3.1)
    }
    std::vector<std::uint32_t> parts(config.size());
    bool found = false;
    auto visit = [&](const std::vector<std::uint32_t>& allocation) {
      for (std::size_t i = 0; i < config.size(); ++i) {
        config[i].sms = allocation[i];
      }
      const double ns = latency_of(config);
      ++result.oracle_calls;
      if (std::isnan(ns) || ns < 0) {
        throw std::invalid_argument("exhaustive_optimum: the phase oracle gave " + std::to_string(ns) +
                                    " for " + to_string(profiles, config));
      }
      if (!found || ns < phase_ns[set]) {  // Algorithm 2, line 7: the first least is kept
        found = true;
        phase_ns[set] = ns;
        phase_config[set] = config;
      }
    };
    for_each_composition(parts, 0, sms, visit);
  }

  // Algorithm 3 over the set partitions as restricted-growth strings: block[i] is the phase of kernels[i],
  // block[0] = 0 and block[i] <= 1 + max(block[0..i-1]) (prefix_max[i] is that max).
  std::vector<std::size_t> block(n, 0);
  std::vector<std::size_t> prefix_max(n, 0);
  std::vector<std::size_t> members(n, 0);  // bit set of each block's kernels
  double best_ns = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> best_sets;
  bool have_best = false;
  while (true) {
    const std::size_t blocks = 1 + std::max(prefix_max[n - 1], block[n - 1]);
    std::fill(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(blocks), 0);
    for (std::size_t i = 0; i < n; ++i) {
      members[block[i]] |= std::size_t{1} << i;
    }
    bool valid = true;
    double ns = 0;
    for (std::size_t b = 0; b < blocks && valid; ++b) {
      valid = !phase_config[members[b]].empty();  // evaluated: 1..M kernels
      ns += phase_ns[members[b]];
    }
    if (valid) {
      ++result.schedules;
      if (!have_best || ns < best_ns) {  // Algorithm 3, line 10: the first least is kept
        have_best = true;
        best_ns = ns;
        best_sets.assign(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(blocks));
      }
    }
    // The next string: raise the last position that may grow, reset the ones after it.
    std::size_t i = n - 1;
    while (i > 0 && block[i] > prefix_max[i]) {
      --i;
    }
    if (i == 0) {
      break;
    }
    ++block[i];
    for (std::size_t j = i + 1; j < n; ++j) {
      block[j] = 0;
      prefix_max[j] = std::max(prefix_max[j - 1], block[j - 1]);
    }
  }
  for (const std::size_t set : best_sets) {
    result.best.phases.push_back(phase_config[set]);
  }
  result.best.latency_ns = best_ns;
  return result;
}

std::string to_string(const ProfileSet& profiles, const Schedule& schedule) {
  std::string text;
  for (std::size_t i = 0; i < schedule.phases.size(); ++i) {
    text += (i == 0 ? "" : " | ") + to_string(profiles, schedule.phases[i]);
  }
  return text;
}

}  // namespace gpumux::stm
