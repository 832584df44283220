#include "top/gpu_system.h"

#include <algorithm>

#include "config/gpu_loader.h"
#include "core/error.h"
#include "core/kernel_desc.h"
#include "core/processes.h"
#include "core/tlm_quantum.h"
#include "mem/dram_memory_system.h"
#include "mem/external_memory.h"
#include "mem/memory_controller.h"
#include "sm/warp/warp_sm.h"
#include "top/sm_factory.h"

namespace gpumux {

GpuSystem::GpuSystem(const sc_core::sc_module_name& name, const SimulationSpec& spec,
                     std::function<void()> progress, GpuSystemOptions options)
    : sc_core::sc_module(name) {
  set_global_quantum();  // the one place: its value and why are in core/tlm_quantum.h
  equal_time_order_ = std::make_unique<EqualTimeOrder>("equal_time_order");
  if (options.external_memory) {
    memory_ = std::make_unique<ExternalMemory>("external_memory");
  } else if (spec.gpu.memory.model == MemoryModel::kDram) {
    memory_ = std::make_unique<DramMemorySystem>("memory_system", spec.gpu);
  } else {
    memory_ = std::make_unique<MemoryController>("memory_controller", spec.gpu.memory);
  }
  pcie_ = std::make_unique<PcieLink>("pcie", spec.gpu.pcie);
  queues_ = std::make_unique<CommandQueues>("command_queues", spec.gpu.frontend,
                                            static_cast<std::uint32_t>(spec.workload.processes.size()));
  if (options.built_in_host) host_ = std::make_unique<Host>("host", spec.workload, spec.gpu);
  check_active_cores_policy(spec.gpu, spec.policy);  // an experiment's runs reach here without run_command
  engine_ = std::make_unique<ExecutionEngine>("execution_engine", spec.gpu, spec.workload,
                                              create_policy(spec.policy, spec.policy_options), *this,
                                              std::move(progress));
  if (spec.gpu.memory.tb_interference && spec.gpu.sm_model == SmModel::kThreadBlock) {
    // Liang Eq. 3's Pb: the peak bandwidth (GB/s, 1 GB = 1e9 B), as bytes per second.
    penalty_ = std::make_unique<BandwidthPenalty>(spec.gpu.memory.bandwidth_gb_per_s * 1e9, spec.gpu);
    // The SMs hear of a new rate once per instant, after every start and end in it (a thread block
    // ending and the next starting leave the rate as it was: nothing to move): at the end of the instant
    // the calendar is handling, or, for a change made by another process (a launch, a restore), in the
    // next delta cycle.
    penalty_->set_deferral([this] {
      if (calendar_ == nullptr || !calendar_->call_at_end_of_instant()) {
        penalty_flush_.notify(sc_core::SC_ZERO_TIME);
      }
    });
    spawn_method("tb_interference_flush", penalty_flush_,
                 [this] { penalty_->flush(sc_core::sc_time_stamp().value()); });
  }
  if (spec.gpu.sm_model == SmModel::kThreadBlock) {
    calendar_ = std::make_unique<TbCalendar>("tb_calendar", spec.run_ahead);
    if (penalty_) calendar_->set_end_of_instant([this](TimePs at) { penalty_->flush(at); });
    engine_->set_clock(calendar_.get());
  }
  // Running ahead needs every burst's completion on arrival: the built-in simple model only.
  const bool memory_takes_annotated_arrivals =
      spec.gpu.memory.model == MemoryModel::kSimple && !options.external_memory;
  context_traffic_ =
      std::make_unique<ContextTraffic>("context_traffic", spec.run_ahead && memory_takes_annotated_arrivals);
  sms_ = build_sms(spec.gpu, spec.workload.tb_duration, spec.seed, engine_->driver(), calendar_.get(),
                   *context_traffic_, penalty_.get());
  std::vector<SmModule*> sms;
  for (const auto& sm : sms_) sms.push_back(sm.get());
  engine_->attach_sms(sms);
  if (!spec.phase_trace_path.empty()) {
    if (spec.gpu.sm_model != SmModel::kWarp) {
      throw InputError(
          "--phase-trace needs warp-level SMs (--sm-model warp, or a GPU whose sm.model is warp)");
    }
    phase_trace_ = std::make_unique<PhaseTrace>(spec.phase_trace_path, spec.gpu.core_clock_mhz,
                                                spec.phase_trace_interval, spec.gpu.num_sms,
                                                spec.gpu.sm.max_warps, spec.gpu.warp.scheduler);
    for (const auto& sm : sms_) {
      auto* warp_sm = dynamic_cast<WarpSm*>(sm.get());
      if (warp_sm == nullptr) {
        throw InvariantViolation("--phase-trace: a warp-level GPU built an SM that is not a WarpSm");
      }
      warp_sm->set_phase_trace(phase_trace_.get());
      phase_trace_->add_sm(warp_sm);
    }
  }
  // The DMA engines order the copies waiting in their DMA queues by the run's copy policy; npq reads
  // the processes' priorities, as the execution engine's priority policies do.
  std::vector<int> priorities;
  for (const ProcessSpec& p : spec.workload.processes) priorities.push_back(p.priority);
  const bool dma_run_ahead = spec.run_ahead && memory_takes_annotated_arrivals;
  h2d_ = std::make_unique<DmaEngine>("dma_h2d", spec.gpu.pcie, spec.copy_policy, priorities, *this,
                                     dma_run_ahead);
  if (spec.gpu.frontend.copy_engines > 1) {
    d2h_ = std::make_unique<DmaEngine>("dma_d2h", spec.gpu.pcie, spec.copy_policy, priorities, *this,
                                       dma_run_ahead);
  }
  completions_.host = host_.get();
  dispatcher_ = std::make_unique<CommandDispatcher>("command_dispatcher", *queues_, *engine_, *h2d_,
                                                    d2h_ ? *d2h_ : *h2d_, completions_);

  if (host_) host_->socket.bind(pcie_->host_socket);
  pcie_->frontend_socket.bind(queues_->socket);
  // The memory controller's initiators, in the order of its socket indices: the DMA engines (copies;
  // each also drives the PCIe link), then each SM (context save and restore).
  h2d_->link_socket.bind(pcie_->dma_socket);
  h2d_->memory_socket.bind(memory_->socket);
  if (d2h_) {
    d2h_->link_socket.bind(pcie_->dma_socket);
    d2h_->memory_socket.bind(memory_->socket);
  }
  for (const auto& sm : sms_) sm->memory_initiator().bind(memory_->socket);
  // Equal-time ranks (core/equal_time_order.h): the DMA engines, the context traffic, the host streams in
  // stream order, and the calendar last.
  h2d_->set_equal_time_order(*equal_time_order_, 0);
  if (d2h_) d2h_->set_equal_time_order(*equal_time_order_, 1);
  context_traffic_->set_equal_time_order(*equal_time_order_, 2);
  if (host_) host_->set_equal_time_order(*equal_time_order_, 3);
  if (calendar_) calendar_->set_equal_time_order(*equal_time_order_, ~std::uint64_t{0});
  engine_->driver().set_preemption(spec.preemption);
  engine_->driver().set_seed(spec.seed);
}

void GpuSystem::attach_activity_log(ActivityLog& log) {
  SmDriver& driver = engine_->driver();
  driver.set_trace_sink(&log);
  // The SMST entry of an SM changes: its state (idle, running, reserved), kernel and next kernel.
  driver.set_sm_changed([&log, &driver](SmId sm) {
    const SmStatus& st = driver.sm(sm);
    log.on_smst(sm, driver.now(), st.state, st.kernel, st.next);
  });
  for (const auto& sm : sms_) sm->set_warp_activity_sink(&log);
  memory_->set_transfer_log(&log.memory_transfers());
}

void GpuSystem::attach_dram_log(DramActivity& log) { memory_->set_dram_log(&log); }

void GpuSystem::finish_phase_trace(TimePs end_ps) {
  if (!phase_trace_) return;
  std::vector<PhaseTraceKernel> kernels;
  for (const KernelStatus& k : engine_->driver().framework().all_kernels()) {
    const std::size_t phases = k.desc->program ? k.desc->program->phases.size() : 0;
    kernels.push_back({k.desc->name, index(k.process), std::max<std::size_t>(phases, 1)});
  }
  phase_trace_->finish(end_ps, kernels);
}

RunResult GpuSystem::collect(const SimulationSpec& spec) const {
  RunResult r;
  r.policy = spec.policy;
  r.copy_policy = to_string(spec.copy_policy);
  r.seed = spec.seed;
  r.sm_model = spec.gpu.sm_model == SmModel::kWarp ? "warp" : "tb";
  if (spec.gpu.sm_model == SmModel::kWarp) r.warp_scheduler = spec.gpu.warp.scheduler;
  if (host_) {
    r.end_ps = host_->last_finish_ps();
  } else {
    // The user's host: the run ends with the last command the GPU completed.
    for (const CommandRecord& c : dispatcher_->records()) r.end_ps = std::max(r.end_ps, c.done_ps);
  }
  const SmDriver& driver = engine_->driver();
  r.tbs_issued = driver.tbs_issued();
  r.tbs_completed = driver.tbs_completed();
  r.commands_completed = dispatcher_->commands_completed();
  r.tbs_reissued = driver.tbs_reissued();
  for (const PreemptionRecord& p : driver.preemptions()) {
    r.preemptions.push_back({index(p.sm), index(p.kernel), static_cast<std::uint8_t>(p.mechanism),
                             p.requested_ps, p.done_ps, p.bytes, p.drain_ps, p.trap_ps, p.save_start_ps,
                             p.setup_ps});
  }
  if (host_) {
    r.processes = host_->results();
  } else {
    // The processes are the GPU contexts the user's host names; their runs are the user's to time.
    for (const ProcessSpec& p : spec.workload.processes) r.processes.push_back({p.name, {}});
  }
  for (const KernelStatus& k : driver.framework().all_kernels()) {
    std::uint64_t instructions = 0;
    for (const auto& sm : sms_) {
      const std::vector<std::uint64_t>* by_kernel = sm->instructions_by_kernel();
      if (by_kernel != nullptr && index(k.id) < by_kernel->size()) instructions += (*by_kernel)[index(k.id)];
    }
    r.kernels.push_back({k.desc->name, index(k.process), k.launch_ps, k.start_ps, k.end_ps, k.total_tbs,
                         k.occupancy.tbs_per_sm, k.preemptions, instructions, k.tb_time_ps});
  }
  for (const CommandRecord& c : dispatcher_->records()) {
    r.commands.push_back({static_cast<std::uint8_t>(c.command.kind), index(c.command.process),
                          c.command.stream, c.command.queue, c.command.bytes, c.command.queued_ps,
                          c.command.issued_ps, c.done_ps});
  }
  for (const auto& sm : sms_) {
    r.sms.push_back({index(sm->id()), sm->busy_ps(), sm->tbs_completed(), sm->warp_stats(),
                     sm->setup().setups(), sm->setup().setup_total_ps()});
  }
  if (spec.gpu.perf_sat.enabled) {
    // Perf-Sat (Awatramani 4.3): every SM's detections with their samples, in binding order.
    PerfSatResult perf_sat{spec.gpu.perf_sat.sample_period_cycles, spec.gpu.perf_sat.max_toggles, {}};
    for (const PerfSatRecord& p : driver.perf_sat_records()) {
      PerfSatTrace trace{index(p.sm), index(p.kernel), p.n_max,      p.start,      p.bound_ps, p.period_ps,
                         p.detected,  p.settled,       p.settled_ps, p.settled_by, {}};
      for (const PerfSatSample& s : p.samples) {
        trace.samples.push_back(
            {s.end_ps, s.blocks, s.stalled, s.instructions, s.cycles, s.next, to_string(s.state)});
      }
      perf_sat.records.push_back(std::move(trace));
    }
    r.perf_sat = std::move(perf_sat);
  }
  r.active_cores = driver.active_core_records();
  r.memory.bytes = memory_->bytes();
  r.memory.transactions = memory_->transactions();
  r.memory.busy_ps = memory_->busy_ps();
  r.memory.dram = memory_->details(r.end_ps);
  if (penalty_) {
    // Time oversubscribed (Liang Eq. 3), and the kernel time interference cost (both rules).
    r.memory.tb_interference = {
        {"peak_gb_per_s", static_cast<double>(penalty_->peak_bytes_per_s()) / 1e9},
        {"oversubscribed_ns", ns_from_ps(penalty_->oversubscribed_ps(r.end_ps))},
        {"lost_ns", ns_from_ps(penalty_->lost_ps(r.end_ps))},
        {"max_demand_gb_per_s", static_cast<double>(penalty_->peak_demand_bytes_per_s()) / 1e9},
        {"end_demand_gb_per_s", static_cast<double>(penalty_->demand_bytes_per_s()) / 1e9},
        {"max_pressure_gb_per_s", static_cast<double>(penalty_->peak_pressure_bytes_per_s()) / 1e9}};
  }
  r.memory.pcie_down_bytes = pcie_->downstream().bytes();
  r.memory.pcie_up_bytes = pcie_->upstream().bytes();
  if (spec.gpu.power.enabled) {
    std::vector<SmPowerInput> inputs;
    for (const auto& sm : sms_) {
      inputs.push_back({index(sm->id()), driver.gated_ps(sm->id()), sm->op_counts()});
    }
    r.power = power_report(spec.gpu.power, r.end_ps, inputs, r.memory.bytes);
  }
  return r;
}

}  // namespace gpumux
