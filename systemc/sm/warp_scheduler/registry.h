#pragma once
// Warp schedulers by name (sm.warp_scheduler in the GPU config, --warp-scheduler), mirroring the
// thread-block policies' registry (policy/registry.h): a one-line summary and typed options
// (core/typed_options.h) per scheduler. The warp-level SM, `gpumux list warp-schedulers` and tests
// create warp schedulers only through here.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/typed_options.h"
#include "sm/warp_scheduler/warp_scheduler.h"

namespace gpumux {

struct WarpSchedulerInfo {
  std::string name;
  std::string summary;  ///< one line, with the section of Awatramani ch. 3 it comes from
  OptionSpecs options;  ///< declared beside the implementation; empty for a scheduler without options
  /// Builds the scheduler; `setup.options` holds values already parsed against `options`.
  std::function<std::unique_ptr<WarpScheduler>(const WarpSchedulerSetup&)> create;
};

/// Every built-in warp scheduler, sorted by name (explicit registration, as policy_registry()).
[[nodiscard]] const std::vector<WarpSchedulerInfo>& warp_scheduler_registry();

/// The registered names, sorted.
[[nodiscard]] std::vector<std::string> warp_scheduler_names();

/// nullptr when `name` is not registered.
[[nodiscard]] const WarpSchedulerInfo* find_warp_scheduler(const std::string& name);

/// The options `name` declares. InputError "unknown warp scheduler 'NAME' (known: ...)".
[[nodiscard]] const OptionSpecs& warp_scheduler_option_specs(const std::string& name);

/// Parses `options` against the scheduler's declaration; InputError for an unknown name (as
/// above), an unknown option or a value out of range (messages name "warp scheduler NAME"). Lets a
/// config loader reject bad input before any simulation.
[[nodiscard]] OptionValues parse_warp_scheduler_options(const std::string& name, const OptionText& options);

/// Builds scheduler `name` for `base` (capacity, ready-queue size), its options parsed from
/// `options` into base.options. InputError as parse_warp_scheduler_options.
[[nodiscard]] std::unique_ptr<WarpScheduler> create_warp_scheduler(const std::string& name,
                                                                   const OptionText& options,
                                                                   WarpSchedulerSetup base);

/// Every option `name` declares with its effective value, by option name ({} without options).
[[nodiscard]] nlohmann::json effective_warp_scheduler_options(const std::string& name,
                                                              const OptionText& given);

}  // namespace gpumux
