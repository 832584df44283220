#pragma once
// One timed SystemC event for all the warp-level SMs of a simulation instead of one per SM. The SMs
// wake in most cycles while they issue; with 132 of them, one event per SM per cycle made SystemC's
// timed-event queue (a heap of sc_event notifications) the largest cost of a run. Here each SM
// posts the time of its next activation; one method process wakes at the earliest time and
// activates, at that time, every SM due, in the order the SMs were created (sm_0, sm_1, ...:
// deterministic, whatever SystemC's process order). A newer request of an SM supersedes its older
// one (the SM passes a generation back to tell; only the latest request is kept).
//
// Requests are grouped by time: a bucket per pending time, holding a bit per SM. Most SMs ask for
// the next cycle, so one firing serves many SMs from one bucket, and a request costs a lookup among
// the few pending times and a bit, not a push into a heap of one entry per request (a plain heap
// was 10-15% of a 132-SM run, docs/performance.md).
//
// An SM activated from here runs inside this process at the simulated time it asked for, exactly as
// if its own method had been triggered then; a request for the current time made during a firing
// (a thread block started by a completion) is served in the same firing, in creation order among
// the SMs not yet served (the lowest-numbered SM due is always next).

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include <systemc>

#include "core/types.h"

namespace gpumux {

class WarpWakeups {
 public:
  using Activate = std::function<void(std::uint64_t generation)>;

  /// The simulation's instance, created (and its process spawned) on first use, during elaboration
  /// (SystemC elaborates once per process).
  static WarpWakeups& instance();

  /// Registers an SM; returns its place in the activation order.
  std::uint32_t add(Activate activate);
  /// Activate SM `order` at absolute time `at_ps` (not before now), passing `generation` back.
  /// Replaces the SM's pending request, if any.
  void request(std::uint32_t order, TimePs at_ps, std::uint64_t generation);

 private:
  WarpWakeups();
  void fire();

  /// The SMs due at one time.
  struct Due {
    std::vector<std::uint64_t> bits;  ///< bit `order`: that SM
    std::size_t first_word = 0;       ///< no bit below this word
    std::uint32_t count = 0;
  };
  /// Withdraws the pending request of SM `order`.
  void withdraw(std::uint32_t order);

  std::vector<Activate> targets_;
  std::vector<TimePs> pending_at_;                 ///< by SM: its pending request's time (kNever: none)
  std::vector<std::uint64_t> pending_generation_;  ///< by SM: that request's generation
  std::map<TimePs, Due> due_;
  std::vector<std::vector<std::uint64_t>> spare_bits_;  ///< bit arrays of finished buckets, for reuse
  sc_core::sc_event event_;
  TimePs notified_ps_ = kNever;  ///< when event_ fires next (kNever: not pending)
  bool firing_ = false;
};

}  // namespace gpumux
