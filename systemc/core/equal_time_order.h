#pragma once
// A defined order for what several processes do at one simulated instant.
//
// Why: IEEE 1666 leaves the order in which SystemC runs processes that wake at the same instant to the
// implementation, and the reference kernel's order depends on the history of waits (its timed-event
// heap). Where two of them then use a first-come-first-served resource at that instant (two host
// streams ringing doorbells over the PCIe link, a DMA burst and a context-save burst reaching the memory
// pipe), which goes first would decide the result: a change that only alters the history of waits
// (running a block ahead of SystemC's clock, docs/performance.md) or another SystemC release could move
// results. So every such process takes a turn here before it acts:
//   - when nothing else is pending at the instant (no other process runnable, no delta notification),
//     nothing can tie with it: it acts at once, the common case, at the cost of one check;
//   - otherwise it waits until everything else at the instant has settled (no pending activity but
//     other turn-takers), and turns go lowest rank first, one at a time, each after the previous one's
//     consequences have settled.
// A turn lasts until its holder waits: the rest of that evaluation phase.
//
// Ranks (GpuSystem assigns them): the DMA engines, then the context traffic, then the host streams, the
// last-declared stream first, and last the thread-block calendar, whose completions come after every
// other activity at its instant (as its own yield did before this class). Last-declared first is what
// the reference SystemC kernel did with processes that start together (the golden runs, the measured
// interference curves and the tests that launch two processes at time 0 are unchanged by this class);
// any fixed order would do.

#include <cstdint>
#include <vector>

#include <systemc>

namespace gpumux {

class EqualTimeOrder;

/// One turn-taker's place in an EqualTimeOrder. Unattached (a module built alone, in a testbench),
/// take() returns at once.
class EqualTimeTurn {
 public:
  void attach(EqualTimeOrder& order, std::uint64_t rank) {
    order_ = &order;
    rank_ = rank;
  }
  [[nodiscard]] bool attached() const { return order_ != nullptr; }
  /// Returns when the holder may act at the current instant (see above); unattached, at once.
  void take();
  /// True from take()'s return until the holder waits (for an attached turn or not).
  [[nodiscard]] bool held() const { return held_in_delta_ == sc_core::sc_delta_count(); }

 private:
  friend class EqualTimeOrder;
  EqualTimeOrder* order_ = nullptr;
  std::uint64_t rank_ = 0;
  sc_core::sc_event released_event_;
  bool released_ = false;
  std::uint64_t held_in_delta_ = ~std::uint64_t{0};  ///< sc_delta_count() of the turn held
};

class EqualTimeOrder final : public sc_core::sc_module {
 public:
  explicit EqualTimeOrder(const sc_core::sc_module_name& name);

  /// Turns that had to wait (another process was active at their instant).
  [[nodiscard]] std::uint64_t waited() const { return waited_; }

 private:
  friend class EqualTimeTurn;
  void take(EqualTimeTurn& turn);
  void run();

  std::vector<EqualTimeTurn*> waiting_;
  sc_core::sc_event requested_;
  std::uint64_t waited_ = 0;
};

}  // namespace gpumux
