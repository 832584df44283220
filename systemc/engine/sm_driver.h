#pragma once
// The SM driver (Tanasic Fig. 3): sets up SMs for kernels, issues thread blocks until the first
// resource runs out, issues the next one when a thread block finishes, and carries out the
// reservations (preemptions) a policy requests. It implements EngineControl, the policy's view of
// the engine, over the SchedulingFramework's tables. Plain C++: SMs are reached through SmPort.
//
// The driver hands an SM a launch record (TbLaunch); the SM decides how long the thread block runs.
//
// Policy actions (policy.h, "Actions"): an action called from a hook writes its decision into the
// tables at once and queues the driver's work for it (issue, context save, settling a preemption);
// the queue is worked off, in call order, after the hook returns, and the hooks that work raises are
// called then, one at a time. So no hook runs inside another and no action runs inside the driver.
//
// Perf-Sat (Awatramani 4.3, GpuConfig::perf_sat): with it on, each SM runs the state machine of
// engine/perf_sat.h for the kernel it works on and the driver issues that kernel's thread blocks there
// only up to the machine's limit, under whatever policy runs (sm_driver.cpp, "Perf-Sat").
//
// Active cores (Awatramani 4.4, GpuConfig::active_cores): with a detector on, the first kernel to start
// while no other is under detection runs it: SMs at and above the count the detector asks for are paused
// (no new thread block; their resident ones finish), the kernel's IPC is sampled over thread-block waves,
// and the SMs above the detected count are power gated until that kernel finishes (sm_driver.cpp,
// "Active cores").
//
// Invariants checked on every event (violations throw InvariantViolation naming SM, kernel, time):
// each thread block is issued once (re-issued only after preemption) and completes exactly once;
// SM resources return to zero when an SM empties.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/active_core_record.h"
#include "core/engine_clock.h"
#include "core/gpu_config.h"
#include "core/workload.h"
#include "engine/active_cores/active_core_detector.h"
#include "engine/perf_sat.h"
#include "engine/scheduling_framework.h"
#include "policy/policy.h"
#include "sm/sm_port.h"

namespace gpumux {

/// An active kernel as the waveform shows its KSRT entry: on some SM (running), off every SM with
/// preempted thread blocks waiting in its PTBQ (preempted), or not yet given an SM (waiting).
enum class KsrtState : std::uint8_t { kWaiting = 1, kRunning = 2, kPreempted = 3 };

/// One stretch a thread block was resident on an SM: from its context restore (a resumed block) or its
/// start until it completed or a context save stopped it.
struct TbStretch {
  SmId sm{};
  KernelId kernel{};
  std::uint32_t tb = 0;
  TimePs start_ps = 0;
  TimePs end_ps = 0;
  bool completed = true;  ///< false: stopped by a context save (it resumes later, from the PTBQ)
};

/// Receives what the SMs did, stretch by stretch (timeline tracing); optional.
class TbTraceSink {
 public:
  virtual ~TbTraceSink() = default;
  virtual void on_tb(const TbStretch& stretch) = 0;
  virtual void on_tb_restored(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps,
                              TimePs done_ps) = 0;
  /// The SM set itself up for a new context after a preemption (Tanasic 3.1).
  virtual void on_setup(SmId sm, TimePs start_ps, TimePs end_ps) = 0;
  /// KSRT entry `slot` took `kernel` into the active queue (`occupied`) or freed it (Tanasic 3.3).
  virtual void on_ksrt(std::uint32_t slot, KernelId kernel, bool occupied, TimePs time_ps) = 0;
  /// The state of active kernel `kernel` in KSRT entry `slot` changed (Tanasic 3.3: the active queue
  /// holds running or preempted kernels).
  virtual void on_ksrt_state(std::uint32_t slot, KernelId kernel, KsrtState state, TimePs time_ps) = 0;
  /// The policy's token count of table entry `slot` changed (SchedulingPolicy::slot_tokens).
  virtual void on_tokens(std::uint32_t slot, std::optional<std::int32_t> tokens, TimePs time_ps) = 0;
};

/// One preemption of an SM (stats.json `preemptions[]`).
struct PreemptionRecord {
  SmId sm{};
  KernelId kernel{};  ///< the kernel the SM was running
  PreemptionMechanism mechanism = PreemptionMechanism::kDrain;
  TimePs requested_ps = 0;
  TimePs done_ps = 0;       ///< 0 while in progress
  std::uint64_t bytes = 0;  ///< context saved (context switch)
  // Context switch (Tanasic 3.2): request, pipeline drain, trap routine, context writes until done_ps.
  TimePs drain_ps = 0;
  TimePs trap_ps = 0;
  TimePs save_start_ps = 0;  ///< the first context write (0 for draining)
  /// The setup the SM then waited for before its next thread block (0 if it went back to a kernel it
  /// was set up for, or ran none).
  TimePs setup_ps = 0;
};

/// One Perf-Sat sample period of one SM (Awatramani 4.3.2.2): the thread blocks it allowed, what it read.
struct PerfSatSample {
  TimePs end_ps = 0;
  std::uint32_t blocks = 0;                       ///< the limit during the period
  std::uint64_t stalled = 0;                      ///< stalled cycles (sm_port.h StallReading)
  std::uint64_t instructions = 0;                 ///< warp instructions issued
  std::uint64_t cycles = 0;                       ///< core cycles with a resident warp
  std::uint32_t next = 0;                         ///< the limit after it
  PerfSat::State state = PerfSat::State::kStart;  ///< the state after it
};

/// Perf-Sat on one SM for one kernel: from the kernel's first thread block there until it finished.
struct PerfSatRecord {
  SmId sm{};
  KernelId kernel{};
  std::uint32_t n_max = 0;
  std::uint32_t start = 0;     ///< ceil(N_max / 2)
  TimePs bound_ps = 0;         ///< its first thread block on the SM
  TimePs period_ps = 0;        ///< the sample period (0: the kernel finished before it was known)
  std::uint32_t detected = 0;  ///< the limit when the kernel finished (settled or not)
  bool settled = false;
  TimePs settled_ps = 0;
  std::string settled_by;  ///< PerfSat::settled_by()
  std::vector<PerfSatSample> samples;
};

class SmDriver final : public EngineControl, public TbCompletionListener {
 public:
  struct Hooks {
    std::function<TimePs()> now;                    ///< simulated time
    std::function<void(KernelId)> kernel_finished;  ///< to the execution engine
    std::vector<std::string> process_names;         ///< for messages
    std::function<void(SmId)> sm_changed;           ///< optional: SMST entry changed (VCD)
    std::function<void()> progress;                 ///< optional: every 65536 completed TBs
    /// optional: a command buffer was emptied (its launch entered the active queue), so the command
    /// dispatcher may issue the next launch of that context
    std::function<void()> buffer_freed;
    /// optional: call timer_fired() at the given time (EngineControl::wake_at); without it a policy that
    /// asks for a timer is an InvariantViolation
    std::function<void(TimePs)> wake_at;
    /// Perf-Sat (GpuConfig::perf_sat): call perf_sat_timer_fired() at the given time (a later request
    /// replaces an earlier one only when earlier; the driver always asks for its earliest due sample)
    std::function<void(TimePs)> perf_sat_wake_at;
  };

  SmDriver(const GpuConfig& gpu, std::unique_ptr<SchedulingPolicy> policy, Hooks hooks);

  /// Connects the SMs (one port per SM, in SmId order) before the simulation starts.
  void attach_sms(std::vector<SmPort*> ports);
  void set_trace_sink(TbTraceSink* sink) { trace_ = sink; }
  void set_sm_changed(std::function<void(SmId)> callback) { hooks_.sm_changed = std::move(callback); }

  /// True when the command buffer of `process` can take a launch (Tanasic 3.3: one command each).
  [[nodiscard]] bool can_launch(ProcessId process) const { return framework_.buffer_free(process); }
  /// A kernel launch reached the execution engine: it enters its context's command buffer, which
  /// must be free (can_launch()), and the active queue when the policy admits it.
  KernelId launch(KernelStatus status);

  // TbCompletionListener
  void on_tb_complete(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps) override;
  void on_tb_restored(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps, TimePs done_ps) override;
  void on_context_saved(SmId sm, const std::vector<PreemptedTb>& saved, const ContextSave& save) override;
  void set_preemption(PreemptionMechanism mechanism) { preemption_ = mechanism; }
  /// The run's seed, handed to the policy through EngineControl::seed().
  void set_seed(std::uint64_t seed) { seed_ = seed; }

  // EngineControl: the tables
  /// The clock now() reads instead of Hooks::now (the TB-level SMs' calendar: a virtual call on every
  /// thread-block issue and completion instead of a std::function's); nullptr: Hooks::now.
  void set_clock(const EngineClock* clock) { clock_ = clock; }
  [[nodiscard]] TimePs now() const override { return clock_ != nullptr ? clock_->now() : hooks_.now(); }
  [[nodiscard]] double core_clock_mhz() const override { return gpu_.core_clock_mhz; }
  void wake_at(TimePs at_ps) const override;
  /// The time of the pending wake_at() has come: calls the policy's on_timer (a stale wake-up, for a
  /// request since replaced by a later one, is ignored).
  void timer_fired();
  [[nodiscard]] bool can_issue(SmId sm, KernelId kernel) const override;
  [[nodiscard]] PreemptionMechanism preemption() const override { return preemption_; }
  [[nodiscard]] std::uint32_t num_contexts() const override {
    return static_cast<std::uint32_t>(hooks_.process_names.size());
  }
  [[nodiscard]] std::uint32_t active_capacity() const override { return framework_.active_capacity(); }
  [[nodiscard]] const SmResources& sm_resources() const override { return gpu_.sm; }
  [[nodiscard]] std::uint64_t seed() const override { return seed_; }

  // EngineControl: the actions
  void assign_sm(SmId sm, KernelId kernel) override;
  void reserve_sm(SmId sm, KernelId next) override;
  void set_residency_limit(SmId sm, KernelId kernel, std::uint32_t limit) override;
  void request_issue(SmId sm) override;
  void deal_thread_blocks() override;

  [[nodiscard]] const SchedulingFramework& framework() const { return framework_; }
  [[nodiscard]] const SchedulingPolicy& policy() const { return *policy_; }
  /// Thread blocks issued for the first time (re-issues after preemption are counted apart).
  [[nodiscard]] std::uint64_t tbs_issued() const { return tbs_issued_; }
  [[nodiscard]] std::uint64_t tbs_reissued() const { return tbs_reissued_; }
  [[nodiscard]] const std::vector<PreemptionRecord>& preemptions() const { return preemptions_; }
  [[nodiscard]] std::uint64_t tbs_completed() const { return tbs_completed_; }
  /// Perf-Sat: a sample period may have ended on some SM (Hooks::perf_sat_wake_at).
  void perf_sat_timer_fired();
  /// Perf-Sat's records, in the order the kernels were bound to SMs (empty when it is off).
  [[nodiscard]] const std::vector<PerfSatRecord>& perf_sat_records() const { return perf_sat_records_; }

  /// Active-core detection's records, one per kernel it ran for, in start order (empty when off).
  [[nodiscard]] const std::vector<ActiveCoreRecord>& active_core_records() const { return ac_records_; }
  /// Time SM `sm` was power gated (every gating ends with its kernel, so at the end of a run it is final).
  [[nodiscard]] TimePs gated_ps(SmId sm) const { return ac_gated_ps_.empty() ? 0 : ac_gated_ps_[index(sm)]; }
  /// Active cores: SMs [0, count) may take thread blocks; the others are paused or gated.
  [[nodiscard]] std::uint32_t active_core_count() const { return ac_count_; }

  /// End-of-run checks: every launched kernel finished, every TB completed once, SMs empty and
  /// idle. Throws InvariantViolation.
  void check_final_invariants() const;

 private:
  enum class TbState : std::uint8_t { kNotIssued, kRunning, kDone, kPreempted };

  /// The driver's work for an action, done after the hook that called it returns.
  struct DeferredWork {
    enum class Kind : std::uint8_t {
      kIssue,   ///< issue thread blocks on `sm` (request_issue, or an assignment claiming `claimed`)
      kSave,    ///< start the context save of reserved `sm`
      kSettle,  ///< a reserved `sm` with no thread blocks: complete its preemption
      kDeal,    ///< deal_thread_blocks()
    };
    Kind kind = Kind::kIssue;
    SmId sm{};
    KernelId kernel{};          ///< kIssue after an assignment: the kernel the claim is on
    std::uint32_t claimed = 0;  ///< kIssue after an assignment: thread blocks claimed
  };

  /// Calls a policy hook; then, unless the driver is already working off its queue, works it off.
  template <typename Call>
  void call_hook(const char* name, Call&& call);
  /// Queues the driver's work for an action; outside a hook, does it at once.
  void defer(const DeferredWork& work);
  /// Works off the queue, in order, until it is empty (the work may raise hooks, which queue more).
  void apply_deferred();
  void do_work(const DeferredWork& work);
  /// Rejects an action called from select_kernel() or on_tb_started().
  void check_action_allowed(const char* action, SmId sm, KernelId kernel) const;
  /// Thread blocks of `kernel` an empty `sm` takes: its occupancy, its residency limit, what is left.
  [[nodiscard]] std::uint32_t claim_for(SmId sm, const KernelStatus& kernel) const;
  /// can_issue() for an SM assigned in the running hook, whose claimed thread blocks are not on it yet.
  /// Out of line: can_issue() runs on every issue attempt and takes this branch only inside hooks.
  [[nodiscard, gnu::noinline]] bool fits_beside_claim(const SmStatus& status,
                                                      const KernelStatus& kernel) const;
  /// Asks the policy for one thread block on `sm` and issues it; false when it chose none.
  /// Inlined: try_issue() runs it on every thread-block issue.
  [[gnu::always_inline]] inline bool issue_one(SmId sm);
  /// can_issue()'s rules; can_issue() adds the record of its last answer.
  [[nodiscard, gnu::always_inline]] inline bool issue_allowed(SmId sm, KernelId kernel) const;
  /// False when no thread block of any active kernel with thread blocks to issue can fit on `sm` now:
  /// not even one needing the least of every resource and carve-out they need (SmPort::fits is
  /// monotone), so issue_allowed() holds for none of them.
  [[nodiscard, gnu::always_inline]] inline bool room_for_any_kernel(SmId sm);
  /// room_for_any_kernel()'s least footprint, recomputed (when the issue-state epoch moved).
  [[gnu::noinline]] void recompute_least_footprint();
  // Inlined, as the other steps of a completion's issue (issue 20: calls and their register saves were
  // about a tenth of a thread block's instructions).
  [[gnu::always_inline]] inline void try_issue(SmId sm);
  [[gnu::always_inline]] inline void issue_tb(SmId sm, KernelId kernel);
  void admit_waiting();
  void finish_kernel(KernelId kernel);
  /// Tracing only: reports the policy's token counts and the active kernels' states that changed
  /// since the last hook.
  void report_tokens();
  [[gnu::always_inline]] inline void settle_sm(SmId sm);
  /// settle_sm without the SMST change notification.
  [[gnu::always_inline]] inline void settle_sm_quietly(SmId sm);
  /// settle_sm_quietly() of a reserved SM: its preemption completes when its last thread block is gone.
  [[gnu::noinline]] void settle_reserved_sm(SmId sm);
  [[noreturn]] void violation(const std::string& what, SmId sm, KernelId kernel) const;

  /// Perf-Sat (Awatramani 4.3) on one SM: the machine of the kernel it is bound to.
  struct PerfSatSm {
    std::optional<PerfSat> machine;  ///< none: not bound
    KernelId kernel{};
    std::size_t record = 0;          ///< index into perf_sat_records_
    TimePs next_sample_ps = kNever;  ///< the end of the current period (kNever: none running)
    StallReading window_start;       ///< the reading at the start of the current period
  };
  /// Out of line: can_issue() calls it only with Perf-Sat on. False when `kernel` is at its limit on `sm`.
  [[nodiscard, gnu::noinline]] bool perf_sat_allows(SmId sm, KernelId kernel, std::uint32_t resident) const;
  void perf_sat_bind(SmId sm, KernelId kernel);
  void perf_sat_unbind(SmId sm);
  void perf_sat_first_completion(SmId sm, KernelId kernel);
  void perf_sat_start_window(SmId sm, TimePs period_ps);
  void perf_sat_take_sample(SmId sm);
  void perf_sat_rearm();
  [[nodiscard]] std::string describe(KernelId kernel) const;

  /// Active cores (Awatramani 4.4): where the detection for the kernel under it is.
  enum class AcPhase : std::uint8_t {
    kIdle,      ///< no kernel under detection
    kDraining,  ///< the count fell: waiting for the paused SMs' resident blocks before the next sample
    kSampling,  ///< a sample runs
    kGating,    ///< detected: SMs above the count are gated as they drain
    kStopped,   ///< stopped undetected (out of thread blocks): the count stays until the kernel ends
  };
  [[nodiscard]] bool ac_paused(SmId sm) const { return index(sm) >= ac_count_; }
  void ac_kernel_started(KernelId kernel);
  void ac_on_complete(SmId sm, KernelId kernel);
  void ac_kernel_finished();
  /// Sets the count; raising it issues on the SMs un-paused.
  void ac_set_count(std::uint32_t count);
  void ac_start_sample();
  void ac_end_sample();
  [[nodiscard]] bool ac_drained() const;
  void ac_gate_drained();
  [[nodiscard]] std::uint64_t ac_instructions() const;

  const GpuConfig& gpu_;
  SchedulingFramework framework_;
  std::unique_ptr<SchedulingPolicy> policy_;
  Hooks hooks_;
  const EngineClock* clock_ = nullptr;  ///< set_clock()
  std::vector<SmPort*> ports_;
  std::vector<std::uint32_t> launches_by_process_;          ///< kernel launches seen per process
  std::vector<std::vector<TbState>> tb_states_;             ///< per kernel, per thread block
  std::vector<KsrtState> traced_ksrt_;                      ///< per KernelId (report_tokens)
  std::vector<std::optional<std::int32_t>> traced_tokens_;  ///< per policy table entry (report_tokens)
  TbTraceSink* trace_ = nullptr;
  PreemptionMechanism preemption_ = PreemptionMechanism::kDrain;
  std::uint64_t seed_ = 1;  ///< as SimulationSpec's default
  std::uint64_t tbs_issued_ = 0;
  std::uint64_t tbs_completed_ = 0;
  std::uint64_t tbs_reissued_ = 0;
  static constexpr std::size_t kNoRecord = static_cast<std::size_t>(-1);
  std::vector<PreemptionRecord> preemptions_;
  std::vector<std::size_t> open_preemption_;  ///< per SM: index into preemptions_ or kNoRecord
  /// per SM: the finished preemption whose setup_ps the SM's next thread block gives, or kNoRecord
  std::vector<std::size_t> awaiting_setup_;
  std::deque<DeferredWork> deferred_;    ///< the driver's work for actions, in call order
  const char* running_hook_ = nullptr;   ///< the policy hook now running, if any
  mutable TimePs timer_ps_ = kNever;     ///< the pending wake_at(), kNever: none
  const char* running_query_ = nullptr;  ///< select_kernel / on_tb_started now running, if any
  /// can_issue()'s last question and answer. issue_one() checks the policy's choice: select_kernel()
  /// sees the driver as const and may take no action (check_action_allowed), so nothing has changed
  /// since the policy's own last check, and when that was of the kernel it chose the answer stands
  /// (one check of the SM's resources fewer per thread block; docs/performance.md).
  struct LastIssueCheck {
    SmId sm{};
    KernelId kernel{};
    bool answer = false;
    bool valid = false;
  };
  mutable LastIssueCheck last_check_;
  /// The policy's select_kernel() only reads (SchedulingPolicy::select_kernel_only_reads): try_issue()
  /// may leave it uncalled where room_for_any_kernel() is false.
  bool select_only_reads_ = false;
  /// The policy overrides on_tb_started() or on_tb_finished() (SchedulingPolicy::observes_thread_blocks).
  bool observes_tbs_ = true;
  /// room_for_any_kernel()'s least footprint and carve-out over the active kernels with thread blocks to
  /// issue (any_to_issue_: there is one), as of issue-state epoch least_epoch_ (recomputed when it moves).
  TbFootprint least_footprint_{};
  std::uint32_t least_carve_out_ = 0;
  bool any_to_issue_ = false;
  std::uint64_t least_epoch_ = ~std::uint64_t{0};
  bool applying_ = false;            ///< apply_deferred() is working off the queue
  bool perf_sat_on_ = false;         ///< GpuConfig::perf_sat.enabled
  std::vector<PerfSatSm> perf_sat_;  ///< per SM (empty when off)
  std::vector<PerfSatRecord> perf_sat_records_;
  TimePs perf_sat_timer_ps_ = kNever;  ///< the wake-up last asked for
  bool ac_on_ = false;                 ///< GpuConfig::active_cores.detector != none
  std::unique_ptr<ActiveCoreDetector> ac_detector_;
  std::uint32_t ac_count_ = 0;  ///< SMs [0, ac_count_) active (num_sms when no detection runs)
  std::optional<KernelId> ac_kernel_;
  AcPhase ac_phase_ = AcPhase::kIdle;
  TimePs ac_sample_start_ps_ = 0;
  std::uint64_t ac_sample_instructions_ = 0;  ///< ac_instructions() at the sample's start
  std::uint64_t ac_sample_tbs_ = 0;           ///< the kernel's completions on active SMs in the sample
  std::vector<TimePs> ac_gated_since_;        ///< per SM: gated from (kNever: not gated)
  std::vector<TimePs> ac_gated_ps_;           ///< per SM: time gated so far
  std::vector<ActiveCoreRecord> ac_records_;
};

}  // namespace gpumux
