#pragma once
// A streaming multiprocessor at thread-block fidelity (`sm.model: tb`): it holds resident thread
// blocks of one or more kernels within its register, shared-memory, thread, warp and TB-slot
// budgets, draws each thread block's run time from its kernel's profile (sm/tb/tb_duration.h) and
// reports each completion at the simulated time it happens. Event-driven: its next completion is an
// entry in the TB-level SMs' shared calendar (sm/tb/tb_calendar.h), which may handle it ahead of
// SystemC's clock; nothing runs while all its thread blocks are busy. Its times come from the
// calendar's now(), and it syncs the calendar before its context saves and restores reach memory.
//
// Context switch (Tanasic 3.2): saves and restores go through the SM's ContextMover (bursts paced
// at the SM's bandwidth share, in time order with every other initiator). A re-issued thread block
// starts running when its context is back; a save that stops the SM while a thread block is still
// being restored completes after that restore. The preemption latencies (GpuConfig::context_switch):
// a save's writes start after the pipeline drain (drain_cycles) and the trap routine (trap_cycles);
// after a preemption, a thread block of a kernel the SM is not set up for waits for the setup
// (setup_cycles, sm/sm_setup.h) before it runs or restores.
//
// Memory interference (memory.tb_interference: on): each kernel's thread blocks progress on its work clock
// in the GPU's BandwidthPenalty (sm/tb/bandwidth_penalty.h: Liang Eq. 3 and Bubble-Up sensitivity), so
// their ends are kept in work units, per kernel, and turned into times through that kernel's clock; when
// rates change, the SM re-times its next completion. Without it work and time are the same clock and all
// thread blocks are kept in one group.

#include <cstdint>
#include <map>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "core/gpu_config.h"
#include "core/workload.h"
#include "sm/context_mover.h"
#include "sm/sm_model.h"
#include "sm/sm_setup.h"
#include "sm/tb/bandwidth_penalty.h"
#include "sm/tb/tb_calendar.h"
#include "sm/tb/tb_duration.h"

namespace gpumux {

class TbSm final : public SmModule, private ProgressRateListener, private TbCalendarClient {
 public:
  /// Context save and restore traffic to the memory controller (TLM-2.0 writes and reads).
  MemoryPort::Socket memory_socket;

  /// `calendar`: the TB-level SMs' completion calendar; `context_traffic`: the GPU's context save and
  /// restore thread; `penalty`: the GPU's shared memory-interference clock, or nullptr (interference off).
  TbSm(const sc_core::sc_module_name& name, SmId id, const GpuConfig& gpu, TbDurationMode duration_mode,
       std::uint64_t seed, TbCompletionListener& listener, TbCalendar& calendar,
       ContextTraffic& context_traffic, BandwidthPenalty* penalty = nullptr);

  [[nodiscard]] bool fits(const TbFootprint& footprint, std::uint32_t shared_memory_config) const override;
  TimePs start_tb(const TbLaunch& launch) override;
  void save_context() override;
  [[nodiscard]] const SmUsage& usage() const override { return usage_; }

  [[nodiscard]] tlm::tlm_initiator_socket<>& memory_initiator() override { return memory_socket; }
  [[nodiscard]] SmId id() const override { return id_; }
  [[nodiscard]] TimePs busy_ps() const override;
  [[nodiscard]] std::uint64_t tbs_completed() const override { return tbs_completed_; }
  [[nodiscard]] std::uint32_t resident_tbs() const override { return usage_.thread_blocks; }
  [[nodiscard]] const SmSetup& setup() const override { return setup_; }

 private:
  struct Running {
    TimePs end_work = 0;  ///< the work clock's reading when it completes (its end time without penalty)
    std::uint64_t sequence = 0;  ///< issue order: deterministic tie-break between equal end times
    TimePs start_ps = 0;         ///< began running (or restoring): after the SM's setup
    TimePs start_work = 0;       ///< the work clock at start_ps
    KernelId kernel{};
    std::uint32_t tb = 0;
    TbFootprint footprint{};
    TbTraffic traffic{};  ///< what it demands and presses while running (interference on)
    /// Completion order: a strict order (sequences are unique).
    [[nodiscard]] bool before(const Running& other) const {
      return end_work != other.end_work ? end_work < other.end_work : sequence < other.sequence;
    }
  };

  /// Running thread blocks of one kernel (interference on), or of all (off), in completion order from
  /// `head` on (those before it completed). A sorted array, not a heap: a new thread block usually ends
  /// after those already running, so it goes at or near the back, and the first to complete is taken
  /// from the front; per thread block that is a few moves instead of a heap's sift-down (gpumux bench,
  /// docs/performance.md).
  struct Group {
    KernelId kernel{};
    const WorkClock* clock = nullptr;  ///< the kernel's work clock; nullptr: work is time
    std::vector<Running> tbs;
    std::size_t head = 0;
    [[nodiscard]] bool empty() const { return head == tbs.size(); }
    [[nodiscard]] const Running& first() const { return tbs[head]; }
    [[nodiscard]] TimePs time_of(TimePs work) const { return clock == nullptr ? work : clock->time_of(work); }
    [[nodiscard]] TimePs work_at(TimePs at) const { return clock == nullptr ? at : clock->work_at(at); }
  };

  /// A thread block stopped by a context save, with its place in completion order.
  struct SavedTb {
    PreemptedTb tb;
    TbFootprint footprint{};
    TimePs end_ps = 0;  ///< when it would have completed, as its clock read at the save
    std::uint64_t sequence = 0;
  };
  /// A re-issued thread block waiting for its context to come back.
  struct Restore {
    Running tb{};            ///< end_work unset until the context is back
    TimePs duration_ps = 0;  ///< what it runs once its context is back
    bool saved = false;      ///< a save stopped the SM meanwhile; the TB goes to the save
    const KernelDesc* desc = nullptr;
  };

  void complete_due(TimePs now) override;
  /// complete_due() without interference (penalty_ == nullptr). Inlined, as push_running() and
  /// group_for(): the steps of every thread block's start and completion (issue 20).
  [[gnu::always_inline]] inline void complete_due_on_time(TimePs now);
  void finish_save();
  void release(const TbFootprint& footprint);
  [[gnu::always_inline]] inline void push_running(const Running& tb, TimePs now);
  /// The group of `kernel`'s thread blocks (the one group without interference), made if it has none.
  [[gnu::always_inline]] inline Group& group_for(KernelId kernel, TimePs now);
  /// The group whose first thread block completes first, by time then issue order; nullptr when none runs.
  [[nodiscard]] Group* earliest_group();
  /// Takes the first thread block of `group` (dropped when that empties it).
  Running pop_first(Group& group);
  void restore_done(std::uint64_t restore, TimePs done_ps);
  void save_written(TimePs done_ps);
  void maybe_finish_save();
  [[nodiscard]] TimePs now_ps() const { return calendar_.now(); }
  /// The calendar's entry for this SM: its next completion at `at` (kNever: none).
  void wake_at(TimePs at);
  /// `kernel`'s work clock at `at`, made if none of its thread blocks runs (at itself without penalty).
  /// Inline: without interference it is `at`, on every thread block's start.
  [[nodiscard]] TimePs work_at(KernelId kernel, TimePs at) {
    return penalty_ == nullptr ? at : penalised_work_at(kernel, at);
  }
  [[nodiscard]] TimePs penalised_work_at(KernelId kernel, TimePs at);
  void on_progress_rate_changed(TimePs now) override;
  /// Moves the completion event to the first thread block's end as the work clocks now map it.
  void retime(TimePs now);

  SmId id_;
  TbCalendar& calendar_;
  std::uint32_t calendar_slot_;
  BandwidthPenalty* penalty_;
  const SmResources& limits_;
  TbCompletionListener& listener_;
  TbDurationModel durations_;
  SmUsage usage_;
  std::uint32_t shared_memory_capacity_ = 0;  ///< carve-out chosen by the first resident TB
  /// Running thread blocks: one group per kernel with interference on, a single group without. Empty
  /// groups are dropped (with interference, a kernel's clock goes with its last thread block).
  std::vector<Group> groups_;
  std::uint64_t next_sequence_ = 0;
  TimePs wake_at_ps_ = kNever;  ///< its calendar entry
  TimePs busy_since_ps_ = 0;
  TimePs busy_total_ps_ = 0;
  std::uint64_t tbs_completed_ = 0;
  SmSetup setup_;
  // Context switch.
  TimePs drain_ps_;  ///< GpuConfig context_switch.drain_cycles
  TimePs trap_ps_;   ///< GpuConfig context_switch.trap_cycles
  MemoryPort memory_;
  ContextMover mover_;
  std::map<std::uint64_t, Restore> restores_;  ///< by request number: deterministic order
  std::uint64_t next_restore_ = 0;
  bool saving_ = false;  ///< stopped for a context save, from save_context() to on_context_saved
  bool save_sent_ = false;
  std::uint32_t restores_to_save_ = 0;  ///< restores still running whose TBs the save includes
  TimePs save_requested_ps_ = 0;        ///< when the current save stopped the SM
  TimePs save_ready_ps_ = 0;            ///< the save's last write taken, and those restores done
  ContextSave save_;                    ///< the save under way
  std::vector<SavedTb> saved_;
  sc_core::sc_event save_done_;
};

}  // namespace gpumux
