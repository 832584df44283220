#pragma once
// Context save and restore traffic of one SM (Tanasic 3.2), shared by both SM models: a loosely-timed
// TLM-2.0 initiator of the memory controller. A transfer is a run of bursts paced at the SM's
// bandwidth share from the moment it is requested (GpuConfig::context_switch); one thread sends the
// bursts of all the SM's transfers in time order, each at its own time, keeping its local time in a
// tlm_utils::tlm_quantumkeeper (core/tlm_quantum.h), so the memory controller serves them in arrival
// order with every other initiator's. The owner learns when each transfer's last burst is served.
//
// Construct during elaboration, inside the owning SM module's constructor: the thread is spawned
// there and belongs to that module.

#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>
#include <tlm>

// After <systemc>: the quantum keeper uses sc_core without including it.
#include <tlm_utils/tlm_quantumkeeper.h>

#include "core/gpu_config.h"
#include "core/types.h"

namespace gpumux {

class ContextMover {
 public:
  /// Called from the mover's thread when a transfer's last burst was sent, with the absolute time
  /// its last byte is served (for a read: when the data is back).
  using Done = std::function<void(TimePs done_ps)>;

  ContextMover(tlm::tlm_initiator_socket<>& socket, const GpuConfig& gpu, SmId sm);

  /// Starts moving `bytes` (a save when `is_write`, else a restore) from now. `bytes` > 0.
  void request(bool is_write, std::uint64_t bytes, Done on_done);

 private:
  struct Transfer {
    bool is_write = false;
    TimePs start_ps = 0;
    double sent_ps = 0;  ///< local time of the last burst sent, from start_ps (the pace is fractional)
    std::uint64_t left = 0;
    TimePs done_ps = 0;  ///< latest completion of a burst sent so far
    Done on_done;
  };

  /// The thread: sends every transfer's bursts in time order.
  void run();
  [[nodiscard]] TimePs next_burst_ps(const Transfer& t) const;

  tlm::tlm_initiator_socket<>& socket_;
  SmId sm_;
  double bytes_per_ps_;  ///< the SM's share of memory bandwidth for save/restore
  std::uint32_t burst_bytes_;
  double pace_ps_;                   ///< one full burst at that share
  std::vector<Transfer> transfers_;  ///< in request order
  sc_core::sc_event requested_;
  tlm_utils::tlm_quantumkeeper quantum_keeper_;
  tlm::tlm_generic_payload payload_;
  std::vector<unsigned char> buffer_;
};

}  // namespace gpumux
