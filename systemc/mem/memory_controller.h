#pragma once
// The GPU memory controller: a TLM-2.0 target that every initiator shares: the DMA engines (copies)
// and each SM (context save and restore). One channel with a peak bandwidth and a fixed latency
// (core/bandwidth_channel.h): contention between initiators emerges from the order and size of their
// requests instead of being assumed.
//
// Loosely timed: b_transport adds queueing, service and latency to the caller's annotated delay and
// never waits. The channel is first come first served, so requests must reach it in the order they
// arrive in simulated time; the initiators guarantee it by synchronising through their quantum
// keepers (core/tlm_quantum.h), and the controller checks it on every request: a request arriving
// before one already served is an InvariantViolation naming both times and the calling process.

#include <cstdint>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <systemc>
#include <tlm>

#include "core/bandwidth_channel.h"
#include "core/gpu_config.h"

namespace gpumux {

/// One request the controller served: it arrived at `arrival_ps` and its data had moved by `done_ps`.
struct MemoryTransfer {
  TimePs arrival_ps = 0;
  TimePs done_ps = 0;
  std::uint64_t bytes = 0;
  std::uint32_t initiator = 0;
  bool is_write = false;
};

class MemoryController final : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<MemoryController> socket;

  MemoryController(const sc_core::sc_module_name& name, const MemoryConfig& config);

  /// Serves `bytes` from `initiator` arriving at absolute time `arrival_ps`; returns the absolute
  /// time the transaction completes: writes are posted (done when the channel has taken the data),
  /// reads return their data the access latency later. The timing core of b_transport. Throws
  /// InvariantViolation if `arrival_ps` is before the previous request's arrival.
  TimePs serve(std::uint32_t initiator, std::uint64_t bytes, TimePs arrival_ps, bool is_write);

  [[nodiscard]] const BandwidthChannel& channel() const { return channel_; }
  /// Requests served, each checked to arrive no earlier than the one before.
  [[nodiscard]] std::uint64_t transactions() const { return transactions_; }
  /// Arrival time of the latest request (0 before the first).
  [[nodiscard]] TimePs last_arrival_ps() const { return last_arrival_ps_; }
  [[nodiscard]] const std::vector<std::uint64_t>& bytes_by_initiator() const { return bytes_by_initiator_; }
  /// Every request served from now on is appended to `log` (the waveform's memory signals); null: none.
  void set_transfer_log(std::vector<MemoryTransfer>* log) { log_ = log; }

 private:
  void b_transport(int initiator, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  BandwidthChannel channel_;
  std::uint64_t transactions_ = 0;
  TimePs last_arrival_ps_ = 0;
  std::vector<MemoryTransfer>* log_ = nullptr;
  std::vector<std::uint64_t> bytes_by_initiator_;
};

}  // namespace gpumux
