#pragma once
// Leaky-bucket thread-block interleaving (Liang et al., 4.1, Figs. 4-5): the concurrent kernels share
// the SMs in asked proportions. The interleave order of their thread blocks comes from
// LeakyBucketReference (policy/leaky_bucket_reference.h, the model rtl/leaky_bucket.sv is checked
// against), one bucket per KSRT entry; the thread blocks are dispatched strictly in that order by
// dynamic round robin onto the SMs that have room: a kernel's arrival deals them out one per SM per
// round, and every SM that frees up takes the next ones in the order.
//
// Shares (option shares=a:b:...): share of each process in workload order; processes past the list
// take their workload `tokens` (the SM budget DSS uses), else 1. Bucket k gets rate = share_k x 256 and every
// bucket capacity = sum of the active rates, so kernel k receives share_k / sum of the thread blocks,
// exactly. With equal thread-block durations the SMs held by each kernel then follow the shares; with unequal
// durations the number of SMs a kernel holds grows with its thread-block time (Little's law), and rate
// compensation (compensate=on, the default; Liang: "compensate the leaky-bucket filling rate") scales each
// rate by (shortest mean TB time) / (kernel's mean TB time), measured from completed thread blocks (the
// kernel description's mean before the first one completes).
//
// Kernels without thread blocks left leave the interleaving (their bucket is deactivated); the
// others' capacity shrinks to keep the proportions. The policy never preempts.
//
// Timing (option latency, issue 21): instant (the default) treats the model's cycles as abstract, only
// ordering the thread blocks. hardware clocks the model at the GPU's core clock in simulated time: each
// model step (a bucket configured, an interleaving cycle) takes one cycle, no earlier than the edge at
// or after the time it is needed, and a grant can be dispatched from the edge of its cycle on. So the
// interleaver hands out at most one thread block per cycle: a kernel's arrival that deals a block to
// each of 132 SMs takes 132 cycles, and an SM asking for a block before its grant is ready waits for it
// (EngineControl::wake_at, then the blocks are dealt again).
//
// Gathering (option gather_ns): no thread block is dealt until gather_ns after the first kernel's
// arrival, so kernels submitted together (whose launch commands reach the GPU some ns apart over PCIe)
// are interleaved from their first thread block, as in Liang's emulation framework, which merges them
// into one launch (4.2). gpumux profile uses it for the dummy-kernel method (3.2). Only the first
// kernels: later arrivals are dealt at once.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/leaky_bucket_reference.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace gpumux {

class LeakyBucketPolicy final : public SchedulingPolicy {
 public:
  LeakyBucketPolicy(std::vector<std::uint32_t> shares, bool compensate, bool hardware_latency = false);
  /// Options: shares=a:b:... (per process in workload order), compensate=on|off, latency=instant|hardware,
  /// gather_ns=N.
  [[nodiscard]] static const OptionSpecs& option_specs();
  /// From values parsed against option_specs().
  [[nodiscard]] static std::unique_ptr<SchedulingPolicy> create(const OptionValues& options);

  [[nodiscard]] std::string name() const override { return "leaky-bucket"; }
  void on_kernel_arrival(KernelId kernel, EngineControl& control) override;
  void on_sm_idle(SmId sm, EngineControl& control) override;
  void on_tb_finished(SmId sm, KernelId kernel, TimePs duration_ps, EngineControl& control) override;
  void on_kernel_finished(KernelId kernel, EngineControl& control) override;
  [[nodiscard]] std::optional<KernelId> select_kernel(SmId sm, const EngineControl& control) override;
  void on_timer(EngineControl& control) override;

  /// For a policy built on the interleaver (stm): each kernel's share from `shares` instead of the option
  /// and the workload; a share of 0 keeps the kernel out of the interleaving (held back) for now. Call
  /// control.deal_thread_blocks() after the shares change.
  void set_share_function(std::function<std::uint32_t(KernelId)> shares) {
    share_function_ = std::move(shares);
  }

  [[nodiscard]] const LeakyBucketReference* model() const { return model_.get(); }
  /// Interleaving cycles the model was clocked for.
  [[nodiscard]] std::uint64_t cycles() const { return cycles_; }

 private:
  struct Bucket {
    std::optional<KernelId> kernel;  ///< the kernel in this KSRT entry, while it takes part
    bool active = false;             ///< as written to the model
    std::uint32_t capacity = 0;
    std::uint32_t rate = 0;
  };
  struct Duration {
    double sum_ps = 0;
    std::uint64_t count = 0;
  };

  void ensure_model(const EngineControl& control);
  /// Recomputes rates and capacity over the kernels with thread blocks left and writes the buckets
  /// that changed (one model cycle each).
  void reconfigure(const EngineControl& control);
  /// The kernel of the next thread block in the interleave order (clocks the model as needed).
  std::optional<KernelId> head(const EngineControl& control);
  /// Before the end of the gather window (option gather_ns).
  [[nodiscard]] bool gathering(const EngineControl& control) const;
  /// One model step; with latency=hardware it takes the next clock cycle.
  LeakyBucketReference::Outputs step(const LeakyBucketReference::Inputs& in);
  [[nodiscard]] std::uint32_t share_of(KernelId kernel, const EngineControl& control) const;
  [[nodiscard]] double mean_tb_ps(KernelId kernel, const EngineControl& control) const;

  /// Whether `kernel` takes part in the interleaving: in the KSRT, thread blocks left, a share above 0.
  [[nodiscard]] bool participates(KernelId kernel, const EngineControl& control) const;

  std::vector<std::uint32_t> shares_;
  std::function<std::uint32_t(KernelId)> share_function_;
  bool compensate_;
  std::unique_ptr<LeakyBucketReference> model_;
  std::vector<Bucket> buckets_;  ///< per KSRT entry
  std::optional<KernelId> pending_;
  std::vector<Duration> durations_;  ///< per KernelId
  std::uint64_t cycles_ = 0;
  bool hardware_latency_;
  double clock_mhz_ = 0;                   ///< latency=hardware: the core clock
  std::uint64_t next_cycle_ = 0;           ///< latency=hardware: the cycle of the model's next step
  TimePs pending_ready_ps_ = 0;            ///< latency=hardware: when pending_'s grant can be dispatched
  TimePs gather_ps_ = 0;                   ///< option gather_ns
  std::optional<TimePs> gather_until_ps_;  ///< end of the gather window, from the first arrival
};

}  // namespace gpumux
