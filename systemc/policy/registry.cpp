#include "policy/registry.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.h"
#include "policy/dss.h"
#include "policy/fcfs.h"
#include "policy/intracore.h"
#include "policy/kernelet.h"
#include "policy/leaky_bucket.h"
#include "policy/mpmax.h"
#include "policy/priority.h"
#include "policy/spatial.h"
#include "policy/srtf.h"
#include "policy/stm.h"

namespace gpumux {

namespace {
/// The options and factory of one ShortestFirstPolicy mode (the summary is the entry's own).
PolicyInfo shortest_first_info(std::string name, std::string summary, ShortestFirstPolicy::Mode mode) {
  return {std::move(name), std::move(summary), ShortestFirstPolicy::option_specs(mode),
          [mode](const OptionValues& o) { return ShortestFirstPolicy::create(mode, o); }};
}
}  // namespace

const std::vector<PolicyInfo>& policy_registry() {
  static const std::vector<PolicyInfo> registry = [] {
    std::vector<PolicyInfo> list = {
        {"dss",
         "Dynamic Spatial Sharing (Tanasic 3.4, Algorithm 1): token-based spatial partitioning of SMs, "
         "preempting by reservation",
         DssPolicy::option_specs(), [](const OptionValues& o) { return DssPolicy::create(o); }},
        {"fcfs",
         "today's GPUs (Tanasic 2.3): kernels in arrival order, back to back when SMs free up; "
         "kernels of different processes never run at once",
         {},
         [](const OptionValues&) { return std::make_unique<FcfsPolicy>(FcfsPolicy::Variant::kFcfs); }},
        {"fifo",
         "Fermi FIFO thread-block scheduler (Pai 5.2.1): next kernel's TBs once all TBs of the "
         "previous one are dispatched; kernels of different processes may share SMs",
         {},
         [](const OptionValues&) { return std::make_unique<FcfsPolicy>(FcfsPolicy::Variant::kFifo); }},
        {"interleaved",
         "intra-core concurrent kernels (Awatramani 5.4): every kernel mapped to every core, each core's "
         "resources split equally between the kernels with blocks left (kernel and core status blocks)",
         IntracorePolicy::option_specs(IntracorePolicy::Mapping::kInterleaved),
         [](const OptionValues& o) {
           return IntracorePolicy::create(IntracorePolicy::Mapping::kInterleaved, o);
         }},
        {"leftover",
         "Awatramani 5.4.1 baseline: every core assigned the oldest kernel with blocks left (left-over "
         "order), or the kernels round robin over the cores (core_mapping=round-robin); a core still "
         "holding another kernel's blocks launches none",
         IntracorePolicy::option_specs(IntracorePolicy::Mapping::kBaseline),
         [](const OptionValues& o) {
           return IntracorePolicy::create(IntracorePolicy::Mapping::kBaseline, o);
         }},
        {"kernelet",
         "Kernelet (Zhong and He 4.1-4.4, Algorithm 1): kernels sliced and two co-scheduled at a ratio "
         "chosen "
         "by a Markov-chain IPC model, pairs pruned by PUR/MUR",
         KerneletPolicy::option_specs(), [](const OptionValues& o) { return KerneletPolicy::create(o); }},
        {"leaky-bucket",
         "leaky-bucket thread-block interleaving (Liang 4.1): kernels share SMs in asked proportions",
         LeakyBucketPolicy::option_specs(),
         [](const OptionValues& o) { return LeakyBucketPolicy::create(o); }},
        {"npq",
         "non-preemptive priority queues (Tanasic 4.2): the highest-priority kernel gets the next free SMs",
         {},
         [](const OptionValues&) {
           return std::make_unique<PriorityPolicy>(PriorityPolicy::Mode::kNonPreemptive);
         }},
        {"ppq",
         "preemptive priority queues (Tanasic 4.2): SMs of lower-priority kernels are preempted for a "
         "higher-priority one",
         PriorityPolicy::preemptive_option_specs(),
         [](const OptionValues& o) { return PriorityPolicy::preemptive(o); }},
        {"spatial",
         "static spatial partitioning (Liang Fig. 2's a:b SM allocations, given by hand): each process owns "
         "a "
         "fixed range of SMs and runs its kernels there in arrival order",
         SpatialPolicy::option_specs(), [](const OptionValues& o) { return SpatialPolicy::create(o); }},
        // Pai et al.: runtime-aware thread-block scheduling (policy/mpmax.h, policy/srtf.h).
        {"stm",
         "spatial-temporal multitasking (Liang 3.2, Fig. 3): phases and SM allocations from kernel profiles "
         "(Algorithm 1), enforced by leaky-bucket interleaving",
         StmPolicy::option_specs(), [](const OptionValues& o) { return StmPolicy::create(o); }},
        {"mpmax",
         "Just-in-time MPMax (Pai 5.2.2): each running kernel sets aside room for one TB of each "
         "co-runner per SM; TBs issued in FIFO order",
         {},
         [](const OptionValues&) { return std::make_unique<MpmaxPolicy>(); }},
        shortest_first_info("srtf",
                            "Shortest Remaining Time First (Pai 5.1.1): Simple Slicing predictions, new "
                            "kernels sampled on one SM",
                            ShortestFirstPolicy::Mode::kSrtf),
        shortest_first_info(
            "srtf-adaptive",
            "SRTF/Adaptive (Pai 5.1.2): SRTF, sharing SMs (the fastest kernel limited to a few "
            "TBs/SM) when estimated slowdowns differ by more than a threshold",
            ShortestFirstPolicy::Mode::kSrtfAdaptive),
        shortest_first_info("srtf-oracle",
                            "SRTF with true remaining runtimes, no sampling (Pai 6.2.2 zero-sampling; "
                            "staircase oracle)",
                            ShortestFirstPolicy::Mode::kSrtfOracle),
        shortest_first_info(
            "sjf",
            "Shortest Job First oracle (Pai 6.2): isolated runtime ceil(B / (N_SM R)) t known "
            "at arrival; shortest kernel first, no preemption",
            ShortestFirstPolicy::Mode::kSjf),
        shortest_first_info("ljf",
                            "Longest Job First oracle (Pai 6.2 counterpart of sjf): longest isolated runtime "
                            "first",
                            ShortestFirstPolicy::Mode::kLjf),
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

namespace {
const PolicyInfo& known_policy(const std::string& name) {
  const PolicyInfo* info = find_policy(name);
  if (info == nullptr) {
    std::string known;
    for (const auto& p : policy_registry()) known += (known.empty() ? "" : ", ") + p.name;
    throw InputError("unknown policy '" + name + "' (known: " + known + ")");
  }
  return *info;
}

}  // namespace

std::unique_ptr<SchedulingPolicy> create_policy(const std::string& name, const PolicyOptions& options) {
  const PolicyInfo& info = known_policy(name);
  return info.create(parse_options("policy " + name, info.options, options));
}

nlohmann::json effective_policy_options(const std::string& name, const PolicyOptions& given) {
  const PolicyInfo& info = known_policy(name);
  return parse_options("policy " + name, info.options, given).to_json();
}

}  // namespace gpumux
