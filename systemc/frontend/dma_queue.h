#pragma once
// The DMA queue in front of a DMA engine (Tanasic 2.2 and Fig. 1 item 5: "data transfer commands are
// issued to the data transfer engine via DMA queues"). The command dispatcher issues a copy here at
// once, whether or not the engine is busy, and stops inspecting the copy's hardware queue until the copy
// completes; so at most one copy of each hardware queue waits or runs at a time, and reordering the
// waiting copies never reorders the commands of one stream. When the engine is free it takes the copy
// its CopyPolicy picks (frontend/copy_policy.h); the copy it is moving is no longer in the queue and is
// never interrupted. Plain C++ (no SystemC), unit-tested in tb/unit/dma_queue_test.cpp.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "frontend/copy_policy.h"
#include "frontend/gpu_command.h"

namespace gpumux {

class DmaQueue {
 public:
  /// `process_priority[p]`: the workload's `priority` of process p (higher is more important), the
  /// one the execution engine's priority policies read; npq orders by it.
  DmaQueue(CopyPolicy policy, std::vector<int> process_priority);

  /// A copy the dispatcher issued. InvariantViolation when its process has no priority or a copy of the
  /// same hardware queue is already waiting (the dispatcher issues one command per queue at a time).
  void push(const GpuCommand& command);

  /// Removes and returns the copy the engine starts next: fcfs the one that arrived first; npq the one
  /// of the highest process priority, of those the one that arrived first. InvariantViolation when empty.
  [[nodiscard]] GpuCommand pop_next();

  [[nodiscard]] bool empty() const { return waiting_.empty(); }
  [[nodiscard]] std::size_t size() const { return waiting_.size(); }
  [[nodiscard]] CopyPolicy policy() const { return policy_; }

 private:
  struct Waiting {
    GpuCommand command;
    int priority = 0;
  };

  CopyPolicy policy_;
  std::vector<int> process_priority_;
  std::deque<Waiting> waiting_;  ///< arrival order
};

}  // namespace gpumux
