#pragma once
// Dynamic Spatial Sharing (Tanasic et al., ISCA 2014, 3.4 and 4.4): SMs are partitioned among the
// active kernels by tokens. The decisions come from DssReference (policy/dss_reference.h), the
// cycle-level model the RTL is checked against; this policy feeds it the engine's events, clocks it
// and carries its outputs out with assign_sm / reserve_sm. Two timings (option `latency`):
//  - instant (the default): the model is clocked until its search stops at each event; decisions take
//    effect at once in simulated time (the cycles spent are counted for statistics);
//  - hardware: the model is clocked at the GPU's core clock in simulated time (issue 21). An event is
//    fed in the first clock edge at or after it happens (several at once: one per cycle, in order), and
//    a decision takes effect at the edge of the cycle the model makes it in, so a serial scan's N + 1
//    cycles per decision (Tanasic 3.4) cost simulated time. The policy looks ahead on a copy of the
//    model for its next decision and asks the engine to wake it then (EngineControl::wake_at); an event
//    before that restarts the search, as in the hardware.
//
// After every batch of events the model's SM table must agree with the engine's SMST (state, kernel,
// next) and tokens must be conserved; otherwise InvariantViolation names SM, kernel and time.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/dss_reference.h"
#include "policy/policy.h"
#include "policy/registry.h"

namespace gpumux {

/// Token budgets of equal sharing (Tanasic 4.4): every process gets t_c = floor(N_SM / N_p) tokens;
/// the r = N_SM mod N_p tokens left over go one each to the first r processes whose kernels reach the
/// active queue, and stay theirs for every later kernel (tokens are the OS's per-process priority).
/// A process with `tokens` in the workload (KernelStatus::os_tokens) gets exactly those and does not
/// take a left-over token.
class EqualShareTokens {
 public:
  /// Tokens for a kernel of `process` entering the active queue.
  [[nodiscard]] int tokens_for(ProcessId process, std::optional<int> os_tokens, std::uint32_t num_sms,
                               std::uint32_t num_processes);

 private:
  std::vector<std::optional<int>> by_process_;  ///< decided at the process's first kernel
  std::uint32_t remainder_given_ = 0;
};

/// Co-simulation (CMake option GPUMUX_COSIM_RTL, binary gpumux-cosim-rtl): a second implementation
/// of the decision logic, the Verilated rtl/dss_token_policy.sv, clocked in lockstep with the
/// reference model on the same events. Its outputs are the decisions the policy applies; the
/// reference model checks them in every cycle and mirrors the tables for the SMST agreement check.
class DssImplementation {
 public:
  virtual ~DssImplementation() = default;
  /// One clock with `in`; `reference` has just been stepped with the same event. Returns the
  /// implementation's outputs; throws std::logic_error when its tables disagree with the reference's.
  virtual DssReference::Outputs step(const DssReference::Inputs& in, const DssReference& reference) = 0;
};
using DssImplementationFactory =
    std::function<std::unique_ptr<DssImplementation>(const DssReference::Config&)>;
/// Every DssPolicy created from now on also builds and drives this implementation (empty: none).
void set_dss_implementation_factory(DssImplementationFactory factory);
/// Tests: when on, every DssPolicy checks each has_tbs look it skips on an unchanged engine epoch
/// (EngineControl::tbs_to_issue_epoch) against a full look, and throws InvariantViolation on a difference.
void set_dss_verify_skipped_has_tbs(bool on);

class DssPolicy final : public SchedulingPolicy {
 public:
  /// Who holds a token count (option `tokens`).
  ///  - kProcess: each GPU context (Tanasic 4.4: "assigning equal priorities (token count) to all the
  ///    processes"); a context's active kernels share its count. The model's KSRT slots are then the
  ///    contexts' entries (the context table of Tanasic 3.1): a context takes the lowest free entry when
  ///    its first kernel enters the active queue and frees it when its last one leaves; an SM assigned
  ///    or reserved for a context is set up for its first active kernel (admission order) that has
  ///    thread blocks to issue. With one active kernel per context this decides exactly as kKernel.
  ///  - kKernel: each active kernel holds its own count (the process's tokens), as the RTL's KSRT does.
  enum class TokenHolder : std::uint8_t { kProcess, kKernel };

  /// When decisions take effect (option `latency`; see the header comment).
  enum class Latency : std::uint8_t { kInstant, kHardware };

  /// token_bits 0: 8 bits up to 63 SMs, 16 above (see DssReference::Config::token_bits).
  /// search_width: KSRT/SMST entries the search compares per cycle (DssReference::Config::
  /// entries_per_cycle; 1: Tanasic's serial scan).
  explicit DssPolicy(std::uint32_t token_bits = 0, bool start_on_preempt_done = true,
                     TokenHolder holder = TokenHolder::kProcess, Latency latency = Latency::kInstant,
                     std::uint32_t search_width = 1);
  /// Options: token_bits (auto: 8 up to 63 SMs, else 16), preempt_done_starts (see DssReference),
  /// tokens (process | kernel), latency (instant | hardware), search_width (1 ..).
  [[nodiscard]] static const OptionSpecs& option_specs();
  /// From values parsed against option_specs().
  [[nodiscard]] static std::unique_ptr<SchedulingPolicy> create(const OptionValues& options);

  [[nodiscard]] std::string name() const override { return "dss"; }
  void on_kernel_arrival(KernelId kernel, EngineControl& control) override;
  void on_sm_idle(SmId sm, EngineControl& control) override;
  void on_tb_finished(SmId sm, KernelId kernel, TimePs duration_ps, EngineControl& control) override;
  void on_kernel_finished(KernelId kernel, EngineControl& control) override;
  void on_preemption_done(SmId sm, KernelId preempted, EngineControl& control) override;
  void on_tb_started(SmId sm, KernelId kernel, EngineControl& control) override;
  void on_timer(EngineControl& control) override;
  // select_kernel: the default (the kernel the SM is set up for), which only reads.
  [[nodiscard]] bool select_kernel_only_reads() const override { return true; }

  /// The reference model; nullptr before the first kernel arrived.
  [[nodiscard]] const DssReference* model() const { return model_.get(); }
  /// Cycles the model spent searching (decision latency, summed over the run).
  [[nodiscard]] std::uint64_t search_cycles() const { return model_ ? model_->stats().busy_cycles : 0; }
  /// Assignments plus reservations.
  [[nodiscard]] std::uint64_t decisions() const {
    return model_ ? model_->stats().assigns + model_->stats().reservations : 0;
  }
  [[nodiscard]] DssReference::Stats stats() const { return model_ ? model_->stats() : DssReference::Stats{}; }
  /// The tokens `kernel` was given when it entered the active queue (nullopt: never seen).
  [[nodiscard]] std::optional<int> tokens_given(KernelId kernel) const;
  [[nodiscard]] TokenHolder token_holder() const { return holder_; }
  /// The kernel in KSRT `slot` as the model knows it (per-process tokens: a kernel of the slot's context).
  [[nodiscard]] std::optional<KernelId> slot_kernel(std::uint32_t slot) const;
  [[nodiscard]] std::optional<std::int32_t> slot_tokens(std::uint32_t slot) const override;

 private:
  struct Pending {
    DssReference::Inputs in;
    KernelId kernel{};  ///< kernel_insert / kernel_finish: the kernel of the slot
    TimePs at_ps = 0;   ///< when it happened (latency hardware: fed at the next clock edge)
  };

  void ensure_model(const EngineControl& control);
  void push(const EngineControl& control, const DssReference::Inputs& in, KernelId kernel = KernelId{0});
  /// Queues has_tbs events for mapped slots whose bit changed in the engine. Skipped while the engine's
  /// tbs_to_issue_epoch() and the queued slots are as the last look left them (synced_epoch_).
  void sync_has_tbs(const EngineControl& control);
  /// Clocks the model until the queue is empty and the search stopped, applying its outputs (the
  /// driver carries them out after the hook returns, policy.h: no hook re-enters this one).
  void run(EngineControl& control);
  /// Latency hardware: clocks the model up to now (feeding each pending event at its cycle and applying
  /// each decision at its cycle), then asks to be woken at the next event's or decision's edge.
  void run_timed(EngineControl& control);
  /// One model cycle with `pending` (null: no event), checked against the co-simulated RTL if any.
  DssReference::Outputs step(const Pending* pending, EngineControl& control);
  /// Latency hardware: steps the model with no event up to and including `cycle` (skipped while the
  /// search is idle). No decision may fall in these cycles (run_timed plans them).
  void clock_until(std::uint64_t cycle, EngineControl& control);
  /// Latency hardware: the cycle of the model's next decision if no event comes first (a copy of the
  /// model clocked ahead), or none when its search stops first or is idle.
  [[nodiscard]] std::optional<std::uint64_t> next_decision_cycle() const;
  /// Latency hardware: the time of clock edge `cycle`, and the first edge at or after `time`.
  [[nodiscard]] TimePs edge_time(std::uint64_t cycle) const;
  [[nodiscard]] std::uint64_t edge_at(TimePs time) const;
  void apply(const DssReference::Outputs& out, EngineControl& control);
  /// has_tbs of a model slot: its kernel's, or (per-process) any active kernel of its context's. Inline:
  /// sync_has_tbs() asks it for every slot each time it looks, and the slot's own kernel usually answers.
  [[nodiscard]] bool slot_has_tbs(std::uint32_t slot, const EngineControl& control) const {
    const KernelStatus& k = control.kernel(*queued_kernel_[slot]);
    if (k.has_tbs_to_issue()) return true;
    return holder_ == TokenHolder::kProcess && context_has_tbs(k.process, control);
  }
  /// Per-process tokens: some active kernel of `process` has thread blocks to issue.
  [[nodiscard]] bool context_has_tbs(ProcessId process, const EngineControl& control) const;
  /// The model slot `kernel` is counted in: its KSRT entry, or its context's entry.
  [[nodiscard]] std::optional<std::uint32_t> slot_of(KernelId kernel, const EngineControl& control) const;
  void check_agreement(const EngineControl& control) const;
  [[nodiscard]] KernelId kernel_of_slot(std::uint32_t slot, const EngineControl& control) const;
  [[noreturn]] void violation(const std::string& what, std::uint32_t sm, std::optional<KernelId> kernel,
                              const EngineControl& control) const;

  std::uint32_t token_bits_;
  bool start_on_preempt_done_;
  TokenHolder holder_;
  Latency latency_;
  std::uint32_t search_width_;
  double clock_mhz_ = 0;                   ///< latency hardware: the core clock
  std::uint64_t next_cycle_ = 0;           ///< latency hardware: the model's next cycle to clock
  std::optional<std::uint64_t> decision_;  ///< latency hardware: the cycle of the next decision
  std::vector<std::optional<std::uint32_t>> process_slot_;  ///< per-process tokens: each context's slot
  std::unique_ptr<DssReference> model_;
  std::unique_ptr<DssImplementation> implementation_;  ///< co-simulation only
  EqualShareTokens shares_;
  std::deque<Pending> pending_;
  std::vector<std::optional<KernelId>> slot_kernel_;    ///< KSRT slot -> kernel, as the model knows it
  std::vector<std::optional<KernelId>> queued_kernel_;  ///< the same, counting queued events
  /// has_tbs per slot, counting queued events: bytes, not std::vector<bool>'s bits (read for every slot
  /// holding a kernel each time sync_has_tbs() looks).
  std::vector<std::uint8_t> queued_has_tbs_;
  std::vector<std::uint32_t> queued_slots_;  ///< slots with a kernel, counting queued events
  /// The engine's tbs_to_issue_epoch() when sync_has_tbs() last left queued_has_tbs_ equal to every slot's
  /// has_tbs; reset by any change of the queued slots. While both hold, another look finds nothing.
  std::optional<std::uint64_t> synced_epoch_;
  std::vector<std::optional<int>> tokens_given_;  ///< per KernelId
};

}  // namespace gpumux
