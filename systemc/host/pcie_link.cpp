#include "host/pcie_link.h"

namespace gpumux {

PcieLink::PcieLink(const sc_core::sc_module_name& name, const PcieConfig& config)
    : sc_core::sc_module(name),
      host_socket("host_socket"),
      dma_socket("dma_socket"),
      frontend_socket("frontend_socket"),
      downstream_(config.bytes_per_second(), ps_from_ns(config.latency_ns)),
      upstream_(config.bytes_per_second(), ps_from_ns(config.latency_ns)) {
  host_socket.register_b_transport(this, &PcieLink::host_transport);
  dma_socket.register_b_transport(this, &PcieLink::dma_transport);
}

void PcieLink::host_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const TimePs now = sc_core::sc_time_stamp().value();
  const auto slot = downstream_.reserve(payload.get_data_length(), now + delay.value());
  delay = sc_core::sc_time::from_value(slot.deliver_ps - now);
  frontend_socket->b_transport(payload, delay);
}

void PcieLink::dma_transport(int /*engine*/, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  // The command gives the direction of the data as GPU memory sees it: a write carries a burst from
  // the host to the device (downstream), a read from the device to the host (upstream). The returned
  // delay is the burst's delivery at the far end of the link.
  const TimePs now = sc_core::sc_time_stamp().value();
  BandwidthChannel& direction = payload.is_write() ? downstream_ : upstream_;
  const auto slot = direction.reserve(payload.get_data_length(), now + delay.value());
  delay = sc_core::sc_time::from_value(slot.deliver_ps - now);
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace gpumux
