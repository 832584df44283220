#pragma once
// The context save and restore traffic of every SM (Tanasic 3.2), sent by one thread (issue 20). Each SM's
// ContextMover (sm/context_mover.h) keeps its transfers and their pace; this thread sends the bursts of all
// of them in time order, each at its own time, through the owning SM's memory port, keeping its local
// time in a tlm_utils::tlm_quantumkeeper (core/tlm_quantum.h) as every memory initiator does.
//
// Why one thread for all SMs: when a policy preempts several SMs at once, their saves (and then their
// thread blocks' restores) are paced alike, so their bursts fall due at the same instants. One thread
// sends all of them in one activation instead of one thread switch per burst per SM (the mover threads
// were a third of a Tanasic DSS run's time, docs/performance.md), and in a defined order: by time, then
// SM index, then the transfer requested first. With a thread per SM, equal-time bursts of two SMs reached
// memory in the order SystemC woke the threads, which IEEE 1666 leaves to the implementation.
//
// Temporal decoupling (`simple` memory only, whose requests carry their arrival as annotated delay): while
// nothing else in the model has activity pending before a burst's time (sc_time_to_pending_activity()),
// no other request can reach memory before it, so the thread sends it at once, ahead of SystemC's clock,
// annotated with its time, instead of waiting for it: a save of 64 bursts is one activation when nothing
// else happens meanwhile. Before it tells an owner that a transfer is done (which may reach any module),
// it waits until SystemC's clock reaches the transfer's last burst, the time it would have told it without
// running ahead. The dram model takes requests at the time they are made, so there it keeps in step.

#include <cstdint>
#include <vector>

#include <systemc>

// After <systemc>: the quantum keeper uses sc_core without including it.
#include <tlm_utils/tlm_quantumkeeper.h>

#include "core/equal_time_order.h"
#include "core/tlm_quantum.h"
#include "core/types.h"

namespace gpumux {

class ContextMover;

class ContextTraffic final : public sc_core::sc_module {
 public:
  /// `run_ahead`: send bursts ahead of SystemC's clock when nothing else is pending (the `simple`
  /// memory model; see above).
  ContextTraffic(const sc_core::sc_module_name& name, bool run_ahead);

  /// `mover` has bursts to send (a new transfer): the thread looks again.
  void has_bursts(ContextMover& mover);
  /// A transfer of `mover` has all its bursts sent and answered: the thread tells its owner.
  void has_finished(ContextMover& mover);
  /// Equal-time order (core/equal_time_order.h): the thread takes a turn of rank `rank` before it sends a
  /// burst or tells owners of finished transfers at SystemC's current time.
  void set_equal_time_order(EqualTimeOrder& order, std::uint64_t rank) { turn_.attach(order, rank); }

 private:
  void run();
  /// Wakes the thread, unless it is the caller (it looks again anyway).
  void wake();
  // The thread's waits: it is not running meanwhile, and what it knew of the rest is stale after.
  void pause(const sc_core::sc_time& time);
  void pause_until(const sc_core::sc_event& event);
  void pause_until(const sc_core::sc_time& time, const sc_core::sc_event& event);

  bool run_ahead_;
  bool running_ = false;     ///< the thread is running (not waiting)
  TimePs local_ps_ = 0;      ///< the time of the last burst sent (ahead of SystemC's clock, or at it)
  RunAheadHorizon horizon_;  ///< forgotten after any wait and after owners were told of a transfer
  std::vector<ContextMover*> sending_;    ///< movers with bursts left to send (any order)
  std::vector<ContextMover*> finishing_;  ///< movers with a transfer answered in full
  sc_core::sc_event work_;
  EqualTimeTurn turn_;
  tlm_utils::tlm_quantumkeeper quantum_keeper_;
};

}  // namespace gpumux
