#include "policy/intracore.h"

#include <algorithm>
#include <utility>

namespace gpumux {

namespace {

/// 5.5.1's partition, our rule (intracore.h): the most blocks of a kernel that fit in 1/n of every
/// resource of a core, at least 1, at most its occupancy alone.
std::uint32_t equal_share(const SmResources& sm, const Occupancy& occ, std::uint32_t n) {
  std::uint64_t fit = occ.tbs_per_sm;
  const auto limit = [&](std::uint64_t capacity, std::uint64_t need) {
    if (need != 0) fit = std::min(fit, capacity / n / need);
  };
  const TbFootprint& f = occ.footprint;
  limit(sm.registers, f.registers);
  limit(sm.max_threads, f.threads);
  limit(sm.max_warps, f.warps);
  limit(sm.max_thread_blocks, 1);
  limit(occ.shared_memory_config, f.shared_memory);
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, fit));
}

}  // namespace

const IntracorePolicy::CsbKernel* IntracorePolicy::CoreStatus::find(KernelId k) const {
  for (const CsbKernel& e : queue) {
    if (e.kernel == k) return &e;
  }
  return nullptr;
}

IntracorePolicy::IntracorePolicy(Mapping mapping, std::uint32_t ksb_entries, TimePs gather_ps,
                                 CoreAssignment assignment)
    : mapping_(mapping), assignment_(assignment), gather_ps_(gather_ps), ksb_(ksb_entries) {}

const OptionSpecs& IntracorePolicy::option_specs(Mapping mapping) {
  static const OptionSpecs interleaved = {
      OptionSpec::integer("ksb_entries", 1, 1024, 16,
                          "entries of the kernel status block (Awatramani Fig. 5.6): kernels that may be "
                          "scheduled at once; a launch beyond waits for an entry to be freed (5.4.1: the "
                          "launch fails and is retried). Default: the 16 concurrent kernels of Fermi"),
      OptionSpec::integer("gather_ns", 0, 1000000000, 0,
                          "issue no thread block until this long after the first launch, so kernels "
                          "launched together start together (Fig. 5.8)"),
  };
  static const OptionSpecs baseline = [] {
    OptionSpecs specs = interleaved;
    specs.push_back(OptionSpec::choice(
        "core_mapping", {"left-over", "round-robin"}, "left-over",
        "left-over: every core assigned the oldest kernel with blocks left (the order the thesis's baseline "
        "runs with, 5.3); round-robin: core c assigned the (c mod n)-th of the n kernels with blocks left "
        "(5.4.1: \"maps kernels to cores in a round robin order\"), kernels on disjoint cores"));
    return specs;
  }();
  return mapping == Mapping::kInterleaved ? interleaved : baseline;
}

std::unique_ptr<SchedulingPolicy> IntracorePolicy::create(Mapping mapping, const OptionValues& options) {
  const CoreAssignment assignment =
      mapping == Mapping::kBaseline && options.choice("core_mapping") == "round-robin"
          ? CoreAssignment::kRoundRobin
          : CoreAssignment::kLeftOver;
  return std::make_unique<IntracorePolicy>(
      mapping, static_cast<std::uint32_t>(options.integer("ksb_entries")),
      static_cast<TimePs>(options.integer("gather_ns")) * 1000, assignment);
}

IntracorePolicy::KsbEntry* IntracorePolicy::entry_of(KernelId k) {
  for (KsbEntry& e : ksb_) {
    if (e.valid && e.kernel == k) return &e;
  }
  return nullptr;
}

const IntracorePolicy::KsbEntry* IntracorePolicy::entry_of(KernelId k) const {
  for (const KsbEntry& e : ksb_) {
    if (e.valid && e.kernel == k) return &e;
  }
  return nullptr;
}

IntracorePolicy::CsbKernel* IntracorePolicy::queue_entry(CoreStatus& core, KernelId k) {
  for (CsbKernel& e : core.queue) {
    if (e.kernel == k) return &e;
  }
  return nullptr;
}

std::vector<KernelId> IntracorePolicy::issuing() const {
  std::vector<KernelId> set;
  for (KernelId k : launch_order_) {
    if (entry_of(k)->active) set.push_back(k);
  }
  return set;
}

bool IntracorePolicy::gathering(const EngineControl& control) const {
  return gather_ps_ > 0 && first_arrival_ && control.now() < *first_arrival_ + gather_ps_;
}

void IntracorePolicy::update(EngineControl& control) {
  if (csb_.empty()) csb_.resize(control.num_sms());
  // The KSB's next block and active bit as the launches left them (5.4.3).
  for (KsbEntry& e : ksb_) {
    if (!e.valid) continue;
    const KernelStatus& k = control.kernel(e.kernel);
    e.next_block = k.next_tb;
    e.active = k.has_tbs_to_issue();
  }
  // 5.4.3: a core drops an inactive kernel once it holds none of its blocks; the KSB entry is freed
  // when no core holds the kernel any more.
  for (CoreStatus& core : csb_) {
    for (auto it = core.queue.begin(); it != core.queue.end();) {
      KsbEntry* e = entry_of(it->kernel);
      if (e != nullptr && !e->active && it->active_blocks == 0) {
        --e->active_cores;
        it = core.queue.erase(it);
      } else {
        ++it;
      }
    }
    core.active_kernel = core.assigned_kernel;
    for (const CsbKernel& q : core.queue) {
      if (q.active_blocks > 0) {
        core.active_kernel = q.kernel;
        break;
      }
    }
  }
  for (KsbEntry& e : ksb_) {
    if (e.valid && !e.active && e.active_cores == 0) {
      e.valid = false;
      launch_order_.erase(std::find(launch_order_.begin(), launch_order_.end(), e.kernel));
    }
  }
  // A launch that found the KSB full takes the first entry freed (the host retries it).
  for (KsbEntry& e : ksb_) {
    if (waiting_.empty()) break;
    if (e.valid) continue;
    const KernelStatus& k = control.kernel(waiting_.front());
    waiting_.pop_front();
    e = KsbEntry{true,
                 k.id,
                 k.total_tbs,
                 k.next_tb,
                 k.has_tbs_to_issue(),
                 k.occupancy.footprint.registers,
                 k.occupancy.footprint.shared_memory,
                 0};
    launch_order_.push_back(k.id);
    if (mapping_ == Mapping::kInterleaved) {
      // 5.4.1: every kernel is mapped to every core.
      for (CoreStatus& core : csb_) core.queue.push_back({k.id, 0, 0});
      e.active_cores = control.num_sms();
    }
  }
  if (issuing() != mapped_for_) remap(control);
}

void IntracorePolicy::remap(EngineControl& control) {
  ++remaps_;
  mapped_for_ = issuing();
  const SmResources& res = control.sm_resources();
  const auto share_count =
      static_cast<std::uint32_t>(std::min<std::size_t>(mapped_for_.size(), res.max_resident_kernels));
  if (mapping_ == Mapping::kBaseline) {
    // Left-over: every core is assigned the oldest kernel with blocks left; round-robin: core c the
    // (c mod n)-th of them.
    for (std::size_t c = 0; c < csb_.size(); ++c) {
      CoreStatus& core = csb_[c];
      std::optional<KernelId> assigned;
      if (!mapped_for_.empty()) {
        assigned = assignment_ == CoreAssignment::kRoundRobin ? mapped_for_[c % mapped_for_.size()]
                                                              : mapped_for_.front();
      }
      core.assigned_kernel = assigned;
      if (assigned && queue_entry(core, *assigned) == nullptr) {
        core.queue.push_back({*assigned, control.kernel(*assigned).occupancy.tbs_per_sm, 0});
        ++entry_of(*assigned)->active_cores;
      }
      if (!core.active_kernel) core.active_kernel = assigned;
    }
    return;
  }
  // Interleaved (5.4.2): the maximum blocks of each kernel on each core, enforced by residency limits.
  for (std::uint32_t s = 0; s < csb_.size(); ++s) {
    for (CsbKernel& q : csb_[s].queue) {
      const auto pos = std::find(mapped_for_.begin(), mapped_for_.end(), q.kernel);
      std::uint32_t limit = 0;  // the SM driver's "resources only"
      if (pos == mapped_for_.end()) {
        q.max_blocks = q.active_blocks;  // all its blocks are launched: it takes no more
      } else if (static_cast<std::uint32_t>(pos - mapped_for_.begin()) >= share_count) {
        q.max_blocks = 0;  // more kernels than may share a core: waits for one to leave
      } else {
        const Occupancy& occ = control.kernel(q.kernel).occupancy;
        q.max_blocks = share_count == 1 ? occ.tbs_per_sm : equal_share(res, occ, share_count);
        if (q.max_blocks < occ.tbs_per_sm) limit = q.max_blocks;
      }
      if (control.sm(SmId{s}).limit_for(q.kernel) != limit) {
        control.set_residency_limit(SmId{s}, q.kernel, limit);
      }
    }
  }
}

void IntracorePolicy::hand_out(EngineControl& control) {
  if (gathering(control)) return;
  for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
    const SmId sm{s};
    const SmState state = control.sm(sm).state;
    if (state == SmState::kIdle) {
      if (const std::optional<KernelId> k = select_kernel(sm, control)) control.assign_sm(sm, *k);
    } else if (state == SmState::kRunning) {
      control.request_issue(sm);
    }
  }
}

void IntracorePolicy::on_kernel_arrival(KernelId kernel, EngineControl& control) {
  if (!first_arrival_) {
    first_arrival_ = control.now();
    if (gather_ps_ > 0) control.wake_at(control.now() + gather_ps_);
  }
  waiting_.push_back(kernel);
  update(control);
  hand_out(control);
}

void IntracorePolicy::on_sm_idle(SmId sm, EngineControl& control) {
  update(control);
  if (gathering(control)) return;
  if (const std::optional<KernelId> k = select_kernel(sm, control)) control.assign_sm(sm, *k);
}

void IntracorePolicy::on_tb_started(SmId sm, KernelId kernel, EngineControl& control) {
  // Bookkeeping only (no actions here, policy.h): the CSB's active blocks and the KSB's next block.
  if (csb_.empty()) csb_.resize(control.num_sms());
  if (CsbKernel* q = queue_entry(csb_[index(sm)], kernel)) ++q->active_blocks;
  csb_[index(sm)].active_kernel = kernel;
  if (KsbEntry* e = entry_of(kernel)) {
    e->next_block = control.kernel(kernel).next_tb;
    e->active = control.kernel(kernel).has_tbs_to_issue();
  }
}

void IntracorePolicy::on_tb_finished(SmId sm, KernelId kernel, TimePs /*duration_ps*/,
                                     EngineControl& control) {
  if (CsbKernel* q = queue_entry(csb_[index(sm)], kernel)) --q->active_blocks;
  const std::uint64_t before = remaps_;
  update(control);
  // A changed mapping may let kernels issue on other cores too (a lifted limit).
  if (remaps_ != before) hand_out(control);
}

void IntracorePolicy::on_kernel_finished(KernelId /*kernel*/, EngineControl& control) {
  update(control);
  hand_out(control);
}

void IntracorePolicy::on_timer(EngineControl& control) {
  update(control);
  hand_out(control);
}

std::optional<KernelId> IntracorePolicy::select_kernel(SmId sm, const EngineControl& control) {
  if (gathering(control) || csb_.empty()) return std::nullopt;
  const CoreStatus& core = csb_[index(sm)];
  if (mapping_ == Mapping::kBaseline) {
    // 5.4.2's two checks: the active kernel is the assigned one (no blocks of another kernel are left
    // on the core), and the core has room (can_issue: resources, the kernel's occupancy).
    if (!core.assigned_kernel) return std::nullopt;
    for (const ResidentKernel& r : control.sm(sm).residents) {
      if (r.kernel != *core.assigned_kernel && r.tbs > 0) return std::nullopt;
    }
    return control.can_issue(sm, *core.assigned_kernel) ? core.assigned_kernel : std::nullopt;
  }
  // 5.4.2: only kernels with fewer active blocks than their maximum are scheduled; of those, the one
  // furthest below its maximum (ties: launch order), so the kernels' blocks are interleaved.
  std::optional<KernelId> best;
  std::uint32_t best_room = 0;
  for (KernelId k : launch_order_) {
    const CsbKernel* q = core.find(k);
    if (q == nullptr || q->active_blocks >= q->max_blocks || !control.can_issue(sm, k)) continue;
    const std::uint32_t room = q->max_blocks - q->active_blocks;
    if (!best || room > best_room) {
      best = k;
      best_room = room;
    }
  }
  return best;
}

}  // namespace gpumux
