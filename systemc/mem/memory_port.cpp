#include "mem/memory_port.h"

#include <algorithm>
#include <utility>

#include "core/error.h"

namespace gpumux {

MemoryPort::MemoryPort(Socket& socket, std::string owner, std::uint32_t typical_bytes)
    : socket_(socket), owner_(std::move(owner)) {
  buffers_.emplace_back(std::max<std::uint32_t>(typical_bytes, 1), 0);
  socket_.register_nb_transport_bw(this, &MemoryPort::nb_transport_bw);
}

MemoryPort::~MemoryPort() {
  // The payloads own their RequestTag (set_extension, not auto): clear it before they go.
  for (auto& p : payloads_) p->clear_extension<RequestTag>();
}

tlm::tlm_generic_payload* MemoryPort::acquire() {
  if (free_.empty()) {
    auto p = std::make_unique<tlm::tlm_generic_payload>(this);
    p->set_extension(new RequestTag);
    p->set_byte_enable_ptr(nullptr);
    free_.push_back(p.get());
    payloads_.push_back(std::move(p));
  }
  tlm::tlm_generic_payload* p = free_.back();
  free_.pop_back();
  p->acquire();
  return p;
}

void MemoryPort::free(tlm::tlm_generic_payload* payload) { free_.push_back(payload); }

TimePs MemoryPort::send_ahead(bool is_write, std::uint64_t address, std::uint32_t bytes, MemoryClient& client,
                              std::uint64_t tag, std::uint32_t kernel, TimePs ahead_ps) {
  if (bytes == 0) throw InvariantViolation(owner_ + ": a memory request of 0 bytes");
  if (bytes > buffers_.back().size()) buffers_.emplace_back(bytes, 0);
  tlm::tlm_generic_payload* p = acquire();
  p->set_data_ptr(buffers_.back().data());
  p->set_command(is_write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  p->set_address(address);
  p->set_data_length(bytes);
  p->set_streaming_width(bytes);
  p->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  RequestTag* t = p->get_extension<RequestTag>();
  t->client = &client;
  t->tag = tag;
  t->kernel = kernel;
  tlm::tlm_phase phase = tlm::BEGIN_REQ;
  sc_core::sc_time delay = sc_core::sc_time::from_value(ahead_ps);
  ++requests_;
  const tlm::tlm_sync_enum status = socket_->nb_transport_fw(*p, phase, delay);
  if (status == tlm::TLM_COMPLETED) {
    if (p->is_response_error()) {
      throw InvariantViolation(owner_ + ": a memory request failed: " + p->get_response_string());
    }
    p->release();
    return sc_core::sc_time_stamp().value() + delay.value();
  }
  if (status != tlm::TLM_ACCEPTED || phase != tlm::BEGIN_REQ) {
    // The memory system answers BEGIN_REQ with TLM_COMPLETED or TLM_ACCEPTED only (memory_target.h).
    throw InvariantViolation(owner_ + ": the memory target answered a request with an unexpected phase");
  }
  ++outstanding_;
  return kPending;
}

tlm::tlm_sync_enum MemoryPort::nb_transport_bw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                               sc_core::sc_time& delay) {
  if (phase != tlm::BEGIN_RESP || outstanding_ == 0) {
    throw InvariantViolation(owner_ + ": the memory target sent a response phase the port does not expect");
  }
  if (payload.is_response_error()) {
    throw InvariantViolation(owner_ + ": a memory request failed: " + payload.get_response_string());
  }
  --outstanding_;
  const RequestTag* t = payload.get_extension<RequestTag>();
  MemoryClient* client = t->client;
  const std::uint64_t tag = t->tag;
  const TimePs done = sc_core::sc_time_stamp().value() + delay.value();
  payload.release();
  client->memory_done(tag, done);
  return tlm::TLM_COMPLETED;
}

}  // namespace gpumux
