#include "mem/memory_controller.h"

namespace gpumux {

MemoryController::MemoryController(const sc_core::sc_module_name& name, const MemoryConfig& config)
    : MemoryTarget(name), channel_(config.bandwidth_gb_per_s * 1e9, ps_from_ns(config.latency_ns)) {}

TimePs MemoryController::serve(std::uint32_t initiator, std::uint64_t bytes, TimePs arrival_ps,
                               bool is_write) {
  admit(initiator, bytes, arrival_ps);
  last_arrival_ps_ = arrival_ps;
  const BandwidthChannel::Slot slot = channel_.reserve(bytes, arrival_ps);
  const TimePs done_ps = is_write ? slot.end_ps : slot.deliver_ps;
  log({arrival_ps, done_ps, bytes, initiator, is_write});
  return done_ps;
}

tlm::tlm_sync_enum MemoryController::request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                                             sc_core::sc_time& delay) {
  blocking_request(initiator, payload, delay);
  return tlm::TLM_COMPLETED;
}

void MemoryController::blocking_request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                                        sc_core::sc_time& delay) {
  const TimePs now = sc_core::sc_time_stamp().value();
  const TimePs done = serve(initiator, payload.get_data_length(), now + delay.value(), payload.is_write());
  delay = sc_core::sc_time::from_value(done - now);
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace gpumux
