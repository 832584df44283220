#include "frontend/dma_queue.h"

#include <string>
#include <utility>

#include "core/error.h"

namespace gpumux {

DmaQueue::DmaQueue(CopyPolicy policy, std::vector<int> process_priority)
    : policy_(policy), process_priority_(std::move(process_priority)) {}

void DmaQueue::push(const GpuCommand& command) {
  const std::size_t process = index(command.process);
  if (process >= process_priority_.size()) {
    throw InvariantViolation("DMA queue: copy " + std::to_string(command.id) + " of process " +
                             std::to_string(process) + ", but the workload has " +
                             std::to_string(process_priority_.size()) + " processes");
  }
  for (const Waiting& w : waiting_) {
    if (w.command.queue == command.queue) {
      throw InvariantViolation("DMA queue: copy " + std::to_string(command.id) + " of hardware queue " +
                               std::to_string(command.queue) + " issued while copy " +
                               std::to_string(w.command.id) + " of the same queue still waits");
    }
  }
  waiting_.push_back({command, process_priority_[process]});
}

GpuCommand DmaQueue::pop_next() {
  if (waiting_.empty()) throw InvariantViolation("DMA queue: a copy was taken from an empty queue");
  auto chosen = waiting_.begin();
  if (policy_ == CopyPolicy::kNpq) {
    // Strictly higher only, so the first of equal priority (the earliest arrival) stays chosen.
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
      if (it->priority > chosen->priority) chosen = it;
    }
  }
  GpuCommand command = chosen->command;
  waiting_.erase(chosen);
  return command;
}

}  // namespace gpumux
