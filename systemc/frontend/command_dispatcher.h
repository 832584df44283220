#pragma once
// The command dispatcher (Tanasic 2.2): inspects the head of every enabled command queue and issues
// it to its engine (copies to a DMA engine, kernel launches to the execution queue); after issuing,
// it stops inspecting that queue until the engine reports the command complete. Commands of one
// queue therefore run in order; commands of different queues for different engines run at once.

#include <cstdint>
#include <vector>

#include <systemc>

#include "frontend/command_queues.h"
#include "frontend/gpu_command.h"

namespace gpumux {

/// A command's passage through the dispatcher, for the timeline.
struct CommandRecord {
  GpuCommand command;
  TimePs done_ps = 0;
};

class CommandDispatcher final : public sc_core::sc_module, public CommandCompletionListener {
 public:
  CommandDispatcher(const sc_core::sc_module_name& name, CommandQueues& queues, CommandEngine& execution,
                    CommandEngine& h2d, CommandEngine& d2h, CommandCompletionListener& host);

  void command_done(const GpuCommand& command) override;
  [[nodiscard]] const std::vector<CommandRecord>& records() const { return records_; }
  [[nodiscard]] std::uint64_t commands_completed() const { return completed_; }

 private:
  void dispatch();

  CommandQueues& queues_;
  CommandEngine& execution_;
  CommandEngine& h2d_;
  CommandEngine& d2h_;
  CommandCompletionListener& host_;
  std::vector<bool> enabled_;
  sc_core::sc_event rescan_;
  std::vector<CommandRecord> records_;
  std::uint64_t completed_ = 0;
};

}  // namespace gpumux
