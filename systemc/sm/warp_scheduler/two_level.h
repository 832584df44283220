#pragma once
// Two-level warp schedulers (Awatramani 3.2, Fig. 3.1; the implementation of 3.4.2.2, Fig. 3.6):
// `two-level-lrr`, `two-level-gto`, `two-level-phase-aware`.
//
// Every resident warp is in exactly one of three queues:
//   - ready (at most ready_queue_size warps, Table 3.1: 6; the "fetch group" of Narasiman et al.
//     [48]): the only warps select() considers;
//   - pending: warps whose next instruction waits on a long-latency operation;
//   - active: the other warps, in priority order, head first.
// A ready warp that starts waiting (long_latency_wait) moves to pending and the head of the active
// queue takes its place. When its waits complete (long_latency_done) it goes to the tail of the
// active queue and the priority logic sorts the active queue: round robin does not sort; GTO sorts
// by launch order (age); phase-aware by the length of the phase the warp enters, shortest first
// (ties: oldest), so "length information is required only once for an entire phase" (3.4.2.2 also
// calls this key "the phase distance of the next phase": at the phase's first instruction, where the
// returning warp stands, distance and length are the same number). Whenever the
// ready queue has room (a warp left it or finished) the head of the active queue moves up. New warps
// (add_warp) enter the active queue the same way as returning ones.
//
// Inside the ready queue the three schedulers share one order, loose round robin by default: the
// thesis makes the priority assignment logic the only difference between them ("this design
// effectively allows implementation of different scheduling policies by modifying the policy of the
// priority assignment logic"), and the two-level scheduler of its simulator (GPGPU-Sim v3.2
// `two_level_active`, after [48]) implements only round robin within the active set. Option
// `inner: gto` (greedy then oldest inside the ready queue) is the other choice 3.2 names ("both the RR
// and GTO policies can be used for assigning priority to the fetch groups as well as warps within the
// fetch group").
//
// All queues are vectors with their capacity reserved at construction: no allocation after it;
// select() scans at most ready_queue_size warps.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sm/warp_scheduler/resident_warps.h"
#include "sm/warp_scheduler/warp_scheduler.h"

namespace gpumux {

class TwoLevelScheduler final : public WarpScheduler {
 public:
  /// The priority assignment logic that sorts the active queue (Fig. 3.6).
  enum class Priority : std::uint8_t {
    kRoundRobin,     ///< two-level-lrr: no sorting; returning warps wait at the tail
    kOldest,         ///< two-level-gto: launch order
    kShortestPhase,  ///< two-level-phase-aware: length of the phase the warp enters, then age
  };
  /// The order among ready-queue warps.
  enum class Inner : std::uint8_t {
    kLrr,  ///< rotate past the warp that issued (GPGPU-Sim two_level_active; [48])
    kGto,  ///< the warp that issued last while it can, else the oldest ready warp
  };
  enum class Queue : std::uint8_t { kNone, kReady, kActive, kPending };

  /// Throws std::invalid_argument for setup.capacity or setup.ready_queue_size 0.
  TwoLevelScheduler(Priority priority, Inner inner, const WarpSchedulerSetup& setup);

  [[nodiscard]] std::string name() const override;
  void add_warp(WarpSlot warp, std::uint64_t age, const WarpQuery& query) override;
  void remove_warp(WarpSlot warp) override;
  /// A ready or active warp moves to pending (an active one cannot be waiting in practice, since it
  /// does not issue, but the queues stay consistent if the SM says so); pending: no change.
  void long_latency_wait(WarpSlot warp) override;
  /// A pending warp returns to the active queue; a warp that is not pending: no change.
  void long_latency_done(WarpSlot warp, const WarpQuery& query) override;
  [[nodiscard]] std::optional<WarpSlot> select(const WarpQuery& query) override;
  /// std::logic_error unless the warp is in the ready queue (only ready warps are selected).
  void issued(WarpSlot warp) override;

  // Inspection, for tests and traces.
  /// Ready warps in their current priority order (inner kLrr: rotation order; kGto: entry order).
  [[nodiscard]] const std::vector<WarpSlot>& ready_queue() const { return ready_; }
  /// Active warps, head (next to become ready) first.
  [[nodiscard]] const std::vector<WarpSlot>& active_queue() const { return active_; }
  /// Pending warps in the order they started waiting.
  [[nodiscard]] const std::vector<WarpSlot>& pending_queue() const { return pending_; }
  [[nodiscard]] Queue queue_of(WarpSlot warp) const {
    return warp < queue_.size() ? queue_[warp] : Queue::kNone;
  }
  [[nodiscard]] std::uint32_t ready_queue_size() const { return ready_size_; }

 private:
  /// Tail of the active queue, then the priority logic's sort (an insertion: the queue is sorted
  /// already and the keys of queued warps do not change while they wait there).
  void enter_active(WarpSlot warp, const WarpQuery& query);
  /// Head of the active queue into the ready queue while the ready queue has room.
  void fill_ready();
  /// Erase `warp` from `queue` (it is there).
  static void erase(std::vector<WarpSlot>& queue, WarpSlot warp);
  /// Strict priority order of the active queue for kOldest and kShortestPhase.
  [[nodiscard]] bool before(WarpSlot a, WarpSlot b) const;

  Priority priority_;
  Inner inner_;
  std::uint32_t ready_size_;
  ResidentWarps warps_;
  std::vector<Queue> queue_;                 ///< per slot
  std::vector<std::uint32_t> phase_length_;  ///< per slot: read on entry to the active queue
  std::vector<WarpSlot> ready_;
  std::vector<WarpSlot> active_;
  std::vector<WarpSlot> pending_;
  std::optional<WarpSlot> last_;  ///< inner kGto: the greedy warp, while it stays ready
};

}  // namespace gpumux
