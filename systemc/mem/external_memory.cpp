#include "mem/external_memory.h"

#include <sstream>

#include "core/error.h"

namespace gpumux {

ExternalMemory::ExternalMemory(const sc_core::sc_module_name& name)
    : MemoryTarget(name), memory_socket("memory_socket") {
  memory_socket.register_nb_transport_bw(this, &ExternalMemory::nb_transport_bw);
}

nlohmann::json ExternalMemory::details(TimePs /*end_ps*/) const {
  return {{"model", "external"}, {"outstanding", outstanding_.size()}};
}

void ExternalMemory::check_response(const tlm::tlm_generic_payload& payload) const {
  if (payload.is_response_ok()) return;
  std::ostringstream msg;
  msg << name() << ": the memory target bound to memory_socket answered "
      << (payload.is_write() ? "a write" : "a read") << " of " << payload.get_data_length()
      << " bytes at address 0x" << std::hex << payload.get_address() << std::dec << " with "
      << payload.get_response_string() << "; the GPU cannot retry a memory request";
  throw InvariantViolation(msg.str());
}

tlm::tlm_sync_enum ExternalMemory::request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                                           sc_core::sc_time& delay) {
  const TimePs now = sc_core::sc_time_stamp().value();
  const TimePs arrival = now + delay.value();
  admit(initiator, payload.get_data_length(), arrival);
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  const tlm::tlm_sync_enum status = memory_socket->nb_transport_fw(payload, phase, delay);
  if (status == tlm::TLM_COMPLETED || (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP)) {
    check_response(payload);
    if (status == tlm::TLM_UPDATED) {
      // The base protocol: the initiator ends a response the target began on the return path.
      tlm::tlm_phase end = tlm::END_RESP;
      sc_core::sc_time no_delay = sc_core::SC_ZERO_TIME;
      memory_socket->nb_transport_fw(payload, end, no_delay);
    }
    log({arrival, now + delay.value(), payload.get_data_length(), initiator, payload.is_write()});
    return tlm::TLM_COMPLETED;
  }
  // Accepted (TLM_ACCEPTED, or TLM_UPDATED with END_REQ): BEGIN_RESP follows on the backward path.
  outstanding_[&payload] = {initiator, arrival};
  return tlm::TLM_ACCEPTED;
}

tlm::tlm_sync_enum ExternalMemory::nb_transport_bw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                                   sc_core::sc_time& delay) {
  if (phase == tlm::END_REQ) return tlm::TLM_ACCEPTED;
  if (phase != tlm::BEGIN_RESP) {
    throw InvariantViolation(std::string(name()) + ": unexpected phase " + phase.get_name() +
                             " on the backward path from the memory target");
  }
  const auto found = outstanding_.find(&payload);
  if (found == outstanding_.end()) {
    throw InvariantViolation(std::string(name()) +
                             ": the memory target sent BEGIN_RESP for a request that is not outstanding");
  }
  const Outstanding request = found->second;
  outstanding_.erase(found);
  check_response(payload);
  const TimePs done = sc_core::sc_time_stamp().value() + delay.value();
  log({request.arrival_ps, done, payload.get_data_length(), request.initiator, payload.is_write()});
  respond(request.initiator, payload, done);
  return tlm::TLM_COMPLETED;
}

void ExternalMemory::blocking_request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                                      sc_core::sc_time& delay) {
  const TimePs now = sc_core::sc_time_stamp().value();
  const TimePs arrival = now + delay.value();
  admit(initiator, payload.get_data_length(), arrival);
  memory_socket->b_transport(payload, delay);
  check_response(payload);
  log({arrival, sc_core::sc_time_stamp().value() + delay.value(), payload.get_data_length(), initiator,
       payload.is_write()});
}

}  // namespace gpumux
