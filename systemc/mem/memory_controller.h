#pragma once
// The `simple` memory model (memory.model: simple): one channel with a peak bandwidth and a fixed
// latency (core/bandwidth_channel.h), shared by every initiator. Contention between initiators
// emerges from the order and size of their requests instead of being assumed, but nothing else of a
// DRAM does: no banks, rows or caches (mem/dram_memory_system.h has those).
//
// Every request's completion is known on arrival: the forward path answers TLM_COMPLETED with the
// delay until the request completes (writes are posted: done when the channel has taken the data;
// reads when their data is back, the access latency later), and b_transport adds the same to the
// caller's delay. The channel is first come first served, so requests must reach it in the order
// they arrive in simulated time; MemoryTarget checks that on every request.

#include <cstdint>

#include <systemc>
#include <tlm>

#include "core/bandwidth_channel.h"
#include "core/gpu_config.h"
#include "mem/memory_target.h"

namespace gpumux {

class MemoryController final : public MemoryTarget {
 public:
  MemoryController(const sc_core::sc_module_name& name, const MemoryConfig& config);

  /// Serves `bytes` from `initiator` arriving at absolute time `arrival_ps`; returns the absolute
  /// time the transaction completes. The timing core of both transport paths. Throws
  /// InvariantViolation if `arrival_ps` is before the previous request's arrival.
  TimePs serve(std::uint32_t initiator, std::uint64_t bytes, TimePs arrival_ps, bool is_write);

  [[nodiscard]] const BandwidthChannel& channel() const { return channel_; }
  /// Arrival time of the latest request (0 before the first).
  [[nodiscard]] TimePs last_arrival_ps() const { return last_arrival_ps_; }
  [[nodiscard]] TimePs busy_ps() const override { return channel_.busy_ps(); }
  [[nodiscard]] nlohmann::json details(TimePs /*end_ps*/) const override { return nullptr; }

 private:
  tlm::tlm_sync_enum request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                             sc_core::sc_time& delay) override;
  void blocking_request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                        sc_core::sc_time& delay) override;

  BandwidthChannel channel_;
  TimePs last_arrival_ps_ = 0;
};

}  // namespace gpumux
