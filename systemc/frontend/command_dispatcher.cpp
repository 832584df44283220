#include "frontend/command_dispatcher.h"

#include "core/processes.h"

namespace gpumux {

CommandDispatcher::CommandDispatcher(const sc_core::sc_module_name& name, CommandQueues& queues,
                                     CommandEngine& execution, CommandEngine& h2d, CommandEngine& d2h,
                                     CommandCompletionListener& host)
    : sc_core::sc_module(name),
      queues_(queues),
      execution_(execution),
      h2d_(h2d),
      d2h_(d2h),
      host_(host),
      enabled_(queues.count(), true) {
  spawn_method("dispatch", queues_.pushed_event(), rescan_, [this] { dispatch(); });
  execution_.set_room_listener([this] { rescan_.notify(sc_core::SC_ZERO_TIME); });
}

void CommandDispatcher::dispatch() {
  const TimePs now = sc_core::sc_time_stamp().value();
  for (std::uint32_t q = 0; q < queues_.count(); ++q) {
    if (!enabled_[q] || queues_.empty(q)) continue;
    // A kernel launch waits at the head of its queue while its context's command buffer is full
    // (Tanasic 3.3); the execution engine reports when one empties.
    if (queues_.head(q).kind == CommandKind::kKernel && !execution_.can_accept(queues_.head(q))) continue;
    GpuCommand command = queues_.pop(q);
    command.issued_ps = now;
    enabled_[q] = false;
    switch (command.kind) {
      case CommandKind::kHostToDevice:
        h2d_.accept(command);
        break;
      case CommandKind::kDeviceToHost:
        d2h_.accept(command);
        break;
      case CommandKind::kKernel:
        execution_.accept(command);
        break;
      case CommandKind::kCpu:
      case CommandKind::kSync:
      case CommandKind::kJoin:
        break;  // never queued: the host runs CPU phases and synchronisations itself
    }
  }
}

void CommandDispatcher::command_done(const GpuCommand& command) {
  ++completed_;
  records_.push_back({command, sc_core::sc_time_stamp().value()});
  enabled_[command.queue] = true;
  rescan_.notify(sc_core::SC_ZERO_TIME);
  host_.command_done(command);
}

}  // namespace gpumux
