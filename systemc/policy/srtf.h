#pragma once
// Runtime-aware thread-block scheduling of Pai et al.: the policies that rank kernels by (predicted
// or known) runtime and issue thread blocks on each SM from the best-ranked kernel only.
//
//  srtf           Shortest Remaining Time First (5.1.1). Remaining times come from the Simple
//                 Slicing predictor (predict/simple_slicing.h), per SM. A newly arrived kernel is
//                 sampled on one SM (that SM issues only its blocks until the first one ends);
//                 the sample prediction is copied to the other SMs; each SM then issues from the
//                 kernel with the shortest predicted remaining time on that SM, and switches back
//                 when predictions change. Queued kernels are sampled one at a time, in FIFO order.
//                 Option decide=gpu (ours): every SM ranks by the mean of the per-SM predictions.
//  srtf-adaptive  SRTF/Adaptive (5.1.2): as srtf, and it estimates every kernel's slowdown under
//                 the SRTF schedule; when max - min slowdown exceeds 0.5 and sharing is estimated
//                 fairer (NB1/NB2, below), it shares: the fastest kernel is limited to 3 resident
//                 thread blocks per SM and the rest of each SM goes to its co-runners.
//  srtf-oracle    SRTF given true remaining runtimes (6.2.2, "zero sampling"): no sampling; the
//                 remaining time of a kernel is ceil((B - done) / (N_SM * R)) * t.
//  sjf, ljf       Shortest / Longest Job First oracles (6.2): each kernel's isolated runtime is known
//                 when it arrives, Eq. 1 over the grid with the profile's mean t: ceil(B / (N_SM * R))
//                 * t; the shortest (longest) kernel with blocks left gets every SM.
//
// Running thread blocks are never preempted: an SM switches kernels as blocks of the old one finish
// (the hand-off delay). While the best-ranked kernel does not fit on an SM, nothing else is issued
// there (Pai: "when not sampling, only a single kernel executes"). Kernels without a prediction yet
// run only on their sampling SM, or anywhere when no ranked kernel has blocks left (a lone kernel on
// an empty GPU runs everywhere). Ties go to the kernel that arrived first.
//
// SRTF/Adaptive estimates (per SM, in Eq. 2 terms; docs/validation.md lists the choices):
//   for each kernel with blocks left and a prediction: N = mean over SMs of Total_Blocks -
//   Done_Blocks, t = mean sampled t, R = residency alone; exclusive remaining time T = N t / R.
//   Exclusive (SRTF): kernels finish in order of T, slowdown_i = (T_1 + ... + T_i) / T_i.
//   Shared: the fastest kernel (1) runs at L = min(3, R_1) blocks, TS_1 = N_1 t_1 / L; the next (2)
//   at the residency Rs that fits beside L blocks of kernel 1; NB1 = TS_1 Rs / t_2 of its blocks run
//   in shared mode and NB2 = N_2 - NB1 alone after, ending at TS_1 + NB2 t_2 / R_2 (if NB1 >= N_2 it
//   ends first, at N_2 t_2 / Rs, and kernel 1 finishes alone); later kernels follow as in SRTF.
//   Sharing starts when unfairness(exclusive) > threshold and unfairness(shared) < unfairness(
//   exclusive); it ends when the exclusive schedule's unfairness falls below threshold - 0.1 (our
//   hysteresis) or sharing is no longer estimated fairer. Re-evaluated after every thread block.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "policy/policy.h"
#include "policy/registry.h"
#include "predict/simple_slicing.h"

namespace gpumux {

class ShortestFirstPolicy final : public SchedulingPolicy {
 public:
  enum class Mode : std::uint8_t { kSrtf, kSrtfAdaptive, kSrtfOracle, kSjf, kLjf };
  struct Options {
    SimpleSlicingPredictor::SampleRule sample = SimpleSlicingPredictor::SampleRule::kFirstToEnd;
    /// srtf, srtf-adaptive: false (Pai 5.1.1): each SM ranks kernels by its own predictions; true:
    /// every SM uses the mean of the per-SM predictions (one GPU-wide ranking).
    bool gpu_wide = false;
    double unfairness_threshold = 0.5;  ///< srtf-adaptive (Pai 5.1.2: 0.5)
    std::uint32_t shared_limit = 3;     ///< srtf-adaptive: residency of the fastest kernel when sharing
  };
  struct Stats {
    std::uint64_t samples_started = 0;    ///< kernels given a sampling SM
    std::uint64_t samples_completed = 0;  ///< kernels whose first block ended (first prediction)
    std::uint64_t sharing_entries = 0;    ///< srtf-adaptive: switches to sharing mode
    std::uint64_t sharing_exits = 0;
    std::uint64_t fastest_changes = 0;  ///< srtf-adaptive: the limit moved to another kernel while sharing
    std::uint64_t evaluations = 0;      ///< srtf-adaptive: slowdown estimates computed
  };

  explicit ShortestFirstPolicy(Mode mode) : ShortestFirstPolicy(mode, Options{}) {}
  ShortestFirstPolicy(Mode mode, Options options) : mode_(mode), options_(options) {}
  /// srtf / srtf-adaptive: sample, decide; srtf-adaptive also threshold, shared_limit; the oracles none.
  [[nodiscard]] static OptionSpecs option_specs(Mode mode);
  /// From values parsed against option_specs(mode).
  [[nodiscard]] static std::unique_ptr<SchedulingPolicy> create(Mode mode, const OptionValues& options);

  [[nodiscard]] std::string name() const override;
  void on_kernel_arrival(KernelId kernel, EngineControl& control) override;
  void on_sm_idle(SmId sm, EngineControl& control) override;
  void on_tb_started(SmId sm, KernelId kernel, EngineControl& control) override;
  void on_tb_finished(SmId sm, KernelId kernel, TimePs duration_ps, EngineControl& control) override;
  void on_kernel_finished(KernelId kernel, EngineControl& control) override;
  [[nodiscard]] std::optional<KernelId> select_kernel(SmId sm, const EngineControl& control) override;

  [[nodiscard]] const Stats& stats() const { return stats_; }
  [[nodiscard]] bool sharing() const { return sharing_; }
  /// The kernel being sampled and its SM, if any (srtf, srtf-adaptive).
  [[nodiscard]] std::optional<KernelId> sampling() const { return sampling_; }
  [[nodiscard]] SmId sampling_sm() const { return sampling_sm_; }
  /// nullptr for the oracles, and before the first kernel arrives.
  [[nodiscard]] const SimpleSlicingPredictor* predictor() const { return predictor_.get(); }

 private:
  [[nodiscard]] bool predicts() const { return mode_ == Mode::kSrtf || mode_ == Mode::kSrtfAdaptive; }
  /// Rank of a kernel on an SM (lower is better); nullopt when unknown (not sampled yet).
  [[nodiscard]] std::optional<TimePs> key(SmId sm, const KernelStatus& k, const EngineControl& control) const;
  /// The kernel `sm` should issue from next (not checked against room, except in sharing mode).
  [[nodiscard]] std::optional<KernelId> choose(SmId sm, const EngineControl& control) const;
  void hand_out(EngineControl& control);
  void ensure_predictor(const EngineControl& control);
  void know(KernelId kernel, const EngineControl& control);
  /// Gives the oldest queued, still unsampled kernel a sampling SM, if no sample is under way.
  void advance_sampling(EngineControl& control);
  void evaluate_sharing(EngineControl& control);
  void set_sharing(bool on, std::optional<KernelId> fastest, EngineControl& control);

  Mode mode_;
  Options options_;
  Stats stats_;
  std::unique_ptr<SimpleSlicingPredictor> predictor_;
  std::deque<KernelId> to_sample_;
  std::optional<KernelId> sampling_;
  SmId sampling_sm_{};
  bool sharing_ = false;
  std::optional<KernelId> limited_;  ///< srtf-adaptive, sharing: the fastest kernel, limited to L
  std::uint32_t limit_ = 0;
  struct Estimate {
    KernelId id{};
    double n = 0;      ///< blocks left per SM
    double t = 0;      ///< sampled t (ps)
    double r = 1;      ///< residency alone
    double big_t = 0;  ///< exclusive remaining time
  };
  std::vector<Estimate> estimates_;  ///< srtf-adaptive scratch
};

}  // namespace gpumux
