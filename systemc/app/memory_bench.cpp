#include "app/memory_bench.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "mem/dram/dram_controller.h"

namespace gpumux {

namespace {

/// Requests in flight at once: a new one arrives as soon as one completes (closed loop), so the queues
/// hold work whatever the pattern sustains, and never grow without bound.
constexpr std::size_t kInFlight = 512;

/// Address of request i: consecutive atoms (a row-hit stream) or any atom in 4 GB (row misses).
std::uint64_t address_of(bool sequential, std::uint64_t i, std::uint32_t atom, Rng& rng) {
  if (sequential) return i * atom;
  return rng.below(std::uint64_t{1} << 32U) / atom * atom;
}

nlohmann::json serve(const dram::DramConfig& config, const std::string& pattern, std::uint64_t count) {
  dram::DramController controller(config);
  const std::uint32_t atom = controller.atom_bytes();
  const bool sequential = pattern == "sequential";
  Rng rng(1, 0xB3C4);
  // Arrivals not yet enqueued, earliest first (a completion frees a slot at its done time).
  std::priority_queue<TimePs, std::vector<TimePs>, std::greater<>> arrivals;
  for (std::size_t i = 0; i < std::min<std::uint64_t>(kInFlight, count); ++i) arrivals.push(0);
  std::uint64_t issued = 0;
  std::uint64_t completed = 0;
  TimePs last_done = 0;
  std::vector<dram::DramCompletion> done;
  done.reserve(1024);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    TimePs wake = controller.next_completion_bound_ps();
    if (!arrivals.empty()) wake = std::min(wake, arrivals.top());
    if (wake == kNever) break;
    while (!arrivals.empty() && arrivals.top() <= wake) {
      const TimePs at = arrivals.top();
      arrivals.pop();
      // A quarter of the requests write (a kernel's stores).
      controller.enqueue({issued, address_of(sequential, issued, atom, rng), issued % 4 == 3, at});
      ++issued;
    }
    controller.advance(wake, done);
    completed += done.size();
    for (const dram::DramCompletion& c : done) {
      last_done = std::max(last_done, c.done_ps);
      if (issued + arrivals.size() < count) arrivals.push(std::max(c.done_ps, wake));
    }
    done.clear();
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (completed != count) {
    throw InvariantViolation("memory bench: " + std::to_string(completed) + " of " + std::to_string(count) +
                             " requests completed");
  }
  const double simulated = static_cast<double>(std::max<TimePs>(last_done, 1)) / 1e12;
  return {{"pattern", pattern},
          {"requests", count},
          {"in_flight", kInFlight},
          {"wall_seconds", wall},
          {"requests_per_s", static_cast<double>(count) / wall},
          {"simulated_us", simulated * 1e6},
          {"bandwidth_gb_per_s", static_cast<double>(count * atom) / simulated / 1e9},
          {"peak_gb_per_s", controller.peak_bytes_per_second() / 1e9}};
}

}  // namespace

nlohmann::json memory_bench(const GpuConfig& gpu, std::uint64_t requests) {
  if (gpu.memory.dram.channels == 0) {
    throw InputError("gpumux bench --memory: GPU '" + gpu.name + "' (" + gpu.source_file +
                     ") has no memory.dram section; see docs/config.md \"Memory\"");
  }
  nlohmann::json runs = nlohmann::json::array();
  for (const char* pattern : {"sequential", "random"}) {
    runs.push_back(serve(gpu.memory.dram, pattern, requests));
  }
  return {{"gpu", gpu.name}, {"in_flight", kInFlight}, {"runs", runs}};
}

}  // namespace gpumux
