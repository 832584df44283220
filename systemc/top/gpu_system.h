#pragma once
// The whole modelled system as one SystemC top module: host, PCIe link, command queues, command
// dispatcher, DMA engines, execution engine (SM driver, policy, SMs) and memory controller, wired
// as in docs/architecture.md "The flow of one command" (Tanasic Fig. 1).

#include <memory>
#include <vector>

#include <systemc>

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

class GpuSystem final : public sc_core::sc_module, public CommandCompletionListener {
 public:
  GpuSystem(const sc_core::sc_module_name& name, const SimulationSpec& spec, std::function<void()> progress);

  /// Engines report completions here; forwarded to the dispatcher.
  void command_done(const GpuCommand& command) override { dispatcher_->command_done(command); }

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

  [[nodiscard]] Host& host() { return *host_; }
  [[nodiscard]] ExecutionEngine& engine() { return *engine_; }
  [[nodiscard]] CommandDispatcher& dispatcher() { return *dispatcher_; }

 private:
  std::unique_ptr<MemoryTarget> memory_;
  std::unique_ptr<PcieLink> pcie_;
  std::unique_ptr<CommandQueues> queues_;
  std::unique_ptr<Host> host_;
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
