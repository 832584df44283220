#include "policy/registry.h"

#include <algorithm>

#include "core/error.h"
#include "policy/dss.h"
#include "policy/fcfs.h"
#include "policy/priority.h"

namespace gpumux {

namespace {
/// For policies without options: any option is a usage error, never silently ignored.
void no_options(const std::string& policy, const PolicyOptions& options) {
  if (!options.empty()) {
    throw InputError("policy " + policy + " takes no options (got '" + options.begin()->first + "')");
  }
}
}  // namespace

const std::vector<PolicyInfo>& policy_registry() {
  static const std::vector<PolicyInfo> registry = [] {
    std::vector<PolicyInfo> list = {
        {"dss",
         "Dynamic Spatial Sharing (Tanasic 3.4, Algorithm 1): token-based spatial partitioning of SMs, "
         "preempting by reservation",
         [](const PolicyOptions& options) { return DssPolicy::create(options); }},
        {"fcfs",
         "today's GPUs (Tanasic 2.3): kernels in arrival order, back to back when SMs free up; "
         "kernels of different processes never run at once",
         [](const PolicyOptions& o) {
           no_options("fcfs", o);
           return std::make_unique<FcfsPolicy>(FcfsPolicy::Variant::kFcfs);
         }},
        {"fifo",
         "Fermi FIFO thread-block scheduler (Pai 5.2.1): next kernel's TBs once all TBs of the "
         "previous one are dispatched; kernels of different processes may share SMs",
         [](const PolicyOptions& o) {
           no_options("fifo", o);
           return std::make_unique<FcfsPolicy>(FcfsPolicy::Variant::kFifo);
         }},
        {"npq",
         "non-preemptive priority queues (Tanasic 4.2): the highest-priority kernel gets the next free SMs",
         [](const PolicyOptions& o) {
           no_options("npq", o);
           return std::make_unique<PriorityPolicy>(PriorityPolicy::Mode::kNonPreemptive);
         }},
        {"ppq",
         "preemptive priority queues (Tanasic 4.2): SMs of lower-priority kernels are preempted for a "
         "higher-priority one; option access=shared (default) or exclusive",
         [](const PolicyOptions& options) { return PriorityPolicy::preemptive(options); }},
    };
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return list;
  }();
  return registry;
}

const PolicyInfo* find_policy(const std::string& name) {
  for (const auto& info : policy_registry()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::unique_ptr<SchedulingPolicy> create_policy(const std::string& name, const PolicyOptions& options) {
  const PolicyInfo* info = find_policy(name);
  if (info == nullptr) {
    std::string known;
    for (const auto& p : policy_registry()) known += (known.empty() ? "" : ", ") + p.name;
    throw InputError("unknown policy '" + name + "' (known: " + known + ")");
  }
  return info->create(options);
}

}  // namespace gpumux
