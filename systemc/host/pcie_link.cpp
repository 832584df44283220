#include "host/pcie_link.h"

namespace gpumux {

PcieLink::PcieLink(const sc_core::sc_module_name& name, const PcieConfig& config)
    : sc_core::sc_module(name),
      host_socket("host_socket"),
      dma_socket("dma_socket"),
      frontend_socket("frontend_socket"),
      memory_socket("memory_socket"),
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
  const TimePs now = sc_core::sc_time_stamp().value();
  const std::uint64_t bytes = payload.get_data_length();
  if (payload.is_write()) {
    // Host to device: across the link, then written to GPU memory.
    const auto slot = downstream_.reserve(bytes, now + delay.value());
    delay = sc_core::sc_time::from_value(slot.deliver_ps - now);
    memory_socket->b_transport(payload, delay);
  } else {
    // Device to host: read from GPU memory, then across the link.
    memory_socket->b_transport(payload, delay);
    const auto slot = upstream_.reserve(bytes, now + delay.value());
    delay = sc_core::sc_time::from_value(slot.deliver_ps - now);
  }
}

}  // namespace gpumux
