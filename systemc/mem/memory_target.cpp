#include "mem/memory_target.h"

#include <sstream>

#include "core/error.h"

namespace gpumux {

MemoryTarget::MemoryTarget(const sc_core::sc_module_name& name) : sc_core::sc_module(name), socket("socket") {
  socket.register_nb_transport_fw(this, &MemoryTarget::nb_transport_fw);
  socket.register_b_transport(this, &MemoryTarget::b_transport);
}

void MemoryTarget::admit(std::uint32_t initiator, std::uint64_t bytes, TimePs arrival_ps) {
  if (arrival_ps < last_arrival_ps_) {
    // First come first served is only fair if "first" is simulated time: a request made out of
    // order would be served after one that arrived later, or delay it. The model must not do that.
    std::ostringstream msg;
    const sc_core::sc_process_handle caller = sc_core::sc_get_current_process_handle();
    msg << "invariant violated at " << ns_from_ps(sc_core::sc_time_stamp().value()) << " ns in " << name()
        << ": a request from initiator " << initiator << " ("
        << (caller.valid() ? caller.name() : "no process") << ") arrives at " << ns_from_ps(arrival_ps)
        << " ns, before the previous request (number " << transactions_ << "), which arrived at "
        << ns_from_ps(last_arrival_ps_)
        << " ns; requests must reach the memory in arrival-time order (core/tlm_quantum.h)";
    throw InvariantViolation(msg.str());
  }
  last_arrival_ps_ = arrival_ps;
  ++transactions_;
  bytes_ += bytes;
  if (initiator >= bytes_by_initiator_.size()) bytes_by_initiator_.resize(initiator + 1, 0);
  bytes_by_initiator_[initiator] += bytes;
}

tlm::tlm_sync_enum MemoryTarget::nb_transport_fw(int initiator, tlm::tlm_generic_payload& payload,
                                                 tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_REQ) {
    // The model's initiators complete every response on the return path (memory_port.h).
    throw InvariantViolation(std::string(name()) + ": unexpected phase on the forward path from initiator " +
                             std::to_string(initiator));
  }
  return request(static_cast<std::uint32_t>(initiator), payload, delay);
}

void MemoryTarget::b_transport(int initiator, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  blocking_request(static_cast<std::uint32_t>(initiator), payload, delay);
}

void MemoryTarget::respond(std::uint32_t initiator, tlm::tlm_generic_payload& payload, TimePs done_ps) {
  const TimePs now = sc_core::sc_time_stamp().value();
  if (done_ps < now) {
    throw InvariantViolation(std::string(name()) + ": a response at " + std::to_string(ns_from_ps(done_ps)) +
                             " ns, in the past");
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
  tlm::tlm_phase phase = tlm::BEGIN_RESP;
  sc_core::sc_time delay = sc_core::sc_time::from_value(done_ps - now);
  const tlm::tlm_sync_enum status =
      socket[static_cast<int>(initiator)]->nb_transport_bw(payload, phase, delay);
  if (status != tlm::TLM_COMPLETED) {
    throw InvariantViolation(std::string(name()) + ": initiator " + std::to_string(initiator) +
                             " did not complete a response on the return path");
  }
}

}  // namespace gpumux
