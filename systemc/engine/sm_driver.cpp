#include "engine/sm_driver.h"

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "engine/active_cores/onac.h"
#include "engine/active_cores/seq_det.h"

namespace gpumux {

SmDriver::SmDriver(const GpuConfig& gpu, std::unique_ptr<SchedulingPolicy> policy, Hooks hooks)
    : EngineControl(framework_),  // stores the reference only: framework_ is built below
      gpu_(gpu),
      framework_(gpu.num_sms, gpu.active_kernels == 0 ? gpu.num_sms : gpu.active_kernels),
      policy_(std::move(policy)),
      hooks_(std::move(hooks)) {
  select_only_reads_ = policy_->select_kernel_only_reads();
  observes_tbs_ = policy_->observes_thread_blocks();
  open_preemption_.assign(gpu.num_sms, kNoRecord);
  awaiting_setup_.assign(gpu.num_sms, kNoRecord);
  perf_sat_on_ = gpu.perf_sat.enabled;
  if (perf_sat_on_) perf_sat_.resize(gpu.num_sms);
  ac_count_ = gpu.num_sms;
  ac_on_ = gpu.active_cores.detector != ActiveCoreDetectorKind::kNone;
  if (ac_on_) {
    if (gpu.active_cores.detector == ActiveCoreDetectorKind::kOnac) {
      ac_detector_ = std::make_unique<OnacDetector>(gpu.active_cores.tolerance);
    } else {
      ac_detector_ = std::make_unique<SeqDetDetector>(gpu.active_cores.tolerance);
    }
    ac_gated_since_.assign(gpu.num_sms, kNever);
    ac_gated_ps_.assign(gpu.num_sms, 0);
  }
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

namespace {
/// Work items one cascade of hooks may queue before the driver calls it a livelock (a policy assigning
/// an SM that select_kernel() then leaves empty, over and over). A real cascade queues at most a few
/// items per SM for each hook it raises, and raises a few hooks per SM: O(N_SM^2) with a small factor.
std::uint64_t max_deferred_per_cascade(std::uint32_t num_sms) {
  const std::uint64_t n = std::uint64_t{num_sms} + 1;
  return 64 * n * n + 65536;
}
}  // namespace

bool SmDriver::issue_one(SmId sm) {
  last_check_.valid = false;
  running_query_ = "select_kernel";
  const std::optional<KernelId> choice = policy_->select_kernel(sm, *this);
  running_query_ = nullptr;
  if (!choice) return false;
  const bool checked = last_check_.valid && last_check_.sm == sm && last_check_.kernel == *choice;
  if (!(checked ? last_check_.answer : issue_allowed(sm, *choice))) return false;
  issue_tb(sm, *choice);
  return true;
}

template <typename Call>
void SmDriver::call_hook(const char* name, Call&& call) {
  if (running_hook_ != nullptr) {
    throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now())) +
                             " ns: policy hook " + name + " called while " + running_hook_ + " runs");
  }
  running_hook_ = name;
  std::forward<Call>(call)();
  running_hook_ = nullptr;
  if (!deferred_.empty()) apply_deferred();  // most hooks queue nothing: no call
  if (trace_ != nullptr) report_tokens();
}

void SmDriver::wake_at(TimePs at_ps) const {
  if (at_ps < now()) {
    throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now())) + " ns: policy " +
                             policy_->name() + " asked to be woken in the past, at " +
                             std::to_string(ns_from_ps(at_ps)) + " ns");
  }
  if (!hooks_.wake_at) {
    throw InvariantViolation("policy " + policy_->name() + " asked for a timer, which this engine has not");
  }
  timer_ps_ = at_ps;
  hooks_.wake_at(at_ps);
}

void SmDriver::timer_fired() {
  if (timer_ps_ != now()) return;  // replaced by a later request
  timer_ps_ = kNever;
  call_hook("on_timer", [&] { policy_->on_timer(*this); });
}

void SmDriver::report_tokens() {
  const std::uint32_t slots = framework_.active_capacity();
  if (traced_tokens_.size() != slots) traced_tokens_.assign(slots, std::nullopt);
  for (std::uint32_t s = 0; s < slots; ++s) {
    const std::optional<std::int32_t> tokens = policy_->slot_tokens(s);
    if (tokens == traced_tokens_[s]) continue;
    traced_tokens_[s] = tokens;
    trace_->on_tokens(s, tokens, now());
  }
  // Active kernels: on an SM (as its SMST kernel or with resident blocks), else preempted or waiting.
  for (const KernelId k : framework_.active_queue()) {
    bool on_sm = false;
    for (std::uint32_t s = 0; s < framework_.num_sms() && !on_sm; ++s) {
      const SmStatus& sm = framework_.sm(SmId{s});
      on_sm = sm.kernel == k || sm.resident(k) != nullptr;
    }
    const KernelStatus& status = framework_.kernel(k);
    const KsrtState state = on_sm                           ? KsrtState::kRunning
                            : !status.preempted_tbs.empty() ? KsrtState::kPreempted
                                                            : KsrtState::kWaiting;
    if (traced_ksrt_.size() <= index(k)) traced_ksrt_.resize(index(k) + 1, KsrtState{});
    if (traced_ksrt_[index(k)] == state) continue;
    traced_ksrt_[index(k)] = state;
    trace_->on_ksrt_state(status.ksrt_slot, k, state, now());
  }
}

void SmDriver::defer(const DeferredWork& work) {
  deferred_.push_back(work);
  if (running_hook_ == nullptr) apply_deferred();
}

void SmDriver::apply_deferred() {
  // Nothing queued (most hooks), or the loop below is already working the queue off.
  if (deferred_.empty() || applying_) return;
  applying_ = true;
  const std::uint64_t limit = max_deferred_per_cascade(framework_.num_sms());
  std::uint64_t done = 0;
  while (!deferred_.empty()) {
    if (++done > limit) {
      throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now())) +
                               " ns: " + std::to_string(limit) +
                               " policy actions in one instant without settling (policy " + policy_->name() +
                               " and the SM driver call each other without end)");
    }
    const DeferredWork work = deferred_.front();
    deferred_.pop_front();
    do_work(work);
  }
  applying_ = false;
}

void SmDriver::do_work(const DeferredWork& work) {
  switch (work.kind) {
    case DeferredWork::Kind::kIssue: {
      SmStatus& status = framework_.sm(work.sm);
      if (work.claimed != 0) {
        framework_.kernel(work.kernel).claimed_tbs -= work.claimed;
        status.claimed_tbs -= work.claimed;
        framework_.note_tbs_to_issue_changed();
      }
      try_issue(work.sm);
      // Set up for a kernel but given no thread block (select_kernel chose none): idle again.
      if (status.state == SmState::kRunning && status.running_tbs == 0 && status.claimed_tbs == 0) {
        settle_sm(work.sm);
        if (hooks_.sm_changed) hooks_.sm_changed(work.sm);
      }
      return;
    }
    case DeferredWork::Kind::kSave:
      ports_[index(work.sm)]->save_context();
      return;
    case DeferredWork::Kind::kSettle:
      settle_sm(work.sm);
      if (hooks_.sm_changed) hooks_.sm_changed(work.sm);
      return;
    case DeferredWork::Kind::kDeal: {
      bool any = true;
      while (any) {
        any = false;
        for (std::uint32_t s = 0; s < framework_.num_sms(); ++s) any = issue_one(SmId{s}) || any;
      }
      return;
    }
  }
}

void SmDriver::check_action_allowed(const char* action, SmId sm, KernelId kernel) const {
  if (running_query_ != nullptr) {
    violation(std::string("policy called ") + action + " from " + running_query_ +
                  ", which may only read the tables (policy.h)",
              sm, kernel);
  }
}

void SmDriver::admit_waiting() {
  // While the active queue has room, the policy reads one command buffer at a time (Tanasic 3.3);
  // the admitted kernels' arrival hooks run afterwards, in admission order.
  std::vector<KernelId> admitted;
  while (framework_.can_admit()) {
    const std::vector<KernelId> waiting = framework_.buffered();
    running_query_ = "select_admission";
    const KernelId choice = policy_->select_admission(waiting, *this);
    running_query_ = nullptr;
    if (std::find(waiting.begin(), waiting.end(), choice) == waiting.end()) {
      violation("policy " + policy_->name() + " admitted a kernel that is in no command buffer", SmId{0},
                choice);
    }
    framework_.admit(choice, now());
    if (trace_ != nullptr) trace_->on_ksrt(framework_.kernel(choice).ksrt_slot, choice, true, now());
    admitted.push_back(choice);
  }
  if (!admitted.empty() && hooks_.buffer_freed) hooks_.buffer_freed();
  for (KernelId k : admitted) {
    call_hook("on_kernel_arrival", [&] { policy_->on_kernel_arrival(k, *this); });
  }
}

std::uint32_t SmDriver::claim_for(SmId sm, const KernelStatus& kernel) const {
  std::uint32_t n = std::min(kernel.unissued_tbs(), kernel.occupancy.tbs_per_sm);
  const std::uint32_t limit = framework_.sm(sm).limit_for(kernel.id);
  return limit != 0 ? std::min(n, limit) : n;
}

bool SmDriver::fits_beside_claim(const SmStatus& status, const KernelStatus& kernel) const {
  // The SM is empty (it was idle when assigned); its claimed thread blocks are of status.kernel.
  const KernelStatus& claimant = framework_.kernel(*status.kernel);
  const bool same = claimant.id == kernel.id;
  if (!same && gpu_.sm.max_resident_kernels < 2) return false;
  const std::uint32_t limit = status.limit_for(kernel.id);
  if (same && limit != 0 && status.claimed_tbs >= limit) return false;
  SmUsage planned;
  for (std::uint32_t i = 0; i < status.claimed_tbs; ++i) planned.add(claimant.occupancy.footprint);
  return planned.admits(gpu_.sm, kernel.occupancy.footprint, kernel.occupancy.shared_memory_config,
                        claimant.occupancy.shared_memory_config);
}

bool SmDriver::can_issue(SmId sm, KernelId kernel) const {
  const bool answer = issue_allowed(sm, kernel);
  last_check_ = {sm, kernel, answer, true};
  return answer;
}

bool SmDriver::issue_allowed(SmId sm, KernelId kernel) const {
  const KernelStatus& k = framework_.kernel(kernel);
  if (!k.active || !k.has_tbs_to_issue()) return false;
  const SmStatus& status = framework_.sm(sm);
  if (status.state != SmState::kRunning || status.claimed_tbs != 0) {  // rare on the issue path
    if (status.state == SmState::kReserved) return false;
    if (status.claimed_tbs != 0) return fits_beside_claim(status, k);  // assigned in the running hook
  }
  const ResidentKernel* resident = status.resident(kernel);
  if (resident == nullptr && status.residents.size() >= gpu_.sm.max_resident_kernels) return false;
  const std::uint32_t limit = status.limit_for(kernel);
  if (limit != 0 && resident != nullptr && resident->tbs >= limit) return false;
  if (perf_sat_on_ && !perf_sat_allows(sm, kernel, resident != nullptr ? resident->tbs : 0)) return false;
  if (ac_on_ && ac_paused(sm)) return false;  // 4.4.2.3: CTAs only to cores active and not paused
  return ports_[index(sm)]->fits(k.occupancy.footprint, k.occupancy.shared_memory_config);
}

void SmDriver::assign_sm(SmId sm, KernelId kernel) {
  check_action_allowed("assign_sm", sm, kernel);
  KernelStatus& k = framework_.kernel(kernel);
  if (!k.active) violation("policy assigned an SM to a kernel not in the active queue", sm, kernel);
  SmStatus& status = framework_.sm(sm);
  if (status.state != SmState::kIdle) {
    violation(std::string("policy assigned a ") + to_string(status.state) + " SM", sm, kernel);
  }
  // A paused or gated SM takes no kernel (4.4.2.3): it stays idle and raises no hook, so a policy that
  // fills idle SMs does not assign it over and over (fcfs and fifo keep no state of their assignments;
  // other policies are refused with a detector on, check_active_cores_policy).
  if (ac_on_ && ac_paused(sm)) return;
  status.state = SmState::kRunning;
  status.kernel = kernel;
  status.context = k.process;
  // The thread blocks this SM will take, claimed until its issue runs after the hook.
  const std::uint32_t claim = claim_for(sm, k);
  k.claimed_tbs += claim;
  status.claimed_tbs += claim;
  framework_.note_tbs_to_issue_changed();
  if (hooks_.sm_changed) hooks_.sm_changed(sm);
  defer({DeferredWork::Kind::kIssue, sm, kernel, claim});
}

void SmDriver::request_issue(SmId sm) {
  check_action_allowed("request_issue", sm, framework_.sm(sm).kernel.value_or(KernelId{0}));
  defer({DeferredWork::Kind::kIssue, sm, KernelId{0}, 0});
}

void SmDriver::deal_thread_blocks() {
  check_action_allowed("deal_thread_blocks", SmId{0}, KernelId{0});
  defer({DeferredWork::Kind::kDeal, SmId{0}, KernelId{0}, 0});
}

void SmDriver::reserve_sm(SmId sm, KernelId next) {
  check_action_allowed("reserve_sm", sm, next);
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
    defer({DeferredWork::Kind::kSettle, sm, next, 0});
  } else {
    for (const ResidentKernel& r : status.residents) ++framework_.kernel(r.kernel).preemptions;
    open_preemption_[index(sm)] = preemptions_.size();
    preemptions_.push_back({sm, status.kernel.value_or(next), preemption_, now(), 0, 0});
    // Context switch: stop the SM and save every resident TB's context (Tanasic 3.2). Draining: stop
    // issuing; the SM is preempted when its resident TBs finish.
    if (preemption_ == PreemptionMechanism::kContextSwitch) defer({DeferredWork::Kind::kSave, sm, next, 0});
  }
  if (hooks_.sm_changed) hooks_.sm_changed(sm);
}

void SmDriver::on_context_saved(SmId sm, const std::vector<PreemptedTb>& saved, const ContextSave& save) {
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
    framework_.note_tbs_to_issue_changed();
    if (trace_ != nullptr) trace_->on_tb({sm, p.kernel, p.tb, p.resident_ps, p.stopped_ps, false});
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
    PreemptionRecord& record = preemptions_[open_preemption_[index(sm)]];
    record.bytes = save.bytes;
    record.drain_ps = save.drain_ps;
    record.trap_ps = save.trap_ps;
    record.save_start_ps = save.write_start_ps;
  }
  settle_sm(sm);
  if (hooks_.sm_changed) hooks_.sm_changed(sm);
}

void SmDriver::set_residency_limit(SmId sm, KernelId kernel, std::uint32_t limit) {
  check_action_allowed("set_residency_limit", sm, kernel);
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
  // After a thread block that filled the SM for every kernel, asking the policy again could only end
  // the loop: a policy whose query only reads is not asked (issue 20: the query, its can_issue and the
  // SM's resource check were about a tenth of a thread block's instructions).
  while (issue_one(sm)) {
    if (select_only_reads_ && !room_for_any_kernel(sm)) return;
  }
}

bool SmDriver::room_for_any_kernel(SmId sm) {
  // An SM assigned in a running hook is planned from its claim (fits_beside_claim), not its resources.
  if (framework_.sm(sm).claimed_tbs != 0) return true;
  // The kernels with thread blocks to issue changed (the epoch moves whenever some kernel's
  // has_tbs_to_issue() may have, or the active queue did).
  if (least_epoch_ != framework_.tbs_to_issue_epoch()) recompute_least_footprint();
  return any_to_issue_ && ports_[index(sm)]->fits(least_footprint_, least_carve_out_);
}

void SmDriver::recompute_least_footprint() {
  least_epoch_ = framework_.tbs_to_issue_epoch();
  any_to_issue_ = false;
  for (const KernelId id : framework_.active_queue()) {
    const KernelStatus& k = framework_.kernel(id);
    if (!k.has_tbs_to_issue()) continue;
    const TbFootprint& f = k.occupancy.footprint;
    if (!any_to_issue_) {
      least_footprint_ = f;
      least_carve_out_ = k.occupancy.shared_memory_config;
      any_to_issue_ = true;
      continue;
    }
    least_footprint_.registers = std::min(least_footprint_.registers, f.registers);
    least_footprint_.shared_memory = std::min(least_footprint_.shared_memory, f.shared_memory);
    least_footprint_.threads = std::min(least_footprint_.threads, f.threads);
    least_footprint_.warps = std::min(least_footprint_.warps, f.warps);
    least_carve_out_ = std::min(least_carve_out_, k.occupancy.shared_memory_config);
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
  // The one issue-state change on every thread block: it changes has_tbs_to_issue() only when it takes
  // the kernel's last thread block (with a claim pending elsewhere, when it may).
  if (k.claimed_tbs != 0 || !k.has_tbs_to_issue()) framework_.note_tbs_to_issue_changed();
  launch.tb = tb;
  launch.after_preemption = awaiting_setup_[index(sm)] != kNoRecord;
  tb_states_[index(kernel)][tb] = TbState::kRunning;
  const TimePs t = now();
  const bool first_tb = k.start_ps == kNever;
  if (first_tb) k.start_ps = t;
  ++k.issued_tbs;

  SmStatus& status = framework_.sm(sm);
  if (status.running_tbs == 0) {  // SM set up for this kernel
    status.kernel = kernel;
    status.context = k.process;
  }
  if (status.state == SmState::kIdle) {
    status.state = SmState::kRunning;
    if (hooks_.sm_changed) hooks_.sm_changed(sm);
  }
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

  const TimePs setup_wait = ports_[index(sm)]->start_tb(launch);
  if (awaiting_setup_[index(sm)] != kNoRecord) {
    preemptions_[awaiting_setup_[index(sm)]].setup_ps = setup_wait;
    if (trace_ != nullptr && setup_wait > 0) trace_->on_setup(sm, now(), now() + setup_wait);
    awaiting_setup_[index(sm)] = kNoRecord;
  }
  if (perf_sat_on_) {
    // Awatramani 4.3.2.2: Perf-Sat starts when work from a new kernel starts on the SM.
    PerfSatSm& p = perf_sat_[index(sm)];
    if (!p.machine || (p.kernel != kernel && status.resident(p.kernel) == nullptr)) perf_sat_bind(sm, kernel);
  }
  if (observes_tbs_) {
    running_query_ = "on_tb_started";
    policy_->on_tb_started(sm, kernel, *this);
    running_query_ = nullptr;
  }
  if (ac_on_ && first_tb && !ac_kernel_) ac_kernel_started(kernel);
}

void SmDriver::on_tb_restored(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps, TimePs done_ps) {
  if (trace_ != nullptr) trace_->on_tb_restored(sm, kernel, tb, start_ps, done_ps);
}

void SmDriver::on_tb_complete(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps) {
  const TimePs t = now();
  auto& state = tb_states_[index(kernel)][tb];
  if (state != TbState::kRunning) {
    violation("thread block " + std::to_string(tb) + " completed twice", sm, kernel);
  }
  state = TbState::kDone;
  ++tbs_completed_;
  if (trace_ != nullptr) trace_->on_tb({sm, kernel, tb, start_ps, t, true});

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
  k.tb_time_ps += t - start_ps;
  if (perf_sat_on_) perf_sat_first_completion(sm, kernel);
  if (ac_on_ && ac_kernel_) ac_on_complete(sm, kernel);
  if (observes_tbs_) {
    call_hook("on_tb_finished", [&] { policy_->on_tb_finished(sm, kernel, t - start_ps, *this); });
  } else if (trace_ != nullptr) {
    report_tokens();  // what call_hook() does after a hook that changes nothing: the trace stays the same
  }
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
  if (perf_sat_on_) {
    for (std::uint32_t s = 0; s < framework_.num_sms(); ++s) {
      if (perf_sat_[s].machine && perf_sat_[s].kernel == kernel) perf_sat_unbind(SmId{s});
    }
    perf_sat_rearm();
  }
  if (ac_on_ && ac_kernel_ == kernel) ac_kernel_finished();
  framework_.retire(kernel);
  if (trace_ != nullptr) trace_->on_ksrt(framework_.kernel(kernel).ksrt_slot, kernel, false, now());
  for (std::uint32_t s = 0; s < framework_.num_sms(); ++s) {
    auto& limits = framework_.sm(SmId{s}).limits;
    limits.erase(std::remove_if(limits.begin(), limits.end(),
                                [&](const ResidencyLimit& l) { return l.kernel == kernel; }),
                 limits.end());
  }
  call_hook("on_kernel_finished", [&] { policy_->on_kernel_finished(kernel, *this); });
  hooks_.kernel_finished(kernel);
  admit_waiting();
}

void SmDriver::settle_sm(SmId sm) {
  settle_sm_quietly(sm);
  if (hooks_.sm_changed) hooks_.sm_changed(sm);  // after every path: the waveform's SMST entry
}

void SmDriver::settle_sm_quietly(SmId sm) {
  SmStatus& status = framework_.sm(sm);
  if (status.state == SmState::kReserved) {
    settle_reserved_sm(sm);
    return;
  }
  if (status.state == SmState::kRunning) try_issue(sm);
  if (status.state == SmState::kRunning && status.running_tbs == 0) {
    if (!ports_[index(sm)]->usage().empty()) {
      violation("SM resources not returned to zero", sm, *status.kernel);
    }
    status.state = SmState::kIdle;
    status.kernel.reset();
    status.context.reset();
    call_hook("on_sm_idle", [&] { policy_->on_sm_idle(sm, *this); });
  }
}

void SmDriver::settle_reserved_sm(SmId sm) {
  SmStatus& status = framework_.sm(sm);
  if (status.running_tbs != 0) return;
  if (open_preemption_[index(sm)] < preemptions_.size()) {
    preemptions_[open_preemption_[index(sm)]].done_ps = now();
    awaiting_setup_[index(sm)] = open_preemption_[index(sm)];
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
    call_hook("on_preemption_done", [&] { policy_->on_preemption_done(sm, preempted, *this); });
    // Issue for `next` after the work of the hook's actions (as if they had run inside it); an SM
    // that then receives nothing goes idle there (do_work).
    defer({DeferredWork::Kind::kIssue, sm, *next, 0});
  } else {
    // The kernel it was reserved for finished meanwhile: the SM is simply idle.
    call_hook("on_preemption_done", [&] { policy_->on_preemption_done(sm, preempted, *this); });
    if (status.state == SmState::kIdle) call_hook("on_sm_idle", [&] { policy_->on_sm_idle(sm, *this); });
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
  if (!deferred_.empty() || running_hook_ != nullptr) {
    throw InvariantViolation("invariant violated at end of run: policy actions left undone");
  }
  for (std::uint32_t s = 0; s < framework_.num_sms(); ++s) {
    if (framework_.sm(SmId{s}).claimed_tbs != 0) {
      throw InvariantViolation("invariant violated at end of run on SM " + std::to_string(s) +
                               ": thread blocks still claimed by an assignment");
    }
  }
  if (ac_on_ && (ac_kernel_ || ac_count_ != framework_.num_sms())) {
    throw InvariantViolation("invariant violated at end of run: active-core detection left " +
                             std::to_string(framework_.num_sms() - ac_count_) + " SMs paused or gated");
  }
  for (const TimePs since : ac_gated_since_) {
    if (since != kNever) throw InvariantViolation("invariant violated at end of run: an SM is still gated");
  }
  if (tbs_issued_ != tbs_completed_) {
    throw InvariantViolation("invariant violated at end of run: " + std::to_string(tbs_issued_) +
                             " thread blocks issued but " + std::to_string(tbs_completed_) + " completed");
  }
}

// Perf-Sat (Awatramani 4.3): an SM-driver mode under every policy. Each SM's machine (engine/perf_sat.h)
// is bound to the kernel whose thread block starts work on the idle SM (or on an SM the bound kernel
// has left) and limits that kernel's resident thread blocks there; other kernels sharing the SM are not
// limited. N_max is the kernel's occupancy (thread blocks per SM by its resources); a policy's residency
// limit still applies on top.

bool SmDriver::perf_sat_allows(SmId sm, KernelId kernel, std::uint32_t resident) const {
  const PerfSatSm& p = perf_sat_[index(sm)];
  if (!p.machine || p.kernel != kernel) return true;
  return resident < p.machine->limit();
}

void SmDriver::perf_sat_bind(SmId sm, KernelId kernel) {
  PerfSatSm& p = perf_sat_[index(sm)];
  if (p.machine) perf_sat_unbind(sm);
  const KernelStatus& k = framework_.kernel(kernel);
  p.machine.emplace(k.occupancy.tbs_per_sm, gpu_.perf_sat.max_toggles);
  p.kernel = kernel;
  p.record = perf_sat_records_.size();
  PerfSatRecord record;
  record.sm = sm;
  record.kernel = kernel;
  record.n_max = p.machine->n_max();
  record.start = p.machine->start();
  record.bound_ps = now();
  if (p.machine->settled()) {  // N_max 1: nothing to detect
    record.settled = true;
    record.settled_ps = now();
    record.settled_by = p.machine->settled_by();
  }
  perf_sat_records_.push_back(std::move(record));
  if (!p.machine->settled() && gpu_.perf_sat.sample_period_cycles != 0) {
    perf_sat_start_window(sm, gpu_.cycles_to_ps(gpu_.perf_sat.sample_period_cycles));
  }
}

void SmDriver::perf_sat_unbind(SmId sm) {
  PerfSatSm& p = perf_sat_[index(sm)];
  perf_sat_records_[p.record].detected = p.machine->limit();
  p.machine.reset();
  p.next_sample_ps = kNever;
}

void SmDriver::perf_sat_first_completion(SmId sm, KernelId kernel) {
  // 4.3.2.2 phase 1: the sample period is One_TB_cycles * N_max, One_TB_cycles the time from the start
  // of the kernel's work on the SM to its first thread block's completion.
  PerfSatSm& p = perf_sat_[index(sm)];
  if (!p.machine || p.kernel != kernel || p.machine->settled()) return;
  PerfSatRecord& record = perf_sat_records_[p.record];
  if (record.period_ps != 0 || gpu_.perf_sat.sample_period_cycles != 0) return;
  perf_sat_start_window(sm, std::max<TimePs>(1, (now() - record.bound_ps) * p.machine->n_max()));
}

void SmDriver::perf_sat_start_window(SmId sm, TimePs period_ps) {
  PerfSatSm& p = perf_sat_[index(sm)];
  perf_sat_records_[p.record].period_ps = period_ps;
  p.window_start = ports_[index(sm)]->stall_reading();
  p.next_sample_ps = now() + period_ps;
  perf_sat_rearm();
}

void SmDriver::perf_sat_timer_fired() {
  perf_sat_timer_ps_ = kNever;
  const TimePs t = now();
  for (std::uint32_t s = 0; s < framework_.num_sms(); ++s) {
    if (perf_sat_[s].machine && perf_sat_[s].next_sample_ps <= t) perf_sat_take_sample(SmId{s});
  }
  perf_sat_rearm();
}

void SmDriver::perf_sat_take_sample(SmId sm) {
  PerfSatSm& p = perf_sat_[index(sm)];
  if (!framework_.kernel(p.kernel).has_tbs_to_issue()) {
    // Every thread block is out: a limit changes nothing any more, and the SMs draining the kernel's last
    // blocks stall less than the kernel does. The count stays as it is (stats.json: detected, not settled).
    p.next_sample_ps = kNever;
    return;
  }
  PerfSatRecord& record = perf_sat_records_[p.record];
  const StallReading reading = ports_[index(sm)]->stall_reading();
  PerfSatSample sample;
  sample.end_ps = now();
  sample.blocks = p.machine->limit();
  sample.stalled = reading.stalled - p.window_start.stalled;
  sample.instructions = reading.instructions - p.window_start.instructions;
  sample.cycles = reading.cycles - p.window_start.cycles;
  p.machine->sample(sample.stalled);
  sample.next = p.machine->limit();
  sample.state = p.machine->state();
  record.samples.push_back(sample);
  p.window_start = reading;
  if (p.machine->settled()) {
    record.settled = true;
    record.settled_ps = now();
    record.settled_by = p.machine->settled_by();
    record.detected = p.machine->limit();
    p.next_sample_ps = kNever;
  } else {
    p.next_sample_ps = now() + record.period_ps;
  }
  // A higher limit: issue into the room now (a lower one takes effect as thread blocks complete).
  if (sample.next > sample.blocks && framework_.sm(sm).state == SmState::kRunning) {
    defer({DeferredWork::Kind::kIssue, sm, KernelId{0}, 0});
  }
}

void SmDriver::perf_sat_rearm() {
  TimePs earliest = kNever;
  for (const PerfSatSm& p : perf_sat_) earliest = std::min(earliest, p.next_sample_ps);
  if (earliest == perf_sat_timer_ps_) return;
  if (!hooks_.perf_sat_wake_at) {
    throw InvariantViolation("Perf-Sat is on, but this engine has no timer for its samples");
  }
  perf_sat_timer_ps_ = earliest;
  hooks_.perf_sat_wake_at(earliest);
}

// Active cores (Awatramani 4.4): the SM Work Manager's detection (4.4.2.3) for the first kernel that starts
// while none is under detection. The detector (engine/active_cores/) asks for a count; SMs [0, count) are
// active, the others paused: can_issue() refuses them and assign_sm() leaves them idle. Pausing here lets
// a paused SM's resident thread blocks finish (the thesis's cores stop issuing instructions and keep their
// warps, 4.4.2.5; a thread block is the driver's unit), and a sample starts only once the paused SMs are
// empty (4.4.2.4: the cores wait for what is in flight). After one wave of warm-up (ac_start_sample), a
// sample ends when sampling_period_waves waves of the kernel's thread blocks (a wave: active SMs x the
// kernel's occupancy, 4.4.2.4) completed on the active SMs; its IPC is the GPU's warp instructions over
// its core cycles. Once detected, the SMs above
// the count are power gated as they empty (4.4.2.5) until the kernel finishes; then every SM is active.

void SmDriver::ac_kernel_started(KernelId kernel) {
  ac_kernel_ = kernel;
  ActiveCoreRecord record;
  record.launch = index(kernel);
  record.detector = ac_detector_->name();
  record.cores = framework_.num_sms();
  record.start_ps = now();
  ac_records_.push_back(std::move(record));
  const ActiveCoreDecision first = ac_detector_->start(framework_.num_sms());
  ac_set_count(first.active_cores);
  if (first.detected) {  // a one-SM GPU: nothing to detect
    ac_records_.back().detected = true;
    ac_records_.back().detected_ps = now();
    ac_records_.back().n_opt = first.active_cores;
    ac_records_.back().ended_by = "detected";
    ac_phase_ = AcPhase::kGating;
    return;
  }
  ac_phase_ = AcPhase::kDraining;
  if (ac_drained()) ac_start_sample();
}

std::uint64_t SmDriver::ac_instructions() const {
  std::uint64_t sum = 0;
  for (SmPort* port : ports_) sum += port->stall_reading().instructions;
  return sum;
}

bool SmDriver::ac_drained() const {
  for (std::uint32_t s = ac_count_; s < framework_.num_sms(); ++s) {
    if (framework_.sm(SmId{s}).running_tbs != 0) return false;
  }
  return true;
}

void SmDriver::ac_start_sample() {
  // The sample's window opens after one wave of warm-up at the new count (ac_on_complete), marked by
  // ac_sample_start_ps_ == kNever: the cores the count brings in start their blocks together, in step, and
  // the first wave of a kernel or of newly un-paused cores runs at an IPC the later, desynchronised waves do
  // not (on this model up to a sixth above the kernel's mean: docs/validation.md "ONAC and Seq-Det"). The
  // thesis's 4-wave average is to give "a stable IPC value that is close to the kernel's average IPC"
  // (4.4.2.4); the warm-up is our choice for that, the same for every kernel and count.
  ac_phase_ = AcPhase::kSampling;
  ac_sample_start_ps_ = kNever;
  ac_sample_tbs_ = 0;
}

void SmDriver::ac_set_count(std::uint32_t count) {
  const std::uint32_t before = ac_count_;
  ac_count_ = count;
  // Un-paused SMs take thread blocks at once; SMs newly paused keep their resident blocks to the end.
  for (std::uint32_t s = before; s < count; ++s) defer({DeferredWork::Kind::kIssue, SmId{s}, KernelId{0}, 0});
}

void SmDriver::ac_gate_drained() {
  for (std::uint32_t s = ac_count_; s < framework_.num_sms(); ++s) {
    if (ac_gated_since_[s] == kNever && framework_.sm(SmId{s}).running_tbs == 0) ac_gated_since_[s] = now();
  }
}

void SmDriver::ac_on_complete(SmId sm, KernelId kernel) {
  switch (ac_phase_) {
    case AcPhase::kDraining:
      if (ac_drained()) ac_start_sample();
      return;
    case AcPhase::kSampling: {
      if (kernel != *ac_kernel_ || ac_paused(sm)) return;
      const std::uint64_t wave = std::uint64_t{ac_count_} * framework_.kernel(kernel).occupancy.tbs_per_sm;
      if (ac_sample_start_ps_ == kNever) {  // warming up (ac_start_sample): the window opens after a wave
        if (++ac_sample_tbs_ >= wave) {
          ac_sample_start_ps_ = now();
          ac_sample_instructions_ = ac_instructions();
          ac_sample_tbs_ = 0;
        }
        return;
      }
      if (++ac_sample_tbs_ >= std::uint64_t{gpu_.active_cores.sampling_period_waves} * wave) ac_end_sample();
      return;
    }
    case AcPhase::kGating:
      ac_gate_drained();
      return;
    case AcPhase::kIdle:
    case AcPhase::kStopped:
      return;
  }
}

void SmDriver::ac_end_sample() {
  ActiveCoreRecord& record = ac_records_.back();
  if (!framework_.kernel(*ac_kernel_).has_tbs_to_issue()) {
    // Every block is out: the rest of the sample would be the kernel's tail, whose IPC falls as the SMs
    // empty whatever the count. Detection stops undetected; the count stays until the kernel finishes.
    record.n_opt = ac_count_;
    record.ended_by = "out of thread blocks";
    ac_phase_ = AcPhase::kStopped;
    return;
  }
  ActiveCoreSample sample;
  sample.active_cores = ac_count_;
  sample.start_ps = ac_sample_start_ps_;
  sample.end_ps = now();
  sample.instructions = ac_instructions() - ac_sample_instructions_;
  sample.thread_blocks = ac_sample_tbs_;
  const double cycles = gpu_.ps_to_cycles(sample.end_ps - sample.start_ps);
  sample.ipc = cycles > 0 ? static_cast<double>(sample.instructions) / cycles : 0.0;
  record.samples.push_back(sample);
  const ActiveCoreDecision next = ac_detector_->on_sample(sample.ipc);
  const std::uint32_t before = ac_count_;
  ac_set_count(next.active_cores);
  if (next.detected) {
    record.detected = true;
    record.detected_ps = now();
    record.n_opt = next.active_cores;
    record.ended_by = "detected";
    ac_phase_ = AcPhase::kGating;
    ac_gate_drained();
    return;
  }
  ac_phase_ = AcPhase::kDraining;
  if (next.active_cores >= before || ac_drained()) ac_start_sample();
}

void SmDriver::ac_kernel_finished() {
  ActiveCoreRecord& record = ac_records_.back();
  if (record.ended_by.empty()) {
    record.n_opt = ac_count_;
    record.ended_by = "kernel finished";
  }
  for (std::uint32_t s = 0; s < framework_.num_sms(); ++s) {
    if (ac_gated_since_[s] == kNever) continue;
    ac_gated_ps_[s] += now() - ac_gated_since_[s];
    ac_gated_since_[s] = kNever;
  }
  ac_kernel_.reset();
  ac_phase_ = AcPhase::kIdle;
  // Every SM is active again; the policy's on_kernel_finished (after this) fills the idle ones.
  ac_count_ = framework_.num_sms();
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
