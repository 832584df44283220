#include "app/experiment/results.h"

namespace gpumux {

const RunOutcome* ExperimentResults::outcome(std::size_t workload, std::size_t run, std::size_t seed) const {
  const std::size_t runs = config->runs.size();
  const std::size_t seeds = config->seeds.size();
  const std::size_t cell = (workload * runs + run) * seeds + seed;
  // point_index is kNoPoint where a run's `workloads:` leaves the workload out; empty for a grid made by
  // hand with every point (tests).
  std::size_t index = cell;
  if (!grid->point_index.empty()) {
    index = cell < grid->point_index.size() ? grid->point_index[cell] : outcomes.size();
  }
  if (index >= outcomes.size() || !outcomes[index] || !outcomes[index]->valid) return nullptr;
  return &*outcomes[index];
}

std::string process_class(const ProcessSpec& process, bool class1) {
  for (const StreamSpec& stream : process.streams) {
    for (const CommandSpec& command : stream.commands) {
      if (command.kind == CommandKind::kKernel && command.kernel) {
        return class1 ? command.kernel->class1 : command.kernel->class2;
      }
    }
  }
  return "";
}

}  // namespace gpumux
