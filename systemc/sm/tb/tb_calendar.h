#pragma once
// The completion calendar of the TB-level SMs (issue 20): one queue of every SM's next thread-block
// completion, served by one SystemC thread, instead of one timed SystemC event per SM re-notified at
// every completion. SystemC's own timed-event queue (a heap of event pointers compared through a
// function pointer) was half of a TB-level run's time (docs/performance.md).
//
// Temporal decoupling, as loosely-timed TLM initiators do with a quantum: when nothing else in the
// model has activity pending before the calendar's next instant (sc_time_to_pending_activity()), the
// thread handles that instant at once, ahead of SystemC's clock, without a timed wait; now() gives the
// instant being handled. Every path from the TB-level engine to the rest of the SystemC model (a kernel
// finishing, a context save or restore's memory traffic, the progress line) first calls sync(), which
// waits until SystemC's clock reaches now(): nothing else can run in between, because nothing else was
// pending before it, so every process sees the same times and the same order as without decoupling.
//
// Order at one instant: first every other process's activity at it (to the last delta cycle), then the
// SMs due, in SM-index order. Before this calendar, SystemC's order for equal-time events decided, which
// IEEE 1666 leaves to the implementation; decoupled or not, this order is the same.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>

#include "core/engine_clock.h"
#include "core/equal_time_order.h"
#include "core/tlm_quantum.h"
#include "core/types.h"

namespace gpumux {

/// A winner tree over `leaves` slots (issue 20: a thread-block completion changes one SM's entry, the one
/// just taken from the top, and a 4-ary heap's sift-down was the model's largest cost): one leaf per
/// slot, at tree_[leaves + slot]; node i < leaves holds the smaller of its children 2i and 2i + 1; the
/// root is tree_[1]. Nodes 1 to 2 leaves - 1 form a complete binary tree for any number of leaves (not
/// padded to a power of two: with 132 SMs most paths are 7 matches long instead of 8). A change replays
/// the matches on the slot's path, about log2(leaves) of them, without branches on the data.
template <typename Key>
class WinnerTree {
 public:
  /// Rebuilds the tree over `leaf_keys` (one per slot).
  void assign(const std::vector<Key>& leaf_keys) {
    leaves_ = static_cast<std::uint32_t>(leaf_keys.size());
    tree_.assign(2 * std::size_t{leaves_}, Key{});
    std::copy(leaf_keys.begin(), leaf_keys.end(), tree_.begin() + leaves_);
    for (std::size_t i = leaves_ - 1; i >= 1; --i) tree_[i] = std::min(tree_[2 * i], tree_[2 * i + 1]);
  }
  /// Sets `slot`'s key and replays its matches up to the root.
  void set(std::uint32_t slot, Key key) {
    std::size_t i = leaves_ + slot;
    // The winner so far stays in registers; each level reads only the sibling, so the loads do not wait
    // for the stores of the level below. The smaller key wins (a conditional move, not a branch: which
    // side wins is as good as random, and a mispredicted branch per level was most of this function's
    // time).
    Key winner = key;
    tree_[i] = winner;
    for (; i > 1; i /= 2) {
      const Key sibling = tree_[i ^ 1U];
      winner = sibling < winner ? sibling : winner;
      tree_[i / 2] = winner;
    }
  }
  [[nodiscard]] Key top() const { return tree_[1]; }
  [[nodiscard]] Key leaf(std::uint32_t slot) const { return tree_[leaves_ + slot]; }
  [[nodiscard]] std::uint32_t leaves() const { return leaves_; }

 private:
  std::vector<Key> tree_;
  std::uint32_t leaves_ = 0;
};

/// What the calendar calls when an SM's next completion is due.
class TbCalendarClient {
 public:
  virtual ~TbCalendarClient() = default;
  /// Completes the SM's thread blocks due at `now` (the calendar's now()).
  virtual void complete_due(TimePs now) = 0;
};

class TbCalendar final : public sc_core::sc_module, public EngineClock {
 public:
  /// `run_ahead`: decouple from SystemC's clock when nothing else is pending (off: one timed wait per
  /// instant, as a plain event-driven model).
  TbCalendar(const sc_core::sc_module_name& name, bool run_ahead);

  /// Registers an SM; returns its calendar slot (SMs register in SM-index order).
  std::uint32_t add(TbCalendarClient& client);
  /// The slot's next completion is at `at` (kNever: none). Replaces what it had. Inline: the SM whose
  /// completions are being handled calls it for every thread block it starts, and only notes the time.
  void schedule(std::uint32_t slot, TimePs at) {
    if (slot == dispatching_) {
      rescheduled_ = at;
      return;
    }
    schedule_other(slot, at);
  }

  // now() (EngineClock): the simulated time of the instant being handled, ahead of sc_time_stamp() while
  // decoupled.
  /// Brings SystemC's clock to now() before the TB-level engine reaches the rest of the model.
  void sync() override {
    if (ahead_) catch_up();
  }

  /// Called once at the end of the instant being handled (after every SM due at it) when
  /// call_at_end_of_instant() asked for it: TB-level interference's flush, which then needs no SystemC
  /// notification (so the calendar can run ahead with interference on too).
  void set_end_of_instant(std::function<void(TimePs)> hook) { end_of_instant_ = std::move(hook); }
  /// Equal-time order (core/equal_time_order.h): the calendar takes a turn of rank `rank` before the
  /// completions of an instant where other processes are active. Without one it waits itself until
  /// nothing else is pending at the instant (a testbench with no other turn-takers).
  void set_equal_time_order(EqualTimeOrder& order, std::uint64_t rank) { turn_.attach(order, rank); }
  /// True when the calendar is handling an instant now, and will call the end-of-instant hook after it;
  /// false from anywhere else (the caller arranges the call itself).
  bool call_at_end_of_instant() {
    if (!in_instant_) return false;
    end_requested_ = true;
    return true;
  }

  /// Instants handled ahead of SystemC's clock, and with a timed wait (docs/performance.md).
  [[nodiscard]] std::uint64_t instants_ahead() const { return instants_ahead_; }
  [[nodiscard]] std::uint64_t instants_waited() const { return instants_waited_; }

 private:
  [[nodiscard]] TimePs systemc_now() const override { return sc_core::sc_time_stamp().value(); }
  static constexpr std::uint32_t kNone = 0xFFFF'FFFFU;
  /// A slot's next completion as a tree holds it: the due time above the slot's bits, so that of two
  /// entries the one earlier by (due time, slot) is the smaller number (equal times go in slot order,
  /// whatever the tree's shape). Narrow keys (64 bits: the due time shifted left by the bits the slots
  /// need) while every due time fits, which at 132 SMs is up to 2^56 ps, 20 simulated hours; a later due
  /// time moves the calendar to wide keys (128 bits: the due time in the high half) for the rest of the
  /// run. A narrow tree's match is half the instructions of a wide one's (docs/performance.md).
  using Narrow = std::uint64_t;
  __extension__ using Wide = unsigned __int128;       // GCC and Clang; __extension__: no -Wpedantic warning
  static constexpr Narrow kNarrowNever = ~Narrow{0};  ///< a slot with nothing due (any slot)
  [[nodiscard]] Narrow narrow_key(TimePs due, std::uint32_t slot) const {
    return due == kNever ? kNarrowNever : (due << slot_bits_) | slot;
  }
  [[nodiscard]] TimePs narrow_due(Narrow k) const { return k == kNarrowNever ? kNever : k >> slot_bits_; }
  static Wide wide_key(TimePs due, std::uint32_t slot) { return (Wide{due} << 64U) | slot; }
  static TimePs wide_due(Wide k) { return static_cast<TimePs>(k >> 64U); }
  /// The due time of the slot's entry.
  [[nodiscard]] TimePs due_of(std::uint32_t slot) const {
    return wide_ ? wide_due(wide_tree_.leaf(slot)) : narrow_due(narrow_tree_.leaf(slot));
  }
  /// The earliest completion of all (due kNever: none), by (due time, slot).
  [[nodiscard]] TimePs top_due() const {
    return wide_ ? wide_due(wide_tree_.top()) : narrow_due(narrow_tree_.top());
  }
  [[nodiscard]] std::uint32_t top_slot() const {
    return wide_ ? static_cast<std::uint32_t>(wide_tree_.top())
                 : static_cast<std::uint32_t>(narrow_tree_.top() & slot_mask_);
  }
  void run();
  void catch_up();
  /// schedule() for a slot other than the one being handled.
  void schedule_other(std::uint32_t slot, TimePs at);
  /// Sets `slot`'s due time (kNever: none) in the tree.
  void update(std::uint32_t slot, TimePs at) {
    if (!wide_ && (at <= narrow_limit_ || at == kNever)) {
      narrow_tree_.set(slot, narrow_key(at, slot));
      return;
    }
    update_wide(slot, at);
  }
  /// update() with wide keys; moves the calendar to them first if it still has narrow ones.
  void update_wide(std::uint32_t slot, TimePs at);
  /// Every slot's due time, in slot order.
  [[nodiscard]] std::vector<TimePs> due_times() const;
  /// Moves the calendar to wide keys, the slots due at `dues`.
  void assign_wide(const std::vector<TimePs>& dues);

  bool run_ahead_;
  std::vector<TbCalendarClient*> clients_;
  WinnerTree<Narrow> narrow_tree_;
  WinnerTree<Wide> wide_tree_;  ///< in use once wide_ is set; empty before
  bool wide_ = false;
  std::uint32_t slot_bits_ = 0;   ///< bits a slot number needs (narrow keys)
  Narrow slot_mask_ = 0;          ///< the low slot_bits_ bits
  TimePs narrow_limit_ = kNever;  ///< the latest due time a narrow key holds
  /// The slot whose completions are being handled (kNone: none): what it schedules meanwhile is kept in
  /// rescheduled_ and applied when it returns, so its entry in the tree moves once per instant.
  std::uint32_t dispatching_ = kNone;
  TimePs rescheduled_ = kNever;
  bool in_instant_ = false;     ///< handling the SMs due at an instant (and its end-of-instant hook)
  bool end_requested_ = false;  ///< call end_of_instant_ when the instant's SMs are done
  std::function<void(TimePs)> end_of_instant_;
  EqualTimeTurn turn_;
  bool running_ = false;  ///< the thread is running (not waiting): schedule() needs not wake it
  RunAheadHorizon horizon_;
  TimePs waiting_until_ = kNever;  ///< the thread's timed wait, kNever when it is running or idle
  sc_core::sc_event changed_;      ///< an earlier completion while the thread waits
  std::uint64_t instants_ahead_ = 0;
  std::uint64_t instants_waited_ = 0;
};

}  // namespace gpumux
