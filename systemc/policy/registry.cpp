#include "policy/registry.h"

#include <algorithm>

#include "core/error.h"
#include "policy/dss.h"
#include "policy/fcfs.h"
#include "policy/leaky_bucket.h"
#include "policy/mpmax.h"
#include "policy/priority.h"
#include "policy/srtf.h"

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
        {"leaky-bucket",
         "leaky-bucket thread-block interleaving (Liang 4.1): kernels share SMs in asked proportions; "
         "options shares=a:b:... (per process), compensate=on|off (rate compensation for TB times)",
         [](const PolicyOptions& options) { return LeakyBucketPolicy::create(options); }},
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
        // Pai et al.: runtime-aware thread-block scheduling (policy/mpmax.h, policy/srtf.h).
        {"mpmax",
         "Just-in-time MPMax (Pai 5.2.2): each running kernel sets aside room for one TB of each "
         "co-runner per SM; TBs issued in FIFO order",
         [](const PolicyOptions& o) {
           no_options("mpmax", o);
           return std::make_unique<MpmaxPolicy>();
         }},
        {"srtf",
         "Shortest Remaining Time First (Pai 5.1.1): Simple Slicing predictions, new kernels sampled on "
         "one SM; options sample=first-to-end|first-started-in-slice, decide=per-sm|gpu",
         [](const PolicyOptions& o) {
           return ShortestFirstPolicy::create(ShortestFirstPolicy::Mode::kSrtf, o);
         }},
        {"srtf-adaptive",
         "SRTF/Adaptive (Pai 5.1.2): SRTF, sharing SMs (fastest kernel limited to 3 TBs/SM) when "
         "estimated slowdowns differ by more than 0.5; options threshold, shared_limit, sample, decide",
         [](const PolicyOptions& o) {
           return ShortestFirstPolicy::create(ShortestFirstPolicy::Mode::kSrtfAdaptive, o);
         }},
        {"srtf-oracle",
         "SRTF with true remaining runtimes, no sampling (Pai 6.2.2 zero-sampling; staircase oracle)",
         [](const PolicyOptions& o) {
           return ShortestFirstPolicy::create(ShortestFirstPolicy::Mode::kSrtfOracle, o);
         }},
        {"sjf",
         "Shortest Job First oracle (Pai 6.2): isolated runtime ceil(B / (N_SM R)) t known at arrival; "
         "shortest kernel first, no preemption",
         [](const PolicyOptions& o) {
           return ShortestFirstPolicy::create(ShortestFirstPolicy::Mode::kSjf, o);
         }},
        {"ljf", "Longest Job First oracle (Pai 6.2 counterpart of sjf): longest isolated runtime first",
         [](const PolicyOptions& o) {
           return ShortestFirstPolicy::create(ShortestFirstPolicy::Mode::kLjf, o);
         }},
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
