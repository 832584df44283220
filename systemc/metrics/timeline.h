#pragma once
// Chrome / Perfetto trace ("Trace Event Format" JSON). Per SM: one control track with the preemptions
// (the request as an instant event, then pipeline drain, trap routine and context save as slices) and
// the SM's setup for a new context, and as many lanes as it had thread blocks resident at once, with a
// slice for every stretch a thread block was resident (its context restore, then its run, with the
// run number: a block preempted twice has three). One track per hardware queue with each command's
// lifetime, and one per process with each kernel launch's lifetime. Preemption slices carry the index
// of their record in stats.json `preemptions[]` (`preemption`). Open it in ui.perfetto.dev.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/sm_driver.h"
#include "frontend/command_dispatcher.h"
#include "metrics/run_result.h"

namespace gpumux {

class TimelineRecorder final : public TbTraceSink {
 public:
  void on_tb(const TbStretch& stretch) override;
  void on_tb_restored(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps, TimePs done_ps) override;
  void on_setup(SmId sm, TimePs start_ps, TimePs end_ps) override;

  /// Writes the trace; throws std::runtime_error when the file cannot be written.
  void write(const std::string& path, const RunResult& result, const std::vector<CommandRecord>& commands,
             std::uint32_t num_sms) const;

 private:
  struct Stretch {
    TbStretch what;
    std::uint32_t run = 1;      ///< 1 for the first stretch of the thread block, 2 after its first resume, ...
    TimePs restored_ps = 0;     ///< end of its context restore (= start: not resumed)
  };
  struct Interval {
    std::uint32_t sm;
    TimePs start_ps;
    TimePs end_ps;
  };
  std::vector<Stretch> stretches_;
  std::vector<Interval> setups_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> runs_;  ///< (launch, tb) -> stretches so far
  /// (launch, tb) -> its last context restore (start, end), until the stretch it belongs to is recorded
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<TimePs, TimePs>> restores_;
};

}  // namespace gpumux
