#include "config/tanasic_mixes.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <utility>

#include "core/rng.h"

namespace gpumux {

namespace {

/// Fisher-Yates shuffle driven by our own generator (std::shuffle differs between libraries).
void shuffle(std::vector<std::size_t>& items, Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng.below(i));
    std::swap(items[i - 1], items[j]);
  }
}

/// Redraws of a mix whose set of applications an earlier mix of the same count already has (with all
/// arrivals at time 0, the order of the processes barely matters). When the distinct sets run out,
/// the last draw is kept.
constexpr int kMaxRedraws = 1000;

/// The leader, then count-1 others: without replacement when count <= apps, else with replacement.
std::vector<std::size_t> draw(std::size_t leader, std::size_t count, std::size_t apps, Rng& rng) {
  std::vector<std::size_t> chosen{leader};
  if (count <= apps) {
    std::vector<std::size_t> rest;
    for (std::size_t a = 0; a < apps; ++a) {
      if (a != leader) rest.push_back(a);
    }
    // Partial Fisher-Yates: the first count-1 entries are a uniform draw without replacement.
    for (std::size_t i = 0; i + 1 < count; ++i) {
      const std::size_t j = i + static_cast<std::size_t>(rng.below(rest.size() - i));
      std::swap(rest[i], rest[j]);
      chosen.push_back(rest[i]);
    }
  } else {
    while (chosen.size() < count) chosen.push_back(static_cast<std::size_t>(rng.below(apps)));
  }
  return chosen;
}

std::string mix_name(std::uint32_t count, std::uint32_t index) {
  char text[64];
  std::snprintf(text, sizeof text, "%uproc-mix%02u", count, index + 1);
  return text;
}

}  // namespace

std::vector<TanasicMix> generate_tanasic_mixes(const Workload& applications,
                                               const std::vector<std::uint32_t>& process_counts,
                                               std::uint32_t mixes_per_count, std::uint64_t mix_seed,
                                               double arrival_offset_max_us) {
  const std::size_t apps = applications.processes.size();
  if (apps == 0) throw std::invalid_argument("tanasic-mixes: the applications workload has no process");
  std::vector<TanasicMix> mixes;
  for (const std::uint32_t count : process_counts) {
    if (count == 0) throw std::invalid_argument("tanasic-mixes: a process count must be positive");
    Rng rng(mix_seed, count);  // one stream per process count: counts do not disturb each other
    std::vector<std::size_t> leaders(apps);
    std::iota(leaders.begin(), leaders.end(), 0);
    shuffle(leaders, rng);
    std::set<std::vector<std::size_t>> drawn;  // application multisets already used for this count
    for (std::uint32_t k = 0; k < mixes_per_count; ++k) {
      std::vector<std::size_t> chosen;
      for (int attempt = 0; attempt < kMaxRedraws; ++attempt) {
        chosen = draw(leaders[k % apps], count, apps, rng);
        std::vector<std::size_t> key = chosen;
        std::sort(key.begin(), key.end());
        if (drawn.insert(key).second) break;  // a new set of applications
      }

      TanasicMix mix;
      mix.workload = applications;
      mix.workload.name = mix_name(count, k);
      mix.workload.processes.clear();
      std::map<std::size_t, int> seen;
      for (const std::size_t a : chosen) {
        ProcessSpec p = applications.processes[a];
        const int copy = ++seen[a];
        if (copy > 1) p.name += "-" + std::to_string(copy);
        p.arrival_ps = 0;
        if (arrival_offset_max_us > 0) {
          p.arrival_ps = static_cast<TimePs>(rng.uniform() * arrival_offset_max_us * 1e6);
        }
        mix.workload.processes.push_back(std::move(p));
        mix.applications.push_back(applications.processes[a].name);
      }
      mixes.push_back(std::move(mix));
    }
  }
  return mixes;
}

}  // namespace gpumux
