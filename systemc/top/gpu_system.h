#pragma once
// The whole modelled system as one SystemC top module: host, PCIe link, command queues, command
// dispatcher, DMA engines, execution engine (SM driver, policy, SMs) and memory controller, wired
// as in docs/architecture.md "The flow of one command" (Tanasic Fig. 1). In a user's own platform
// (top/gpu_model.h) the host and the memory may be the user's instead: GpuSystemOptions.

#include <memory>
#include <vector>

#include <systemc>

#include "core/equal_time_order.h"
#include "engine/execution_engine.h"
#include "frontend/command_dispatcher.h"
#include "frontend/command_queues.h"
#include "frontend/dma_engine.h"
#include "host/host.h"
#include "host/pcie_link.h"
#include "mem/memory_controller.h"
#include "metrics/activity_log.h"
#include "sm/context_traffic.h"
#include "sm/tb/bandwidth_penalty.h"
#include "sm/tb/tb_calendar.h"
#include "sm/warp/phase_trace.h"
#include "top/simulation.h"

namespace gpumux {

/// What a user's platform supplies itself (top/gpu_model.h); the defaults are gpumux's own run.
struct GpuSystemOptions {
  /// false: no built-in host; commands arrive on pcie().host_socket from the user's host model, and
  /// completions go to the listener given to set_completion_listener.
  bool built_in_host = true;
  /// true: the memory side is an ExternalMemory whose memory_socket the user binds.
  bool external_memory = false;
};

class GpuSystem final : public sc_core::sc_module, public CommandCompletionListener {
 public:
  /// `spec` must outlive the system (the host and the engine keep references to its workload).
  GpuSystem(const sc_core::sc_module_name& name, const SimulationSpec& spec, std::function<void()> progress,
            GpuSystemOptions options = {});

  /// Engines report completions here; forwarded to the dispatcher.
  void command_done(const GpuCommand& command) override { dispatcher_->command_done(command); }
  /// Who else is told of each completed command, after the built-in host if there is one (null: nobody).
  void set_completion_listener(CommandCompletionListener* listener) { completions_.listener = listener; }
  [[nodiscard]] bool has_built_in_host() const { return host_ != nullptr; }
  /// Commands the hardware queues accepted so far.
  [[nodiscard]] std::uint64_t commands_accepted() const { return queues_->accepted(); }

  /// Reports what the SMs, the driver's SMST and the memory controller do to `log`, for the timeline
  /// and the waveform written after the run (before the simulation starts; `log` outlives it).
  void attach_activity_log(ActivityLog& log);
  /// The dram model's channel activity (every DRAM command: waveforms only, it grows with the run).
  void attach_dram_log(DramActivity& log);
  /// `--phase-trace`: the samples up to `end_ps` and the kernel launches, then closes the file (no
  /// trace: nothing).
  void finish_phase_trace(TimePs end_ps);
  /// Collects the statistics after the simulation ended.
  [[nodiscard]] RunResult collect(const SimulationSpec& spec) const;

  /// The built-in host (GpuSystemOptions::built_in_host).
  [[nodiscard]] Host& host() { return *host_; }
  [[nodiscard]] PcieLink& pcie() { return *pcie_; }
  [[nodiscard]] MemoryTarget& memory() { return *memory_; }
  [[nodiscard]] ExecutionEngine& engine() { return *engine_; }
  [[nodiscard]] CommandDispatcher& dispatcher() { return *dispatcher_; }

 private:
  /// The dispatcher's completion listener: the built-in host (if any), then the user's listener (if any).
  struct Completions final : CommandCompletionListener {
    Host* host = nullptr;
    CommandCompletionListener* listener = nullptr;
    void command_done(const GpuCommand& command) override {
      if (host != nullptr) host->command_done(command);
      if (listener != nullptr) listener->command_done(command);
    }
  };

  Completions completions_;
  std::unique_ptr<EqualTimeOrder> equal_time_order_;  ///< turns at instants several processes share
  std::unique_ptr<MemoryTarget> memory_;
  std::unique_ptr<PcieLink> pcie_;
  std::unique_ptr<CommandQueues> queues_;
  std::unique_ptr<Host> host_;  ///< null when the host is the user's
  std::unique_ptr<ExecutionEngine> engine_;
  /// TB-level memory interference (memory.tb_interference: on, TB-level SMs); null otherwise.
  std::unique_ptr<BandwidthPenalty> penalty_;
  sc_core::sc_event penalty_flush_;                  ///< tells the SMs of penalty_'s new rate
  std::unique_ptr<TbCalendar> calendar_;             ///< TB level: the SMs' completion calendar
  std::unique_ptr<ContextTraffic> context_traffic_;  ///< every SM's context saves and restores
  std::vector<std::unique_ptr<SmModule>> sms_;       ///< built by top/sm_factory from sm.model
  std::unique_ptr<PhaseTrace> phase_trace_;          ///< null without --phase-trace
  std::unique_ptr<DmaEngine> h2d_;
  std::unique_ptr<DmaEngine> d2h_;  ///< null with one copy engine: h2d_ serves both directions
  std::unique_ptr<CommandDispatcher> dispatcher_;
};

}  // namespace gpumux
