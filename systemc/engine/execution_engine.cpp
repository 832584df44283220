#include "engine/execution_engine.h"

#include "core/processes.h"

namespace gpumux {

ExecutionEngine::ExecutionEngine(const sc_core::sc_module_name& name, const GpuConfig& gpu,
                                 const Workload& workload, std::unique_ptr<SchedulingPolicy> policy,
                                 CommandCompletionListener& listener, std::function<void()> progress)
    : sc_core::sc_module(name), workload_(workload), listener_(listener) {
  SmDriver::Hooks hooks;
  // SystemC's clock, until set_clock() gives the driver the SMs' clock (it then reads that one
  // directly). Whatever reaches another module first brings SystemC's clock to the engine's (clock_).
  hooks.now = [] { return sc_core::sc_time_stamp().value(); };
  hooks.kernel_finished = [this](KernelId k) {
    sync_clock();
    kernel_finished(k);
  };
  if (progress) {
    hooks.progress = [this, progress = std::move(progress)] {
      sync_clock();
      progress();
    };
  }
  hooks.buffer_freed = [this] {
    sync_clock();
    if (room_) room_();
  };
  // A policy's timer (EngineControl::wake_at): one SystemC event, re-notified for the latest request.
  hooks.wake_at = [this](TimePs at) {
    sync_clock();  // the calendar may be ahead: SystemC's clock must be the engine's before notifying
    policy_timer_.cancel();
    policy_timer_.notify(sc_core::sc_time::from_value(at - sc_core::sc_time_stamp().value()));
  };
  if (gpu.perf_sat.enabled) {
    // Perf-Sat's sample periods (Awatramani 4.3.2.2): the driver always asks for its earliest due sample.
    hooks.perf_sat_wake_at = [this](TimePs at) {
      sync_clock();
      perf_sat_timer_.cancel();
      if (at != kNever) {
        perf_sat_timer_.notify(sc_core::sc_time::from_value(at - sc_core::sc_time_stamp().value()));
      }
    };
  }
  for (const auto& p : workload.processes) hooks.process_names.push_back(p.name);
  driver_ = std::make_unique<SmDriver>(gpu, std::move(policy), std::move(hooks));
  spawn_method("policy_timer", policy_timer_, [this] { driver_->timer_fired(); });
  // Only with Perf-Sat on, so runs without it have the processes (and their order) of before.
  if (gpu.perf_sat.enabled) {
    spawn_method("perf_sat_timer", perf_sat_timer_, [this] { driver_->perf_sat_timer_fired(); });
  }
}

void ExecutionEngine::attach_sms(const std::vector<SmModule*>& sms) {
  sms_ = sms;
  driver_->attach_sms(std::vector<SmPort*>(sms.begin(), sms.end()));
}

bool ExecutionEngine::can_accept(const GpuCommand& command) const {
  return driver_->can_launch(command.process);
}

void ExecutionEngine::accept(const GpuCommand& command) {
  const ProcessSpec& process = workload_.processes[index(command.process)];
  KernelStatus status;
  status.process = command.process;
  status.desc = command.kernel;
  status.priority = process.priority;
  status.os_tokens = process.tokens;
  status.launch_ps = command.queued_ps;
  command_of_kernel_.push_back(command);  // the driver numbers launches in the same order
  driver_->launch(std::move(status));
}

void ExecutionEngine::kernel_finished(KernelId kernel) {
  listener_.command_done(command_of_kernel_[index(kernel)]);
}

}  // namespace gpumux
