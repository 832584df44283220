#pragma once
// Spatial-temporal multitasking (Liang et al., TPDS 2015; Fig. 3's loop): the kernels waiting to run are
// split into phases, and each phase's kernels share the SMs in chosen proportions. The decision comes
// from the kernels' profiles (R[m], B[m], G: `gpumux profile`, stm/kernel_profile.h) through the STM
// heuristic (Algorithm 1, stm/schedule.h) or, with search=exhaustive, the optimum over the estimate
// (Algorithm 3 with con_lat as the oracle); the leaky-bucket interleaver (policy/leaky_bucket.h, 4.1)
// enforces each phase's SM allocation, with rate compensation by default.
//
// When: the first kernel to arrive opens a window of window_ns (launch commands of kernels submitted
// together reach the GPU some ns apart); at its end every kernel in the KSRT is scheduled. Kernels that
// arrive while a schedule runs wait for its end, and are scheduled then (3: "the set of kernels changes
// dynamically"). Phases follow each other as 4.1 orders thread blocks by phase ("schedule the thread
// blocks of the kernels in phase i before the thread blocks of the kernels in phase i + 1"): the next
// phase starts once every thread block of the current one has been issued (advance=issued, the default),
// or, with advance=finished, once they have all completed (3.1's non-overlapping phases).
//
// A kernel without a profile, or profiles measured on another SM count, stop the run with an input
// error (exit 2). The policy never preempts.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/leaky_bucket.h"
#include "policy/policy.h"
#include "policy/registry.h"
#include "stm/kernel_profile.h"

namespace gpumux {

class StmPolicy final : public SchedulingPolicy {
 public:
  enum class Search : std::uint8_t { kHeuristic, kExhaustive };
  enum class Advance : std::uint8_t { kIssued, kFinished };

  StmPolicy(std::string profile_path, stm::ProfileSet profiles, TimePs window_ps, bool compensate,
            Search search, Advance advance);
  /// Options: profiles=FILE (required), window_ns, compensate, search, advance.
  [[nodiscard]] static const OptionSpecs& option_specs();
  /// From values parsed against option_specs(); InputError when the profile file is missing or bad.
  [[nodiscard]] static std::unique_ptr<SchedulingPolicy> create(const OptionValues& options);

  [[nodiscard]] std::string name() const override { return "stm"; }
  void on_kernel_arrival(KernelId kernel, EngineControl& control) override;
  void on_sm_idle(SmId sm, EngineControl& control) override;
  void on_tb_finished(SmId sm, KernelId kernel, TimePs duration_ps, EngineControl& control) override;
  void on_kernel_finished(KernelId kernel, EngineControl& control) override;
  void on_timer(EngineControl& control) override;
  [[nodiscard]] std::optional<KernelId> select_kernel(SmId sm, const EngineControl& control) override;

  /// The schedules chosen so far, as "{va:5, bs:10} | {mci:15}" (one per decision), for tests and logs.
  [[nodiscard]] const std::vector<std::string>& decisions() const { return decisions_; }

 private:
  /// One phase: its kernels and their SMs (the leaky bucket's shares).
  struct Phase {
    std::vector<std::pair<KernelId, std::uint32_t>> kernels;
  };

  /// Schedules every kernel waiting (Algorithm 1 or the exhaustive optimum) and starts the first phase.
  void plan(EngineControl& control);
  /// Moves to the next phase while the current one has nothing left (to issue, or to complete).
  /// Returns whether the phase changed.
  bool advance_phases(const EngineControl& control);
  [[nodiscard]] bool phase_done(const Phase& phase, const EngineControl& control) const;
  /// shares_ from the current phase (all 0 past the last).
  void set_shares();
  /// A kernel of the schedule has not finished.
  [[nodiscard]] bool schedule_running(const EngineControl& control) const;
  [[nodiscard]] std::uint32_t share_of(KernelId kernel) const;

  std::string profile_path_;
  stm::ProfileSet profiles_;
  TimePs window_ps_;
  Search search_;
  Advance advance_;
  LeakyBucketPolicy interleaver_;
  std::vector<KernelId> waiting_;  ///< arrived, not yet in a schedule
  std::vector<Phase> phases_;      ///< the running schedule
  std::size_t current_ = 0;        ///< its phase now running (== phases_.size(): none)
  std::optional<TimePs> window_end_ps_;
  std::vector<std::uint32_t> shares_;  ///< per KernelId: SMs in the current phase, 0 otherwise
  std::vector<std::string> decisions_;
};

}  // namespace gpumux
