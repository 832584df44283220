#pragma once
// One timed SystemC event for all the warp-level SMs of a simulation instead of one per SM. The SMs
// wake in most cycles while they issue; with 132 of them, one event per SM per cycle made SystemC's
// timed-event queue (a heap of sc_event notifications) the largest cost of a run. Here each SM
// posts the time of its next activation to one plain heap of (time, SM, generation) entries; one
// method process wakes at the earliest time and activates, at that time, every SM due, in the order
// the SMs were created (sm_0, sm_1, ...: deterministic, whatever SystemC's process order). A newer
// request of an SM supersedes its older ones (they carry an older generation and are dropped).
//
// An SM activated from here runs inside this process at the simulated time it asked for, exactly as
// if its own method had been triggered then; a request for the current time made during a firing
// (a thread block started by a completion) is served in the same firing.

#include <cstdint>
#include <functional>
#include <queue>
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
  void request(std::uint32_t order, TimePs at_ps, std::uint64_t generation);

 private:
  WarpWakeups();
  void fire();

  struct Entry {
    TimePs at_ps = 0;
    std::uint32_t order = 0;
    std::uint64_t generation = 0;
    bool operator>(const Entry& o) const { return at_ps != o.at_ps ? at_ps > o.at_ps : order > o.order; }
  };
  std::vector<Activate> targets_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> due_;
  sc_core::sc_event event_;
  TimePs notified_ps_ = kNever;  ///< when event_ fires next (kNever: not pending)
  bool firing_ = false;
};

}  // namespace gpumux
