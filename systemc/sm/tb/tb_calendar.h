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

#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>

#include "core/engine_clock.h"
#include "core/equal_time_order.h"
#include "core/tlm_quantum.h"
#include "core/types.h"

namespace gpumux {

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

  /// The simulated time of the instant being handled: ahead of sc_time_stamp() while decoupled.
  [[nodiscard]] TimePs now() const override { return ahead_ ? local_ps_ : sc_core::sc_time_stamp().value(); }
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
  static constexpr std::uint32_t kNone = 0xFFFF'FFFFU;
  /// A slot's next completion as the tree holds it: the due time in the high 64 bits, the slot in the
  /// low ones, so that of two entries the one earlier by (due time, slot) is the smaller number.
  __extension__ using Key = unsigned __int128;  // GCC and Clang; __extension__: no -Wpedantic warning
  static Key key(TimePs due, std::uint32_t slot) { return (Key{due} << 64U) | slot; }
  static TimePs due_of(Key k) { return static_cast<TimePs>(k >> 64U); }
  /// The earliest completion of all (due kNever: none), by (due time, slot).
  [[nodiscard]] TimePs top_due() const { return due_of(tree_[1]); }
  [[nodiscard]] std::uint32_t top_slot() const { return static_cast<std::uint32_t>(tree_[1]); }
  void run();
  void catch_up();
  /// schedule() for a slot other than the one being handled.
  void schedule_other(std::uint32_t slot, TimePs at);
  /// Sets `slot`'s due time and replays its matches up to the root.
  void update(std::uint32_t slot, TimePs at);

  bool run_ahead_;
  std::vector<TbCalendarClient*> clients_;
  /// A winner tree over the slots (issue 20: a thread-block completion changes one SM's entry, the one
  /// just taken from the top, and a 4-ary heap's sift-down was the model's largest cost): one leaf per
  /// slot, at tree_[leaves_ + slot]; node i < leaves_ holds the earlier of its children 2i and 2i + 1 (the
  /// smaller key: on equal times the lower slot, so equal times go in slot order, whatever the shape);
  /// the root is tree_[1]. Nodes 1 to 2 leaves_ - 1 form a complete binary tree for any number of
  /// leaves. An update replays the matches on the slot's path, about log2(leaves_) of them, without
  /// branches on the data.
  std::vector<Key> tree_ = {Key{}, key(kNever, 0)};
  std::uint32_t leaves_ = 1;
  /// The slot whose completions are being handled (kNone: none): what it schedules meanwhile is kept in
  /// rescheduled_ and applied when it returns, so its entry in the tree moves once per instant.
  std::uint32_t dispatching_ = kNone;
  TimePs rescheduled_ = kNever;
  bool in_instant_ = false;     ///< handling the SMs due at an instant (and its end-of-instant hook)
  bool end_requested_ = false;  ///< call end_of_instant_ when the instant's SMs are done
  std::function<void(TimePs)> end_of_instant_;
  EqualTimeTurn turn_;
  bool ahead_ = false;    ///< handling an instant ahead of SystemC's clock
  bool running_ = false;  ///< the thread is running (not waiting): schedule() needs not wake it
  TimePs local_ps_ = 0;   ///< the instant being handled
  RunAheadHorizon horizon_;
  TimePs waiting_until_ = kNever;  ///< the thread's timed wait, kNever when it is running or idle
  sc_core::sc_event changed_;      ///< an earlier completion while the thread waits
  std::uint64_t instants_ahead_ = 0;
  std::uint64_t instants_waited_ = 0;
};

}  // namespace gpumux
