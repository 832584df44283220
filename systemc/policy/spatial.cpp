#include "policy/spatial.h"

#include <numeric>
#include <string>

#include "core/error.h"

namespace gpumux {

namespace {
constexpr std::int64_t kMaxSmsPerProcess = 1024;
}  // namespace

const OptionSpecs& SpatialPolicy::option_specs() {
  static const OptionSpecs specs = {
      OptionSpec::integer_list("sms", 1, kMaxSmsPerProcess, ':', "the SMs split evenly between the processes",
                               "SMs of each process, in workload order (every process listed; the sum at "
                               "most the GPU's SM count)"),
  };
  return specs;
}

std::unique_ptr<SchedulingPolicy> SpatialPolicy::create(const OptionValues& options) {
  std::vector<std::uint32_t> sms;
  for (const std::int64_t n : options.integer_list("sms")) sms.push_back(static_cast<std::uint32_t>(n));
  return std::make_unique<SpatialPolicy>(std::move(sms));
}

void SpatialPolicy::ensure_partition(const EngineControl& control) {
  if (!owner_.empty()) return;
  const std::uint32_t num_sms = control.num_sms();
  const std::uint32_t processes = control.num_contexts();
  std::vector<std::uint32_t> sizes = asked_;
  if (sizes.empty()) {
    if (processes > num_sms) {
      throw InputError("policy spatial: " + std::to_string(processes) +
                       " processes cannot each own an SM of " + std::to_string(num_sms) +
                       "; run fewer processes or give sms=a:b:...");
    }
    for (std::uint32_t p = 0; p < processes; ++p) {
      sizes.push_back(num_sms / processes + (p < num_sms % processes ? 1 : 0));
    }
  } else if (sizes.size() != processes) {
    throw InputError("policy spatial: sms lists " + std::to_string(sizes.size()) +
                     " processes, the workload has " + std::to_string(processes) +
                     " (give every process its SMs, in workload order)");
  }
  const std::uint64_t total = std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0});
  if (total > num_sms) {
    throw InputError("policy spatial: sms asks for " + std::to_string(total) + " SMs, the GPU has " +
                     std::to_string(num_sms));
  }
  owner_.assign(num_sms, std::nullopt);
  std::uint32_t next = 0;
  for (std::uint32_t p = 0; p < sizes.size(); ++p) {
    for (std::uint32_t i = 0; i < sizes[p]; ++i) owner_[next++] = p;
  }
}

std::optional<std::uint32_t> SpatialPolicy::owner(SmId sm) const {
  return index(sm) < owner_.size() ? owner_[index(sm)] : std::nullopt;
}

std::optional<KernelId> SpatialPolicy::head_kernel(std::uint32_t process, const EngineControl& control) {
  for (const KernelId k : control.active_kernels()) {
    const KernelStatus& status = control.kernel(k);
    if (index(status.process) == process && status.has_tbs_to_issue()) return k;
  }
  return std::nullopt;
}

void SpatialPolicy::fill_idle_sms(EngineControl& control) {
  for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
    const SmId sm{s};
    if (control.sm(sm).state != SmState::kIdle || !owner_[s]) continue;
    const std::optional<KernelId> head = head_kernel(*owner_[s], control);
    if (head) control.assign_sm(sm, *head);
  }
}

void SpatialPolicy::on_kernel_arrival(KernelId /*kernel*/, EngineControl& control) {
  ensure_partition(control);
  fill_idle_sms(control);
  // Back to back: SMs still running an earlier kernel of the same process take the new one's thread
  // blocks as room frees up (select_kernel).
  for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
    if (control.sm(SmId{s}).state == SmState::kRunning) control.request_issue(SmId{s});
  }
}

void SpatialPolicy::on_sm_idle(SmId /*sm*/, EngineControl& control) {
  ensure_partition(control);
  fill_idle_sms(control);
}

void SpatialPolicy::on_kernel_finished(KernelId /*kernel*/, EngineControl& control) {
  ensure_partition(control);
  fill_idle_sms(control);
}

std::optional<KernelId> SpatialPolicy::select_kernel(SmId sm, const EngineControl& control) {
  const SmStatus& status = control.sm(sm);
  if (status.kernel && control.kernel(*status.kernel).has_tbs_to_issue()) {
    return control.can_issue(sm, *status.kernel) ? status.kernel : std::nullopt;
  }
  if (index(sm) >= owner_.size() || !owner_[index(sm)]) return std::nullopt;
  const std::optional<KernelId> head = head_kernel(*owner_[index(sm)], control);
  if (head && control.can_issue(sm, *head)) return head;
  return std::nullopt;
}

}  // namespace gpumux
