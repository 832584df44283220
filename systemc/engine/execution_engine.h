#pragma once
// The execution engine (Tanasic Fig. 1 (4), Fig. 3): receives kernel launches from the command
// dispatcher through the execution queue, runs them on the SMs through the SM driver and the
// scheduling policy, and reports each launch complete when its last thread block finishes.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "core/engine_clock.h"
#include "core/gpu_config.h"
#include "core/workload.h"
#include "engine/sm_driver.h"
#include "frontend/gpu_command.h"
#include "sm/sm_model.h"

namespace gpumux {

class ExecutionEngine final : public sc_core::sc_module, public CommandEngine {
 public:
  ExecutionEngine(const sc_core::sc_module_name& name, const GpuConfig& gpu, const Workload& workload,
                  std::unique_ptr<SchedulingPolicy> policy, CommandCompletionListener& listener,
                  std::function<void()> progress);

  /// A launch fits when its context's command buffer is empty (Tanasic 3.3).
  [[nodiscard]] bool can_accept(const GpuCommand& command) const override;
  void set_room_listener(const std::function<void()>& listener) override { room_ = listener; }
  void accept(const GpuCommand& command) override;

  [[nodiscard]] SmDriver& driver() { return *driver_; }
  [[nodiscard]] const SmDriver& driver() const { return *driver_; }
  /// Connects the SMs top/ built (one per SM, in SmId order) before the simulation starts.
  void attach_sms(const std::vector<SmModule*>& sms);
  [[nodiscard]] const std::vector<SmModule*>& sms() const { return sms_; }
  /// The clock of SMs that may run ahead of SystemC's (TB level: their calendar); before the run.
  void set_clock(EngineClock* clock) {
    clock_ = clock;
    driver_->set_clock(clock);
  }

 private:
  void kernel_finished(KernelId kernel);
  /// Brings SystemC's clock to the engine's before the engine reaches another module.
  void sync_clock() {
    if (clock_ != nullptr) clock_->sync();
  }

  const Workload& workload_;
  CommandCompletionListener& listener_;
  std::unique_ptr<SmDriver> driver_;
  std::vector<SmModule*> sms_;
  EngineClock* clock_ = nullptr;               ///< nullptr: SystemC's clock
  sc_core::sc_event policy_timer_;             ///< EngineControl::wake_at
  sc_core::sc_event perf_sat_timer_;           ///< SmDriver::Hooks::perf_sat_wake_at
  std::function<void()> room_;                 ///< the dispatcher's rescan
  std::vector<GpuCommand> command_of_kernel_;  ///< indexed by KernelId (launch order)
};

}  // namespace gpumux
