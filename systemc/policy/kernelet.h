#pragma once
// Kernelet (Zhong and He, "Kernelet: High-Throughput GPU Kernel Executions with Dynamic Slicing and
// Scheduling"): kernels are cut into slices of thread blocks (4.1) and two kernels' slices are co-scheduled
// in a ratio chosen by a performance model (4.2-4.4, Algorithm 1).
//
// Slicing. A slice is a launch of consecutive thread blocks of the kernel; its blocks keep their index in
// the whole grid (the paper's index rectification, Fig. 3: block offset added to the slice's own index), so
// their durations, programs and addresses are those of the unsliced kernel. The first slice of a kernel is
// its launch and costs what an unsliced launch costs. Every further slice is one more asynchronous launch
// by the runtime's host thread (Fig. 3d: "we launch the slices in a loop"), which takes `gap_ns` each
// (default 3 us: an asynchronous empty-kernel launch costs about that much host time on Fermi-era GPUs,
// docs/validation.md "Kernelet") and is made one at a time, keeping one slice queued ahead of each
// kernel's dispatch; the GPU dispatches slices in launch order (Pai 5.2.1's Fermi rule: the next kernel's
// blocks once the previous one's are all dispatched). When slices run faster than the host can launch
// them, SM slots stay empty: that is the slicing overhead (5.2, Fig. 6).
//
// Co-scheduling. A decision is Algorithm 1's <K1, K2, size1, size2>: per SM, size1 thread blocks of K1 and
// size2 of K2 are resident (the slices' occupancy), and each kernel's slices are size x N_SM blocks (5.2:
// slice sizes are multiples of the SM count), enlarged to a multiple of that at least the kernel's smallest
// slice (4.1: the smallest slice whose overhead stays under p% = 2%, measured by `gpumux characterise`).
// The pair holds until one of them has no thread block left to issue; then FindCoSchedule runs again over
// every kernel waiting (the paper keeps the co-schedule "while R does not change, or K1 and K2 both still
// have thread blocks"). With one kernel waiting it runs alone at full occupancy, sliced, so a kernel that
// arrives can join at the next decision.
//
// Choices (option `choice`): model (Kernelet: the Markov-chain model's CP, pruned by PUR/MUR), measured
// (the paper's OPT: the same greedy algorithm with every pair's IPCs at every ratio measured beforehand),
// random (MC: a random pair and a random fitting ratio at every decision, seeded by the run's seed) and
// serial (no co-scheduling: the kernels one after another in arrival order, each sliced; Fig. 6's slicing
// overhead) and fixed (the kernels of the workload's first two processes at a given ratio: how
// `gpumux characterise --pairs` measures a pair's IPCs for OPT). The policy never preempts.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "kernelet/characterisation.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace gpumux {

class KerneletPolicy final : public SchedulingPolicy {
 public:
  enum class Choice : std::uint8_t { kModel, kMeasured, kRandom, kSerial, kFixed };

  struct Settings {
    Choice choice = Choice::kModel;
    /// Slice size in thread blocks for every kernel; 0: each kernel's smallest slice from its profile
    /// (without a profile: the whole kernel, i.e. unsliced).
    std::uint32_t slice_tbs = 0;
    TimePs gap_ps = 0;     ///< host time of one further slice's launch
    double alpha_p = 0.4;  ///< PUR pruning threshold (5.4: 0.4 on both GPUs)
    double alpha_m = 0.1;  ///< MUR pruning threshold (5.4: 0.1 on the C2050, 0.105 on the GTX 680)
    /// choice=fixed: thread blocks per SM of the first and the second process's kernel.
    std::uint32_t fixed_first = 0;
    std::uint32_t fixed_second = 0;
    /// choice=random: the draws' seed; nullopt: the run's seed. MC(s) is s runs with draw seeds 1..s.
    std::optional<std::uint64_t> draw_seed;
  };

  /// One co-schedule: positions in the candidate list given to the planner, thread blocks per SM.
  struct Plan {
    std::size_t first = 0;
    std::optional<std::size_t> second;
    std::uint32_t first_per_sm = 0;
    std::uint32_t second_per_sm = 0;
  };

  KerneletPolicy(std::string profile_path, std::optional<kernelet::Characterisation> profiles,
                 Settings settings);
  /// Options: profiles=FILE, choice, slice_tbs, gap_ns, alpha_p, alpha_m, draw_seed, ratio.
  [[nodiscard]] static const OptionSpecs& option_specs();
  /// From values parsed against option_specs(); InputError when the profile file is missing or bad, or
  /// a choice that needs one has none.
  [[nodiscard]] static std::unique_ptr<SchedulingPolicy> create(const OptionValues& options);

  [[nodiscard]] std::string name() const override { return "kernelet"; }
  void on_kernel_arrival(KernelId kernel, EngineControl& control) override;
  void on_sm_idle(SmId sm, EngineControl& control) override;
  void on_tb_started(SmId sm, KernelId kernel, EngineControl& control) override;
  void on_kernel_finished(KernelId kernel, EngineControl& control) override;
  void on_timer(EngineControl& control) override;
  [[nodiscard]] std::optional<KernelId> select_kernel(SmId sm, const EngineControl& control) override;

  /// The co-schedules chosen so far, as "pc:2+mm:4" or "mm:8" (one per decision), for tests and logs.
  [[nodiscard]] const std::vector<std::string>& decisions() const { return decisions_; }
  /// Slices launched so far, the kernels' first slices included.
  [[nodiscard]] std::uint64_t slices_launched() const { return slices_launched_; }

 private:
  /// A kernel's slicing state, by KernelId index.
  struct Slicing {
    bool known = false;           ///< arrived
    std::uint32_t released = 0;   ///< thread blocks [0, released) are launched (dispatchable)
    std::uint32_t slice_tbs = 0;  ///< size of its next slice
    TimePs launch_at = kNever;    ///< its next slice's launch, when one is under way
  };
  struct Running {
    KernelId kernel{};
    std::uint32_t per_sm = 0;
  };

  /// Algorithm 1: a new co-schedule over the kernels with thread blocks left to issue.
  void decide(const EngineControl& control);
  [[nodiscard]] Plan plan(const std::vector<KernelId>& candidates, const EngineControl& control);
  [[nodiscard]] Plan serial_plan(const std::vector<KernelId>& candidates, const EngineControl& control) const;
  [[nodiscard]] Plan fixed_plan(const std::vector<KernelId>& candidates, const EngineControl& control) const;
  /// The slice size of `kernel` when `per_sm` of its blocks are resident per SM.
  [[nodiscard]] std::uint32_t slice_size(const KernelStatus& kernel, std::uint32_t per_sm,
                                         const EngineControl& control) const;
  /// Launches every slice whose launch time has come; returns whether any was.
  bool launch_due(const EngineControl& control);
  /// Starts the running kernels' next slice launches where one is due (below).
  void start_launches(const EngineControl& control);
  /// Asks for on_timer at the earliest pending launch or decision.
  void request_timer(const EngineControl& control) const;
  [[nodiscard]] Slicing& slicing(KernelId kernel);
  [[nodiscard]] bool needs_decision(const EngineControl& control) const;

  std::string profile_path_;
  std::optional<kernelet::Characterisation> profiles_;
  Settings settings_;
  std::vector<Slicing> slicing_;   ///< per KernelId index
  std::vector<KernelId> arrived_;  ///< arrived, in arrival order, until every block is issued
  std::vector<Running> running_;   ///< the co-schedule: one or two kernels
  bool decision_due_ = false;      ///< a kernel of the co-schedule ran out of blocks to issue
  TimePs host_free_at_ = 0;        ///< the runtime's host thread finishes its last slice launch
  std::vector<std::string> decisions_;
  std::uint64_t slices_launched_ = 0;
  std::optional<Rng> random_;  ///< choice=random: seeded from the run's seed at the first decision
};

}  // namespace gpumux
