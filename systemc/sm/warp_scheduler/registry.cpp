#include "sm/warp_scheduler/registry.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "sm/warp_scheduler/gto.h"
#include "sm/warp_scheduler/lrr.h"
#include "sm/warp_scheduler/phase_aware.h"
#include "sm/warp_scheduler/two_level.h"

namespace gpumux {

namespace {

/// Options of the two-level schedulers. The ready-queue size is not among them: it is a hardware
/// parameter of the GPU (sm.ready_queue_size in the GPU config, Table 3.1: 6), read once, from there.
const OptionSpecs& two_level_option_specs() {
  static const OptionSpecs specs = {
      OptionSpec::choice("inner", {"lrr", "gto"}, "lrr",
                         "order among the ready-queue warps: lrr rotates past the warp that issued "
                         "(GPGPU-Sim two_level_active, Narasiman et al.); gto keeps the warp that issued "
                         "last while it can, else the oldest (Awatramani 3.2)"),
  };
  return specs;
}

WarpSchedulerInfo two_level_info(std::string name, std::string summary,
                                 TwoLevelScheduler::Priority priority) {
  return {std::move(name), std::move(summary), two_level_option_specs(),
          [priority](const WarpSchedulerSetup& setup) {
            const auto inner = setup.options.choice("inner") == "gto" ? TwoLevelScheduler::Inner::kGto
                                                                      : TwoLevelScheduler::Inner::kLrr;
            return std::make_unique<TwoLevelScheduler>(priority, inner, setup);
          }};
}

const WarpSchedulerInfo& known_warp_scheduler(const std::string& name) {
  const WarpSchedulerInfo* info = find_warp_scheduler(name);
  if (info == nullptr) {
    std::string known;
    for (const auto& s : warp_scheduler_registry()) known += (known.empty() ? "" : ", ") + s.name;
    throw InputError("unknown warp scheduler '" + name + "' (known: " + known + ")");
  }
  return *info;
}

}  // namespace

const std::vector<WarpSchedulerInfo>& warp_scheduler_registry() {
  static const std::vector<WarpSchedulerInfo> registry = [] {
    std::vector<WarpSchedulerInfo> list = {
        {"lrr",
         "loose round robin, single level (Awatramani 3.2): priority rotates past the warp that issued; "
         "the next warp that can issue goes",
         {},
         [](const WarpSchedulerSetup& setup) { return std::make_unique<LrrScheduler>(setup); }},
        {"gto",
         "greedy then oldest, single level (Awatramani 3.2): the warp that issued last while it can, "
         "else the oldest warp that can issue",
         {},
         [](const WarpSchedulerSetup& setup) { return std::make_unique<GtoScheduler>(setup); }},
        {"phase-aware",
         "phase-aware, single level (Awatramani 3.4.2.2): the warp nearest its phase's end (lowest phase "
         "distance) that can issue; ties to the oldest",
         {},
         [](const WarpSchedulerSetup& setup) { return std::make_unique<PhaseAwareScheduler>(setup); }},
        two_level_info("two-level-lrr",
                       "two-level round robin (Awatramani 3.4.2.2, Fig. 3.6): ready, active and pending "
                       "queues; warps back from a long-latency wait join the active tail unsorted",
                       TwoLevelScheduler::Priority::kRoundRobin),
        two_level_info("two-level-gto",
                       "two-level GTO (Awatramani 3.4.2.2, Fig. 3.6): as two-level-lrr, the active queue "
                       "sorted by launch order",
                       TwoLevelScheduler::Priority::kOldest),
        two_level_info("two-level-phase-aware",
                       "two-level phase-aware (Awatramani 3.4.2.2, Fig. 3.6): as two-level-lrr, the active "
                       "queue sorted by the length of each warp's next phase, shortest first",
                       TwoLevelScheduler::Priority::kShortestPhase),
    };
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    return list;
  }();
  return registry;
}

std::vector<std::string> warp_scheduler_names() {
  std::vector<std::string> names;
  names.reserve(warp_scheduler_registry().size());
  for (const auto& info : warp_scheduler_registry()) names.push_back(info.name);
  return names;
}

const WarpSchedulerInfo* find_warp_scheduler(const std::string& name) {
  for (const auto& info : warp_scheduler_registry()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

const OptionSpecs& warp_scheduler_option_specs(const std::string& name) {
  return known_warp_scheduler(name).options;
}

OptionValues parse_warp_scheduler_options(const std::string& name, const OptionText& options) {
  const WarpSchedulerInfo& info = known_warp_scheduler(name);
  return parse_options("warp scheduler " + name, info.options, options);
}

std::unique_ptr<WarpScheduler> create_warp_scheduler(const std::string& name, const OptionText& options,
                                                     WarpSchedulerSetup base) {
  const WarpSchedulerInfo& info = known_warp_scheduler(name);
  base.options = parse_options("warp scheduler " + name, info.options, options);
  return info.create(base);
}

nlohmann::json effective_warp_scheduler_options(const std::string& name, const OptionText& given) {
  return parse_warp_scheduler_options(name, given).to_json();
}

}  // namespace gpumux
