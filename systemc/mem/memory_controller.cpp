#include "mem/memory_controller.h"

#include <sstream>

#include "core/error.h"

namespace gpumux {

MemoryController::MemoryController(const sc_core::sc_module_name& name, const MemoryConfig& config)
    : sc_core::sc_module(name),
      socket("socket"),
      channel_(config.bandwidth_gb_per_s * 1e9, ps_from_ns(config.latency_ns)) {
  socket.register_b_transport(this, &MemoryController::b_transport);
}

TimePs MemoryController::serve(std::uint32_t initiator, std::uint64_t bytes, TimePs arrival_ps,
                               bool is_write) {
  if (arrival_ps < last_arrival_ps_) {
    // First come first served is only fair if "first" is simulated time: a request made out of
    // order would be served after one that arrived later, or delay it. The model must not do that.
    std::ostringstream msg;
    const sc_core::sc_process_handle caller = sc_core::sc_get_current_process_handle();
    msg << "invariant violated at " << ns_from_ps(sc_core::sc_time_stamp().value())
        << " ns in the memory controller: a request from initiator " << initiator << " ("
        << (caller.valid() ? caller.name() : "no process") << ") arrives at " << ns_from_ps(arrival_ps)
        << " ns, before the previous request (number " << transactions_ << "), which arrived at "
        << ns_from_ps(last_arrival_ps_)
        << " ns; requests must reach the controller in arrival-time order (core/tlm_quantum.h)";
    throw InvariantViolation(msg.str());
  }
  last_arrival_ps_ = arrival_ps;
  const BandwidthChannel::Slot slot = channel_.reserve(bytes, arrival_ps);
  ++transactions_;
  if (initiator >= bytes_by_initiator_.size()) bytes_by_initiator_.resize(initiator + 1, 0);
  bytes_by_initiator_[initiator] += bytes;
  const TimePs done_ps = is_write ? slot.end_ps : slot.deliver_ps;
  if (log_ != nullptr) log_->push_back({arrival_ps, done_ps, bytes, initiator, is_write});
  return done_ps;
}

void MemoryController::b_transport(int initiator, tlm::tlm_generic_payload& payload,
                                   sc_core::sc_time& delay) {
  const TimePs now = sc_core::sc_time_stamp().value();
  const TimePs done = serve(static_cast<std::uint32_t>(initiator), payload.get_data_length(),
                            now + delay.value(), payload.is_write());
  delay = sc_core::sc_time::from_value(done - now);
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace gpumux
