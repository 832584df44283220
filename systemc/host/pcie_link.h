#pragma once
// The PCIe link between host and GPU (Tanasic Table 2: 500 MHz, 32 lanes, 4 KB bursts). Two
// directions, each a BandwidthChannel. The host's command writes and host-to-device copies share
// the downstream direction; device-to-host copies use the upstream one. The host's writes go on to
// the command queues; a DMA engine's burst ends at the GPU side of the link (host to device) or at
// the host (device to host): the engine itself moves it to or from the memory controller.

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "core/bandwidth_channel.h"
#include "core/gpu_config.h"

namespace gpumux {

class PcieLink final : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<PcieLink> host_socket;            ///< command doorbell writes from the host
  tlm_utils::multi_passthrough_target_socket<PcieLink> dma_socket;  ///< copy bursts from the DMA engines
  tlm_utils::simple_initiator_socket<PcieLink> frontend_socket;     ///< to the command queues

  PcieLink(const sc_core::sc_module_name& name, const PcieConfig& config);

  /// Time one burst of `bytes` occupies a direction of the link.
  [[nodiscard]] TimePs burst_time_ps(std::uint64_t bytes) const { return downstream_.service_ps(bytes); }
  [[nodiscard]] const BandwidthChannel& downstream() const { return downstream_; }
  [[nodiscard]] const BandwidthChannel& upstream() const { return upstream_; }

 private:
  void host_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  void dma_transport(int engine, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  BandwidthChannel downstream_;
  BandwidthChannel upstream_;
};

}  // namespace gpumux
