#pragma once
// The thread-block scheduling policy interface (mechanism apart from policy, Tanasic 3.3).
//
// The scheduling framework owns the tables and the mechanisms (SM setup, TB issue, preemption);
// a policy only reads the tables through EngineControl and requests actions. Policies are plain
// C++: no SystemC or TLM type appears here, so the same policy code runs inside the simulator and
// against the Verilated RTL.
//
// Contract:
//  - Hooks are called by the execution engine at the simulated time of the event (control.now()),
//    one at a time: a hook is never called while another is running.
//  - Actions: a policy's decision is written into the tables at once (an assigned SM reads kRunning
//    for its kernel, a reserved one kReserved with its `next`, a residency limit is in the SMST), so
//    the rest of the hook sees it. The SM driver's mechanism for it (issuing thread blocks, starting
//    a context save, completing a preemption) runs after the hook returns, in the order the actions
//    were called, and so do the hooks that mechanism raises: the driver and the policy never call
//    each other recursively. While a hook runs, the thread blocks an assigned SM will take are
//    claimed (KernelStatus::claimed_tbs, SmStatus::claimed_tbs): has_tbs_to_issue() and can_issue()
//    already count them off, so a policy handing out several SMs in one hook sees what each takes.
//    Actions called outside a hook are carried out at once.
//  - select_kernel() is asked, repeatedly, which kernel the next thread block on an SM with free
//    resources comes from; returning nullopt stops issuing on that SM for now. It must not call
//    actions (nor may select_admission()). It may return a kernel other than the one the SM is set up for
//    (kernels sharing an SM, Pai 5.2): the driver issues it whenever can_issue() allows. on_tb_started() must
//    not call actions either; the driver rejects an action called from either (InvariantViolation).
//  - on_sm_idle() reports an SM that became idle; SMs idle when the run starts get no call, so a
//    policy hands them out from on_kernel_arrival(). An SM assigned in a hook that then receives no
//    thread block (select_kernel() chose nothing) is made idle again and reported.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"
#include "engine/scheduling_framework.h"
#include "engine/tables.h"

namespace gpumux {

/// How an SM is taken from a kernel (Tanasic 3.2). Policies that never preempt ignore it.
enum class PreemptionMechanism : std::uint8_t { kContextSwitch, kDrain };

/// "context-switch" or "drain": the one spelling the command line, experiment files, stats.json and
/// report.json use.
[[nodiscard]] const char* to_string(PreemptionMechanism mechanism);

/// The mechanism `text` names, or nullopt when it names none (callers word the error for their input).
[[nodiscard]] std::optional<PreemptionMechanism> preemption_mechanism_named(std::string_view text);

/// What a policy sees of, and may ask of, the execution engine.
class EngineControl {
 public:
  /// `tables`: the scheduling framework the engine keeps (it outlives this object).
  explicit EngineControl(const SchedulingFramework& tables) : tables_(tables) {}
  virtual ~EngineControl() = default;
  EngineControl(const EngineControl&) = delete;
  EngineControl& operator=(const EngineControl&) = delete;
  EngineControl(EngineControl&&) = delete;
  EngineControl& operator=(EngineControl&&) = delete;

  // --- read the tables -------------------------------------------------------------------------
  // The framework's tables are read directly, not through virtual calls: a policy's query reads them
  // for every thread block issued (docs/performance.md).
  [[nodiscard]] virtual TimePs now() const = 0;
  [[nodiscard]] std::uint32_t num_sms() const { return tables_.num_sms(); }
  [[nodiscard]] const SmStatus& sm(SmId id) const { return tables_.sm(id); }
  /// The active queue: KSRT entries in the order the kernels were admitted.
  [[nodiscard]] const std::vector<KernelId>& active_kernels() const { return tables_.active_queue(); }
  [[nodiscard]] const KernelStatus& kernel(KernelId id) const { return tables_.kernel(id); }
  /// True when a thread block of `kernel` could be issued to `sm` right now: the kernel has
  /// TBs left, the SM is not reserved, resources, residency limit and resident-kernel count allow.
  [[nodiscard]] virtual bool can_issue(SmId sm, KernelId kernel) const = 0;
  [[nodiscard]] virtual PreemptionMechanism preemption() const = 0;
  /// Number of processes (GPU contexts) in the workload: DSS equal sharing divides SMs by it.
  [[nodiscard]] virtual std::uint32_t num_contexts() const = 0;
  /// Entries of the active queue / KSRT (N_SM in Tanasic's design).
  [[nodiscard]] virtual std::uint32_t active_capacity() const = 0;
  /// Resources of one SM (all SMs are alike), incl. max_resident_kernels: how many TBs of several
  /// kernels fit side by side (MPMax, SRTF/Adaptive residency limits).
  [[nodiscard]] virtual const SmResources& sm_resources() const = 0;
  /// The run's seed (--seed, an experiment's `seeds:`): a randomized policy seeds its generator from
  /// it (core/rng.h), so the same inputs and seed give the same schedule and the seed in stats.json is
  /// all it needs. Set before the first hook is called.
  [[nodiscard]] virtual std::uint64_t seed() const = 0;
  /// The GPU's core clock: a policy that models its hardware's decision latency in cycles (DSS with
  /// `latency: hardware`) converts cycles to time with it.
  [[nodiscard]] virtual double core_clock_mhz() const = 0;
  /// A count that changes whenever some kernel's has_tbs_to_issue() may have changed, or a kernel entered
  /// or left the active queue; unchanged, it says that every kernel's answer is what it was at the last
  /// reading. A policy mirroring those answers on every thread-block completion (DSS's has_tbs inputs)
  /// looks again only when it moved: issuing a thread block that leaves others to issue does not move it.
  [[nodiscard]] std::uint64_t tbs_to_issue_epoch() const { return tables_.tbs_to_issue_epoch(); }

  // --- actions ---------------------------------------------------------------------------------
  /// Set up an idle SM for `kernel` and start issuing its thread blocks.
  virtual void assign_sm(SmId sm, KernelId kernel) = 0;
  /// Preempt `sm` (context switch or drain); when done, set it up for `next`. Calling it again on
  /// a reserved SM changes `next` (Tanasic 3.4: the target may change while the SM drains).
  virtual void reserve_sm(SmId sm, KernelId next) = 0;
  /// Limit how many TBs of `kernel` may be resident on `sm` (0 = resources only). Lowering it
  /// never evicts a running TB; it takes effect as TBs finish.
  virtual void set_residency_limit(SmId sm, KernelId kernel, std::uint32_t limit) = 0;
  /// Ask the SM driver to issue thread blocks on `sm` (it consults select_kernel()).
  virtual void request_issue(SmId sm) = 0;
  /// Ask the SM driver to deal thread blocks out: in rounds over the SMs in index order, at most one
  /// thread block per SM per round (select_kernel() asked once), until a round issues none. An
  /// interleaver (Liang 4.2's leaky bucket) uses it to spread a grant sequence across the GPU.
  virtual void deal_thread_blocks() = 0;
  /// Call on_timer at `at_ps` (at or after now): a policy whose decisions take simulated time (its
  /// hardware's latency) is woken when the next one is due. One request is pending at a time; a new
  /// one replaces it. Not an action (it changes nothing a policy reads): it may be called from any hook
  /// and from the queries (select_kernel: the leaky bucket's next grant is not ready yet).
  virtual void wake_at(TimePs at_ps) const = 0;

 private:
  const SchedulingFramework& tables_;
};

/// Of the launches waiting in command buffers, the one that reached the execution engine first
/// (ties: launch order): the default admission (SchedulingPolicy::select_admission).
[[nodiscard]] KernelId earliest_arrival(const std::vector<KernelId>& waiting, const EngineControl& control);

class SchedulingPolicy {
 public:
  virtual ~SchedulingPolicy() = default;
  SchedulingPolicy() = default;
  SchedulingPolicy(const SchedulingPolicy&) = delete;
  SchedulingPolicy& operator=(const SchedulingPolicy&) = delete;

  [[nodiscard]] virtual std::string name() const = 0;

  /// A kernel entered the active queue (KSRT).
  virtual void on_kernel_arrival(KernelId kernel, EngineControl& control) = 0;
  /// An SM has no resident thread block and no kernel assigned.
  virtual void on_sm_idle(SmId sm, EngineControl& control) = 0;
  /// A thread block of `kernel` was issued to `sm` (ONBLOCKSTART for runtime predictors). Called
  /// from inside the SM driver's issue loop: read the tables, do not call actions.
  virtual void on_tb_started(SmId /*sm*/, KernelId /*kernel*/, EngineControl& /*control*/) {}
  /// A thread block of `kernel` finished on `sm` after running `duration_ps`.
  virtual void on_tb_finished(SmId sm, KernelId kernel, TimePs duration_ps, EngineControl& control);
  /// Every thread block of `kernel` completed; it has left the active queue.
  virtual void on_kernel_finished(KernelId kernel, EngineControl& control);
  /// A reserved SM finished its preemption and has been set up for its `next` kernel.
  virtual void on_preemption_done(SmId sm, KernelId preempted, EngineControl& control);
  /// The time a wake_at() asked for has come (a hook like the others: actions allowed).
  virtual void on_timer(EngineControl& /*control*/) {}

  /// Which kernel the next thread block issued to `sm` comes from. The default keeps issuing the
  /// kernel the SM is set up for while it has thread blocks (Tanasic Fig. 3 baseline).
  [[nodiscard]] virtual std::optional<KernelId> select_kernel(SmId sm, const EngineControl& control);
  /// True when select_kernel() only reads (the tables and the policy's own state): calling it or not
  /// changes nothing but its answer. The SM driver then leaves it uncalled where no answer could be
  /// issued: right after a thread block that leaves no room on the SM for any kernel with thread
  /// blocks to issue (the query that ended nearly every completion's issue loop; docs/performance.md).
  /// False (the default) for a policy whose query changes its state (a timer asked for, a grant used).
  [[nodiscard]] virtual bool select_kernel_only_reads() const { return false; }
  /// False when the policy keeps on_tb_started() and on_tb_finished() as they are here (doing nothing):
  /// the SM driver then leaves both uncalled, two calls per thread block (docs/performance.md). True
  /// (the default) for every policy that overrides either.
  [[nodiscard]] virtual bool observes_thread_blocks() const { return true; }

  /// The active queue has a free entry: which of the launches waiting in the command buffers (one
  /// per GPU context, `waiting` non-empty, in context order) enters it (Tanasic 3.3: "the scheduling
  /// policy can read a command (kernel launch) from one of the command buffers"). A query like
  /// select_kernel(): no actions. The default admits the launch that reached the execution engine
  /// first (first come, first served; ties: launch order).
  [[nodiscard]] virtual KernelId select_admission(const std::vector<KernelId>& waiting,
                                                  const EngineControl& control);

  /// The token count of the policy's table entry `slot` (DSS: a KSRT entry, or a context's entry with
  /// per-process tokens; Tanasic 3.4), read for the waveform after every hook; nullopt for an empty
  /// entry or a policy without tokens (the default).
  [[nodiscard]] virtual std::optional<std::int32_t> slot_tokens(std::uint32_t /*slot*/) const {
    return std::nullopt;
  }
};

}  // namespace gpumux
