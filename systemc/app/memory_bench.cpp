#include "app/memory_bench.h"

#include <algorithm>
#include <chrono>
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
  const std::uint64_t byte = rng.below(std::uint64_t{1} << 32U);
  // A mask when the atom is a power of two (always, in practice): a 64-bit division would take a
  // noticeable part of the time this bench measures.
  return (atom & (atom - 1)) == 0 ? byte & ~std::uint64_t{atom - 1} : byte / atom * atom;
}

/// The arrival times not yet enqueued (a completion frees a slot at its done time), earliest first: a
/// sorted vector read from the front. The bench's own bookkeeping, kept cheap so that the time measured is
/// the DRAM core's: the std::priority_queue it replaces took about an eighth of the bench's time (its
/// sifts mispredict), a sorted insertion about half of that. Equal times are interchangeable, so the
/// times come out exactly as from any priority queue and the bench's results do not change.
class Arrivals {
 public:
  [[nodiscard]] bool empty() const { return front_ == times_.size(); }
  [[nodiscard]] std::size_t size() const { return times_.size() - front_; }
  [[nodiscard]] TimePs earliest() const { return times_[front_]; }
  TimePs pop() { return times_[front_++]; }
  void push(TimePs time) {
    // Drop the popped entries once they are the larger part, so the vector stays as long as the queue.
    if (front_ > times_.size() / 2) {
      times_.erase(times_.begin(), times_.begin() + static_cast<std::ptrdiff_t>(front_));
      front_ = 0;
    }
    // After the last time not later than `time` (std::upper_bound's place), looked for among the last few
    // first: the completions come in command order, so their done times nearly so (but for writes, done
    // sooner after their command than reads), and a binary search takes a mispredicted branch at most of
    // its steps.
    std::size_t at = times_.size();
    const std::size_t near = at - std::min<std::size_t>(at - front_, kNearEnd);
    while (at > near && times_[at - 1] > time) --at;
    if (at == near && at > front_ && times_[at - 1] > time) {
      at = static_cast<std::size_t>(std::upper_bound(times_.begin() + static_cast<std::ptrdiff_t>(front_),
                                                     times_.begin() + static_cast<std::ptrdiff_t>(near),
                                                     time) -
                                    times_.begin());
    }
    times_.insert(times_.begin() + static_cast<std::ptrdiff_t>(at), time);
  }

 private:
  static constexpr std::size_t kNearEnd = 8;  // looked at one by one before a binary search
  std::vector<TimePs> times_;
  std::size_t front_ = 0;
};

nlohmann::json serve(const dram::DramConfig& config, const std::string& pattern, std::uint64_t count) {
  dram::DramController controller(config);
  const std::uint32_t atom = controller.atom_bytes();
  const bool sequential = pattern == "sequential";
  Rng rng(1, 0xB3C4);
  Arrivals arrivals;
  for (std::size_t i = 0; i < std::min<std::uint64_t>(kInFlight, count); ++i) arrivals.push(0);
  std::uint64_t issued = 0;
  std::uint64_t completed = 0;
  TimePs last_done = 0;
  std::vector<dram::DramCompletion> done;
  done.reserve(1024);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    TimePs wake = controller.next_completion_bound_ps();
    if (!arrivals.empty()) wake = std::min(wake, arrivals.earliest());
    if (wake == kNever) break;
    while (!arrivals.empty() && arrivals.earliest() <= wake) {
      const TimePs at = arrivals.pop();
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
