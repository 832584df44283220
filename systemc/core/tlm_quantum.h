#pragma once
// Temporal decoupling for the model's loosely-timed TLM-2.0 initiators (the DMA engines and the SMs'
// context save/restore): each keeps its local time in a tlm_utils::tlm_quantumkeeper and synchronises
// with the SystemC kernel through it. The global quantum is defined here and set once, by the top
// module (GpuSystem) or a testbench standing in for it.

#include <algorithm>
#include <string>

#include <tlm_utils/tlm_quantumkeeper.h>
#include <systemc>
#include <tlm>

#include "core/error.h"
#include "core/types.h"

namespace gpumux {

/// The global quantum: one picosecond, the time resolution, i.e. no lookahead.
///
/// Why this value: the memory controller (and each direction of the PCIe link) serves requests
/// first come first served in the order b_transport reaches it, and a request's service can delay
/// every later one. An initiator running ahead of the kernel by any positive quantum can therefore
/// book the channel before another initiator's request that arrives earlier in simulated time
/// (the concurrent-save bug: one SM's whole context save booked before a second SM's, which then
/// queued behind it). With a quantum of one resolution step, need_sync() is true whenever a
/// transaction lies in the initiator's future, so every transaction is sent at the simulated time
/// it arrives and the memory controller sees requests in time order (it checks this on every
/// request). The price is one wait per burst; copies and context switches are a few thousand
/// bursts per run, far below the thread-block events that set the simulation speed.
inline sc_core::sc_time global_quantum() { return sc_core::sc_time::from_value(1); }

/// Sets the global quantum of every tlm_quantumkeeper (called once, by the top module).
inline void set_global_quantum() { tlm_utils::tlm_quantumkeeper::set_global_quantum(global_quantum()); }

/// The absolute time of the next activity pending in the SystemC kernel (now, when some is pending at the
/// current time; kNever when none is). A thread that runs ahead of the kernel (sm/tb/tb_calendar.h,
/// sm/context_traffic.h) may handle anything before it: no other process can act earlier.
inline TimePs next_pending_activity_ps() {
  const TimePs now = sc_core::sc_time_stamp().value();
  if (sc_core::sc_pending_activity_at_current_time()) return now;
  return now + std::min<TimePs>(sc_core::sc_time_to_pending_activity().value(), kNever - now);
}

/// The next activity elsewhere in the model, for a thread running ahead of SystemC's clock (the TB
/// calendar, the context traffic, the DMA engines): read once from the kernel and kept while the thread
/// runs on without waiting, since nothing else runs meanwhile; forgotten at each of the thread's waits
/// and whenever it notifies another process.
class RunAheadHorizon {
 public:
  /// True when absolute time `at_ps` comes before every activity pending elsewhere (strictly: another
  /// process's activity at `at_ps` itself is left to the equal-time order).
  [[nodiscard]] bool before(TimePs at_ps) {
    if (!valid_) {
      ps_ = next_pending_activity_ps();
      valid_ = true;
    }
    return at_ps < ps_;
  }
  void forget() { valid_ = false; }

 private:
  TimePs ps_ = 0;
  bool valid_ = false;
};

/// Makes absolute time `at_ps` the local time of `keeper` and synchronises when the quantum says so:
/// on return the caller may send a transaction annotated with get_local_time(). An initiator's
/// transactions are made in time order, so `at_ps` is never before the kernel's time.
inline void advance_to(tlm_utils::tlm_quantumkeeper& keeper, TimePs at_ps) {
  const TimePs now = sc_core::sc_time_stamp().value();
  if (at_ps < now) {
    throw InvariantViolation("invariant violated at " + std::to_string(ns_from_ps(now)) + " ns in " +
                             sc_core::sc_get_current_process_handle().name() + ": a transaction due at " +
                             std::to_string(ns_from_ps(at_ps)) +
                             " ns is sent late (an initiator's transactions must be made in time order)");
  }
  keeper.set(sc_core::sc_time::from_value(at_ps - now));
  if (at_ps > now && keeper.need_sync()) keeper.sync();
}

}  // namespace gpumux
