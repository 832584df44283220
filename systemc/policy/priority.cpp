#include "policy/priority.h"

#include <algorithm>

namespace gpumux {

const OptionSpecs& PriorityPolicy::preemptive_option_specs() {
  static const OptionSpecs specs = {
      OptionSpec::choice(
          "access", {"shared", "exclusive"}, "shared",
          "shared: take only as many SMs as the higher-priority kernel can use; exclusive: the "
          "highest-priority kernel holds every SM until it finishes"),
  };
  return specs;
}

std::unique_ptr<SchedulingPolicy> PriorityPolicy::preemptive(const OptionValues& options) {
  return std::make_unique<PriorityPolicy>(options.choice("access") == "exclusive" ? Mode::kPreemptiveExclusive
                                                                                  : Mode::kPreemptiveShared);
}

std::string PriorityPolicy::name() const { return mode_ == Mode::kNonPreemptive ? "npq" : "ppq"; }

template <typename Want>
std::optional<KernelId> PriorityPolicy::best(const EngineControl& control, Want want) {
  std::optional<KernelId> chosen;
  for (KernelId k : control.active_kernels()) {
    if (!want(control.kernel(k))) continue;
    if (!chosen || control.kernel(k).priority > control.kernel(*chosen).priority) chosen = k;
  }
  return chosen;
}

std::uint32_t PriorityPolicy::sms_held(KernelId kernel, const EngineControl& control) {
  std::uint32_t held = 0;
  for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
    const SmStatus& sm = control.sm(SmId{s});
    if (sm.state == SmState::kReserved ? sm.next == kernel : sm.kernel == kernel) ++held;
  }
  return held;
}

void PriorityPolicy::fill_idle_sms(EngineControl& control) {
  // Exclusive access: while the most important unfinished kernel runs, nothing less important starts.
  int floor = 0;
  bool has_floor = false;
  if (mode_ == Mode::kPreemptiveExclusive) {
    if (auto top = best(control, [](const KernelStatus& k) { return !k.finished(); })) {
      floor = control.kernel(*top).priority;
      has_floor = true;
    }
  }
  for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
    if (control.sm(SmId{s}).state != SmState::kIdle) continue;
    const auto k = best(control, [&](const KernelStatus& ks) {
      return ks.has_tbs_to_issue() && (!has_floor || ks.priority >= floor);
    });
    if (!k) return;
    control.assign_sm(SmId{s}, *k);
  }
}

void PriorityPolicy::preempt_for_higher_priority(EngineControl& control) {
  while (true) {
    // The most important kernel that still wants SMs.
    const auto high = best(control, [&](const KernelStatus& k) {
      if (!k.has_tbs_to_issue()) return false;
      if (mode_ == Mode::kPreemptiveExclusive) return true;
      const std::uint32_t per_sm = std::max(1U, k.occupancy.tbs_per_sm);
      const std::uint32_t wanted = std::min(control.num_sms(), (k.unissued_tbs() + per_sm - 1) / per_sm);
      return sms_held(k.id, control) < wanted;
    });
    if (!high) return;
    for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
      if (control.sm(SmId{s}).state == SmState::kIdle) return;  // fill_idle_sms handles it
    }
    // Victim: a running SM whose kernel has the lowest priority (ties: the most recently admitted).
    const int high_priority = control.kernel(*high).priority;
    std::optional<SmId> victim;
    const KernelStatus* victim_kernel = nullptr;
    for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
      const SmStatus& sm = control.sm(SmId{s});
      if (sm.state != SmState::kRunning || !sm.kernel) continue;
      const KernelStatus& k = control.kernel(*sm.kernel);
      if (k.priority >= high_priority) continue;
      if (victim_kernel == nullptr || k.priority < victim_kernel->priority ||
          (k.priority == victim_kernel->priority && k.admitted_ps > victim_kernel->admitted_ps)) {
        victim = SmId{s};
        victim_kernel = &k;
      }
    }
    if (!victim) return;
    control.reserve_sm(*victim, *high);
  }
}

void PriorityPolicy::rebalance(EngineControl& control) {
  fill_idle_sms(control);
  if (mode_ != Mode::kNonPreemptive) preempt_for_higher_priority(control);
}

void PriorityPolicy::on_kernel_arrival(KernelId /*kernel*/, EngineControl& control) { rebalance(control); }
void PriorityPolicy::on_sm_idle(SmId /*sm*/, EngineControl& control) { rebalance(control); }
void PriorityPolicy::on_kernel_finished(KernelId /*kernel*/, EngineControl& control) { rebalance(control); }
void PriorityPolicy::on_preemption_done(SmId /*sm*/, KernelId /*preempted*/, EngineControl& control) {
  rebalance(control);
}

KernelId PriorityPolicy::select_admission(const std::vector<KernelId>& waiting,
                                          const EngineControl& control) {
  KernelId best_kernel = earliest_arrival(waiting, control);
  for (const KernelId k : waiting) {
    const KernelStatus& a = control.kernel(k);
    const KernelStatus& b = control.kernel(best_kernel);
    if (a.priority > b.priority ||
        (a.priority == b.priority &&
         (a.arrival_ps < b.arrival_ps || (a.arrival_ps == b.arrival_ps && index(k) < index(best_kernel))))) {
      best_kernel = k;
    }
  }
  return best_kernel;
}

}  // namespace gpumux
