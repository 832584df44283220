#include "engine/sm_driver.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"

namespace gpumux {

SmDriver::SmDriver(const GpuConfig& gpu, std::unique_ptr<SchedulingPolicy> policy, Hooks hooks)
    : gpu_(gpu),
      framework_(gpu.num_sms, gpu.active_kernels == 0 ? gpu.num_sms : gpu.active_kernels),
      policy_(std::move(policy)),
      hooks_(std::move(hooks)) {
  open_preemption_.assign(gpu.num_sms, kNoRecord);
}

void SmDriver::attach_sms(std::vector<SmPort*> ports) { ports_ = std::move(ports); }

KernelId SmDriver::launch(KernelStatus status) {
  status.arrival_ps = now();
  status.occupancy = compute_occupancy(*status.desc, gpu_);
  status.total_tbs = status.desc->thread_blocks;
  const std::uint32_t process = index(status.process);
  if (process >= launches_by_process_.size()) launches_by_process_.resize(process + 1, 0);
  status.process_launch = launches_by_process_[process]++;
  const KernelId id = framework_.add_kernel(std::move(status));
  tb_states_.emplace_back(framework_.kernel(id).total_tbs, TbState::kNotIssued);
  admit_waiting();
  return id;
}

void SmDriver::admit_waiting() {
  for (KernelId k : framework_.admit_waiting(now())) policy_->on_kernel_arrival(k, *this);
}

bool SmDriver::can_issue(SmId sm, KernelId kernel) const {
  const KernelStatus& k = framework_.kernel(kernel);
  if (!k.active || !k.has_tbs_to_issue()) return false;
  const SmStatus& status = framework_.sm(sm);
  if (status.state == SmState::kReserved) return false;
  const ResidentKernel* resident = status.resident(kernel);
  if (resident == nullptr && status.residents.size() >= gpu_.sm.max_resident_kernels) return false;
  const std::uint32_t limit = status.limit_for(kernel);
  if (limit != 0 && resident != nullptr && resident->tbs >= limit) return false;
  return ports_[index(sm)]->fits(k.occupancy.footprint, k.occupancy.shared_memory_config);
}

void SmDriver::assign_sm(SmId sm, KernelId kernel) {
  if (!framework_.kernel(kernel).active) {
    violation("policy assigned an SM to a kernel not in the active queue", sm, kernel);
  }
  SmStatus& status = framework_.sm(sm);
  if (status.state != SmState::kIdle) {
    violation(std::string("policy assigned a ") + to_string(status.state) + " SM", sm, kernel);
  }
  status.state = SmState::kRunning;
  status.kernel = kernel;
  status.context = framework_.kernel(kernel).process;
  try_issue(sm);
  if (hooks_.sm_changed) hooks_.sm_changed(sm);
}

void SmDriver::reserve_sm(SmId sm, KernelId next) {
  if (!framework_.kernel(next).active) {
    violation("policy reserved an SM for a kernel not in the active queue", sm, next);
  }
  SmStatus& status = framework_.sm(sm);
  if (status.state == SmState::kIdle) {
    assign_sm(sm, next);
    return;
  }
  if (status.state == SmState::kReserved) {
    // Tanasic 3.4: the kernel an SM is reserved for may change while its preemption is in progress.
    status.next = next;
    if (hooks_.sm_changed) hooks_.sm_changed(sm);
    return;
  }
  status.state = SmState::kReserved;
  status.next = next;
  if (status.running_tbs == 0) {
    settle_sm(sm);
  } else {
    for (const ResidentKernel& r : status.residents) ++framework_.kernel(r.kernel).preemptions;
    open_preemption_[index(sm)] = preemptions_.size();
    preemptions_.push_back({sm, status.kernel.value_or(next), preemption_, now(), 0, 0});
    // Context switch: stop the SM and save every resident TB's context (Tanasic 3.2). Draining: stop
    // issuing; the SM is preempted when its resident TBs finish.
    if (preemption_ == PreemptionMechanism::kContextSwitch) ports_[index(sm)]->save_context();
  }
  if (hooks_.sm_changed) hooks_.sm_changed(sm);
}

void SmDriver::on_context_saved(SmId sm, const std::vector<PreemptedTb>& saved, std::uint64_t bytes) {
  SmStatus& status = framework_.sm(sm);
  if (status.state != SmState::kReserved) {
    violation("context saved on an SM that is not reserved", sm,
              saved.empty() ? KernelId{0} : saved.front().kernel);
  }
  for (const PreemptedTb& p : saved) {
    auto& state = tb_states_[index(p.kernel)][p.tb];
    if (state != TbState::kRunning) {
      violation("saved thread block " + std::to_string(p.tb) + " that was not running", sm, p.kernel);
    }
    state = TbState::kPreempted;
    framework_.kernel(p.kernel).preempted_tbs.push_back({p.tb, p.resume});
    auto it = std::find_if(status.residents.begin(), status.residents.end(),
                           [&](const ResidentKernel& r) { return r.kernel == p.kernel; });
    if (it == status.residents.end() || it->tbs == 0 || status.running_tbs == 0) {
      violation("saved a thread block the SMST does not hold", sm, p.kernel);
    }
    --status.running_tbs;
    if (--it->tbs == 0) status.residents.erase(it);
  }
  if (status.running_tbs != 0) violation("context save left thread blocks on the SM", sm, *status.kernel);
  if (open_preemption_[index(sm)] < preemptions_.size()) {
    preemptions_[open_preemption_[index(sm)]].bytes = bytes;
  }
  settle_sm(sm);
  if (hooks_.sm_changed) hooks_.sm_changed(sm);
}

void SmDriver::set_residency_limit(SmId sm, KernelId kernel, std::uint32_t limit) {
  SmStatus& status = framework_.sm(sm);
  for (auto& l : status.limits) {
    if (l.kernel == kernel) {
      l.limit = limit;
      return;
    }
  }
  if (limit != 0) status.limits.push_back({kernel, limit});
}

void SmDriver::try_issue(SmId sm) {
  while (true) {
    const std::optional<KernelId> choice = policy_->select_kernel(sm, *this);
    if (!choice || !can_issue(sm, *choice)) return;
    issue_tb(sm, *choice);
  }
}

void SmDriver::issue_tb(SmId sm, KernelId kernel) {
  KernelStatus& k = framework_.kernel(kernel);
  TbLaunch launch;
  launch.kernel = kernel;
  launch.desc = k.desc;
  launch.process = k.process;
  launch.process_launch = k.process_launch;
  launch.footprint = k.occupancy.footprint;
  launch.shared_memory_config = k.occupancy.shared_memory_config;
  std::uint32_t tb = 0;
  if (!k.preempted_tbs.empty()) {
    // PTBQ first (Tanasic 3.3): keeps the number of preempted TBs, and their handles, small. The TB
    // resumes where it stopped: its context is restored and it runs only what it had left.
    PtbqEntry entry = std::move(k.preempted_tbs.front());
    k.preempted_tbs.pop_front();
    tb = entry.tb;
    launch.resumed = true;
    launch.resume = std::move(entry.resume);
    launch.restore_bytes = context_bytes_per_tb(*k.desc);
    if (tb_states_[index(kernel)][tb] != TbState::kPreempted) {
      violation("re-issued thread block " + std::to_string(tb) + " that was not preempted", sm, kernel);
    }
    ++tbs_reissued_;
  } else {
    tb = k.next_tb++;
    if (tb_states_[index(kernel)][tb] != TbState::kNotIssued) {
      violation("issued thread block " + std::to_string(tb) + " twice", sm, kernel);
    }
    ++tbs_issued_;
  }
  launch.tb = tb;
  tb_states_[index(kernel)][tb] = TbState::kRunning;
  const TimePs t = now();
  if (k.start_ps == kNever) k.start_ps = t;
  ++k.issued_tbs;

  SmStatus& status = framework_.sm(sm);
  if (status.running_tbs == 0) {  // SM set up for this kernel
    status.kernel = kernel;
    status.context = k.process;
  }
  if (status.state == SmState::kIdle) status.state = SmState::kRunning;
  ++status.running_tbs;
  bool found = false;
  for (auto& r : status.residents) {
    if (r.kernel == kernel) {
      ++r.tbs;
      found = true;
      break;
    }
  }
  if (!found) status.residents.push_back({kernel, 1});

  ports_[index(sm)]->start_tb(launch);
  policy_->on_tb_started(sm, kernel, *this);
}

void SmDriver::on_tb_complete(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps) {
  const TimePs t = now();
  auto& state = tb_states_[index(kernel)][tb];
  if (state != TbState::kRunning) {
    violation("thread block " + std::to_string(tb) + " completed twice", sm, kernel);
  }
  state = TbState::kDone;
  ++tbs_completed_;
  if (trace_ != nullptr) trace_->on_tb(sm, kernel, tb, start_ps, t);

  SmStatus& status = framework_.sm(sm);
  auto it = std::find_if(status.residents.begin(), status.residents.end(),
                         [&](const ResidentKernel& r) { return r.kernel == kernel; });
  if (it == status.residents.end() || it->tbs == 0 || status.running_tbs == 0) {
    violation("completion of a thread block the SMST does not hold", sm, kernel);
  }
  --status.running_tbs;
  if (--it->tbs == 0) {
    status.residents.erase(it);
    if (status.kernel == kernel && !status.residents.empty()) {
      status.kernel = status.residents.front().kernel;
      status.context = framework_.kernel(*status.kernel).process;
    }
  }

  KernelStatus& k = framework_.kernel(kernel);
  ++k.completed_tbs;
  policy_->on_tb_finished(sm, kernel, t - start_ps, *this);
  if (k.finished()) finish_kernel(kernel);
  settle_sm(sm);
  if (hooks_.sm_changed) hooks_.sm_changed(sm);
  if ((tbs_completed_ & 0xFFFFU) == 0 && hooks_.progress) hooks_.progress();
}

void SmDriver::finish_kernel(KernelId kernel) {
  KernelStatus& k = framework_.kernel(kernel);
  k.end_ps = now();
  // Every thread block ran exactly once: check it now and free the per-TB states, so memory holds
  // only the kernels still running, not every launch of a long workload.
  auto& states = tb_states_[index(kernel)];
  for (std::size_t tb = 0; tb < states.size(); ++tb) {
    if (states[tb] != TbState::kDone) {
      violation("thread block " + std::to_string(tb) + " never completed", SmId{0}, kernel);
    }
  }
  std::vector<TbState>().swap(states);
  framework_.retire(kernel);
  for (std::uint32_t s = 0; s < framework_.num_sms(); ++s) {
    auto& limits = framework_.sm(SmId{s}).limits;
    limits.erase(std::remove_if(limits.begin(), limits.end(),
                                [&](const ResidencyLimit& l) { return l.kernel == kernel; }),
                 limits.end());
  }
  policy_->on_kernel_finished(kernel, *this);
  hooks_.kernel_finished(kernel);
  admit_waiting();
}

void SmDriver::settle_sm(SmId sm) {
  SmStatus& status = framework_.sm(sm);
  if (status.state == SmState::kReserved) {
    if (status.running_tbs != 0) return;
    if (open_preemption_[index(sm)] < preemptions_.size()) {
      preemptions_[open_preemption_[index(sm)]].done_ps = now();
      open_preemption_[index(sm)] = kNoRecord;
    }
    // The preemption is complete: set the SM up for the kernel in `next` (Fig. 3).
    const KernelId preempted = status.kernel.value_or(KernelId{0});
    status.state = SmState::kIdle;
    status.kernel.reset();
    status.context.reset();
    const std::optional<KernelId> next = status.next;
    status.next.reset();
    if (next && framework_.kernel(*next).active) {
      status.state = SmState::kRunning;
      status.kernel = next;
      status.context = framework_.kernel(*next).process;
      policy_->on_preemption_done(sm, preempted, *this);
      try_issue(sm);
    } else {
      // The kernel it was reserved for finished meanwhile: the SM is simply idle.
      policy_->on_preemption_done(sm, preempted, *this);
      if (status.state == SmState::kIdle) policy_->on_sm_idle(sm, *this);
      return;
    }
  } else if (status.state == SmState::kRunning) {
    try_issue(sm);
  }
  if (status.state == SmState::kRunning && status.running_tbs == 0) {
    if (!ports_[index(sm)]->usage().empty()) {
      violation("SM resources not returned to zero", sm, *status.kernel);
    }
    status.state = SmState::kIdle;
    status.kernel.reset();
    status.context.reset();
    policy_->on_sm_idle(sm, *this);
  }
}

void SmDriver::check_final_invariants() const {
  for (const KernelStatus& k : framework_.all_kernels()) {
    if (!k.finished()) {
      violation("kernel did not finish: " + std::to_string(k.completed_tbs) + " of " +
                    std::to_string(k.total_tbs) + " thread blocks completed",
                SmId{0}, k.id);
    }
    const auto& states = tb_states_[index(k.id)];
    for (std::size_t tb = 0; tb < states.size(); ++tb) {
      if (states[tb] != TbState::kDone) {
        violation("thread block " + std::to_string(tb) + " never completed", SmId{0}, k.id);
      }
    }
  }
  for (std::uint32_t s = 0; s < framework_.num_sms(); ++s) {
    const SmStatus& status = framework_.sm(SmId{s});
    const SmUsage& usage = ports_[s]->usage();
    if (!usage.empty() || status.running_tbs != 0 || status.state != SmState::kIdle) {
      std::ostringstream msg;
      msg << "invariant violated at end of run on SM " << s << ": state " << to_string(status.state) << ", "
          << usage.thread_blocks << " TBs, " << usage.registers << " registers, " << usage.shared_memory
          << " B shared memory, " << usage.threads << " threads still held";
      throw InvariantViolation(msg.str());
    }
  }
  if (tbs_issued_ != tbs_completed_) {
    throw InvariantViolation("invariant violated at end of run: " + std::to_string(tbs_issued_) +
                             " thread blocks issued but " + std::to_string(tbs_completed_) + " completed");
  }
}

std::string SmDriver::describe(KernelId kernel) const {
  if (index(kernel) >= framework_.all_kernels().size()) return "#" + std::to_string(index(kernel));
  const KernelStatus& k = framework_.kernel(kernel);
  std::string process =
      index(k.process) < hooks_.process_names.size() ? hooks_.process_names[index(k.process)] : "?";
  return "'" + k.desc->name + "' (launch #" + std::to_string(index(kernel)) + ", process " + process + ")";
}

void SmDriver::violation(const std::string& what, SmId sm, KernelId kernel) const {
  std::ostringstream msg;
  msg << "invariant violated at " << ns_from_ps(now()) << " ns on SM " << index(sm) << ", kernel "
      << describe(kernel) << ": " << what;
  throw InvariantViolation(msg.str());
}

}  // namespace gpumux
