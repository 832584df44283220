#pragma once
// Chrome / Perfetto trace ("Trace Event Format" JSON). Per SM: one control track with the preemptions
// (the request as an instant event, then pipeline drain, trap routine and context save as slices) and
// the SM's setup for a new context, and as many lanes as it had thread blocks resident at once, with a
// slice for every stretch a thread block was resident (its context restore, then its run, with the
// run number: a block preempted twice has three). One track per hardware queue with each command's
// lifetime, and one per process with each kernel launch's lifetime. Preemption slices carry the index
// of their record in stats.json `preemptions[]` (`preemption`). Open it in ui.perfetto.dev.

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/command_dispatcher.h"
#include "metrics/activity_log.h"
#include "metrics/run_result.h"

namespace gpumux {

/// Writes the trace; throws std::runtime_error when the file cannot be written.
void write_timeline(const std::string& path, const ActivityLog& log, const RunResult& result,
                    const std::vector<CommandRecord>& commands, std::uint32_t num_sms);

}  // namespace gpumux
