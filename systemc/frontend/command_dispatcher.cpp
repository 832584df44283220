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
}

void CommandDispatcher::dispatch() {
  const TimePs now = sc_core::sc_time_stamp().value();
  for (std::uint32_t q = 0; q < queues_.count(); ++q) {
    if (!enabled_[q] || queues_.empty(q)) continue;
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
        break;  // never queued: the host runs CPU phases itself
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
