#pragma once
// Chrome / Perfetto trace ("Trace Event Format" JSON): one track per SM with one slice per thread
// block, one track per hardware queue with each command's lifetime, and one track per process with
// each kernel launch's lifetime. Open it in ui.perfetto.dev or chrome://tracing.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/sm_driver.h"
#include "frontend/command_dispatcher.h"
#include "metrics/run_result.h"

namespace gpumux {

class TimelineRecorder final : public TbTraceSink {
 public:
  void on_tb(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps, TimePs end_ps) override;

  /// Writes the trace; throws std::runtime_error when the file cannot be written.
  void write(const std::string& path, const RunResult& result, const std::vector<CommandRecord>& commands,
             std::uint32_t num_sms) const;

 private:
  struct Slice {
    std::uint32_t sm;
    std::uint32_t kernel;
    std::uint32_t tb;
    TimePs start_ps;
    TimePs end_ps;
  };
  std::vector<Slice> slices_;
};

}  // namespace gpumux
