#pragma once
// The memory side of the GPU as its initiators see it (mem/memory_port.h says how they talk to it):
// one TLM-2.0 target socket shared by the DMA engines and the SMs, socket index = initiator. Two
// models implement it, chosen by the GPU config's memory.model:
//   simple (mem/memory_controller.h): one bandwidth pipe with a fixed latency; every request's
//          completion is known on arrival (TLM_COMPLETED at once);
//   dram   (mem/dram_memory_system.h): L2 slices in front of GDDR5 channels with FR-FCFS schedulers;
//          a request that misses completes when the DRAM has served it (TLM_ACCEPTED, then
//          BEGIN_RESP on the backward path).
// Both check that requests reach them in arrival-time order (an initiator that runs ahead of the
// kernel would be served out of order), and both log what they served for the waveform.
//
// Loosely-timed initiators may still call b_transport (a user's testbench, issue 13): the simple
// model answers it at once; the dram model refuses it with an InvariantViolation, as it cannot
// give a completion time without waiting and the model's own initiators never block.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "core/types.h"
#include "mem/dram/dram_channel.h"

namespace gpumux {

/// One request the memory served: it arrived at `arrival_ps` and completed at `done_ps`.
struct MemoryTransfer {
  TimePs arrival_ps = 0;
  TimePs done_ps = 0;
  std::uint64_t bytes = 0;
  std::uint32_t initiator = 0;
  bool is_write = false;
};

/// What the dram model's channels did, for the waveform (DramMemorySystem::set_dram_log): every DRAM
/// command, and when each burst entered its channel's queue.
struct DramActivity {
  std::uint32_t channels = 0;
  std::uint32_t banks = 0;
  TimePs refresh_ps = 0;  ///< tRFC: an all-bank refresh keeps the channel's banks busy this long
  std::vector<dram::DramCommand> commands;
  std::vector<std::pair<TimePs, std::uint32_t>> arrivals;  ///< (time, channel)
};

class MemoryTarget : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<MemoryTarget> socket;

  explicit MemoryTarget(const sc_core::sc_module_name& name);

  /// Requests served (each checked to arrive no earlier than the one before).
  [[nodiscard]] std::uint64_t transactions() const { return transactions_; }
  /// Bytes requested, by initiator (socket index).
  [[nodiscard]] const std::vector<std::uint64_t>& bytes_by_initiator() const { return bytes_by_initiator_; }
  [[nodiscard]] std::uint64_t bytes() const { return bytes_; }
  /// Time the memory was busy moving data (simple: the pipe; dram: the channels' data buses, summed
  /// over channels and divided by their number).
  [[nodiscard]] virtual TimePs busy_ps() const = 0;
  /// The model's own statistics for stats.json (null for simple).
  [[nodiscard]] virtual nlohmann::json details(TimePs end_ps) const = 0;
  /// Every request served from now on is appended to `log` (the waveform's memory signals); null: none.
  void set_transfer_log(std::vector<MemoryTransfer>* log) { log_ = log; }
  /// The dram model's channel activity from now on (the waveform's per-channel signals); the simple
  /// model has no channels and ignores it.
  virtual void set_dram_log(DramActivity* /*log*/) {}

 protected:
  /// A BEGIN_REQ arriving now from `initiator`: return TLM_COMPLETED with `delay` set to the time
  /// until it completes, or TLM_ACCEPTED and call respond() later.
  virtual tlm::tlm_sync_enum request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                                     sc_core::sc_time& delay) = 0;
  /// The blocking interface (see above).
  virtual void blocking_request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                                sc_core::sc_time& delay) = 0;
  /// Completes an accepted request: BEGIN_RESP on `initiator`'s backward path, done at `done_ps`.
  void respond(std::uint32_t initiator, tlm::tlm_generic_payload& payload, TimePs done_ps);
  /// Books a request arriving at `arrival_ps` (InvariantViolation when it is before the previous
  /// one) and counts its bytes.
  void admit(std::uint32_t initiator, std::uint64_t bytes, TimePs arrival_ps);
  /// Logs a served request for the waveform.
  void log(const MemoryTransfer& t) {
    if (log_ != nullptr) log_->push_back(t);
  }

 private:
  tlm::tlm_sync_enum nb_transport_fw(int initiator, tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  void b_transport(int initiator, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  std::uint64_t transactions_ = 0;
  std::uint64_t bytes_ = 0;
  TimePs last_arrival_ps_ = 0;
  std::vector<MemoryTransfer>* log_ = nullptr;
  std::vector<std::uint64_t> bytes_by_initiator_;
};

}  // namespace gpumux
