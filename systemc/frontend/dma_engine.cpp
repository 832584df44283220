#include "frontend/dma_engine.h"

#include "core/processes.h"

#include <algorithm>
#include <vector>

namespace gpumux {

DmaEngine::DmaEngine(const sc_core::sc_module_name& name, const PcieConfig& pcie,
                     CommandCompletionListener& listener)
    : sc_core::sc_module(name),
      socket("socket"),
      burst_bytes_(pcie.burst_bytes),
      burst_pace_ps_(
          static_cast<TimePs>(static_cast<double>(pcie.burst_bytes) / pcie.bytes_per_second() * 1e12)),
      quantum_ps_(1'000'000),  // 1 us: bounds how far one copy runs ahead of other initiators
      listener_(listener) {
  spawn_thread("run", [this] { run(); });
}

void DmaEngine::accept(const GpuCommand& command) {
  pending_.push_back(command);
  traced_pending_ = static_cast<int>(pending_.size());
  work_.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngine::run() {
  while (true) {
    while (pending_.empty()) sc_core::wait(work_);
    const GpuCommand command = pending_.front();
    copy(command);
    pending_.pop_front();
    traced_pending_ = static_cast<int>(pending_.size());
    listener_.command_done(command);
  }
}

void DmaEngine::copy(const GpuCommand& command) {
  std::vector<unsigned char> burst(burst_bytes_);
  tlm::tlm_generic_payload payload;
  payload.set_command(command.kind == CommandKind::kHostToDevice ? tlm::TLM_WRITE_COMMAND
                                                                 : tlm::TLM_READ_COMMAND);
  payload.set_data_ptr(burst.data());
  payload.set_streaming_width(burst_bytes_);
  payload.set_byte_enable_ptr(nullptr);
  payload.set_dmi_allowed(false);

  TimePs offset = 0;     // local time ahead of the SystemC kernel
  TimePs last_done = 0;  // latest delivery, relative to the last synchronization
  std::uint64_t left = command.bytes;
  std::uint64_t address = 0;
  while (left > 0) {
    const auto size = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, burst_bytes_));
    payload.set_address(address);
    payload.set_data_length(size);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::sc_time::from_value(offset);
    socket->b_transport(payload, delay);
    last_done = std::max<TimePs>(last_done, delay.value());
    address += size;
    left -= size;
    offset += burst_pace_ps_ * size / burst_bytes_;
    if (offset >= quantum_ps_ && left > 0) {
      // Synchronize: let other initiators reserve the shared channels in time order.
      sc_core::wait(sc_core::sc_time::from_value(offset));
      last_done = last_done > offset ? last_done - offset : 0;
      offset = 0;
    }
  }
  sc_core::wait(sc_core::sc_time::from_value(last_done));
  bytes_copied_ += command.bytes;
}

}  // namespace gpumux
