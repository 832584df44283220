#include "frontend/dma_engine.h"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/processes.h"
#include "core/tlm_quantum.h"

namespace gpumux {

DmaEngine::DmaEngine(const sc_core::sc_module_name& name, const PcieConfig& pcie, CopyPolicy policy,
                     std::vector<int> process_priority, CommandCompletionListener& listener)
    : sc_core::sc_module(name),
      link_socket("link_socket"),
      memory_socket("memory_socket"),
      burst_bytes_(pcie.burst_bytes),
      burst_pace_ps_(
          static_cast<TimePs>(static_cast<double>(pcie.burst_bytes) / pcie.bytes_per_second() * 1e12)),
      listener_(listener),
      queue_(policy, std::move(process_priority)) {
  payload_.set_byte_enable_ptr(nullptr);
  payload_.set_dmi_allowed(false);
  spawn_thread("run", [this] { run(); });
}

void DmaEngine::accept(const GpuCommand& command) {
  queue_.push(command);
  work_.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngine::run() {
  while (true) {
    while (queue_.empty()) sc_core::wait(work_);
    // The engine is free: the copy policy picks among the copies waiting now; the copy then runs to
    // its end, whatever arrives meanwhile (non-preemptive).
    const GpuCommand command = queue_.pop_next();
    copying_ = true;
    copy(command);
    copying_ = false;
    listener_.command_done(command);
  }
}

TimePs DmaEngine::transport(tlm_utils::simple_initiator_socket<DmaEngine>& socket, TimePs at_ps) {
  advance_to(quantum_keeper_, at_ps);
  sc_core::sc_time delay = quantum_keeper_.get_local_time();
  payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  socket->b_transport(payload_, delay);
  if (payload_.is_response_error()) {
    throw InvariantViolation(std::string(name()) +
                             ": a copy burst failed: " + payload_.get_response_string());
  }
  return sc_core::sc_time_stamp().value() + delay.value();
}

void DmaEngine::copy(const GpuCommand& command) {
  // The command is the direction as GPU memory sees it, on both stages: a write into memory for a
  // host-to-device copy (downstream on the link), a read from memory for a device-to-host one.
  const bool to_device = command.kind == CommandKind::kHostToDevice;
  auto& source = to_device ? link_socket : memory_socket;
  auto& destination = to_device ? memory_socket : link_socket;
  std::vector<unsigned char> burst(burst_bytes_);
  payload_.set_command(to_device ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  payload_.set_data_ptr(burst.data());

  struct InFlight {
    std::uint64_t address;
    std::uint32_t size;
    TimePs arrival_ps;  ///< at the destination
  };
  std::deque<InFlight> in_flight;  // arrival order: each stage serves this engine's bursts in order
  quantum_keeper_.reset();
  TimePs next_issue = sc_core::sc_time_stamp().value();
  TimePs done = next_issue;
  std::uint64_t left = command.bytes;
  std::uint64_t address = 0;
  while (left > 0 || !in_flight.empty()) {
    // Whichever stage acts first goes first, so every transaction is sent at its own time.
    if (!in_flight.empty() && (left == 0 || in_flight.front().arrival_ps <= next_issue)) {
      const InFlight b = in_flight.front();
      in_flight.pop_front();
      payload_.set_address(b.address);
      payload_.set_data_length(b.size);
      payload_.set_streaming_width(b.size);
      done = std::max(done, transport(destination, b.arrival_ps));
    } else {
      const auto size = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, burst_bytes_));
      payload_.set_address(address);
      payload_.set_data_length(size);
      payload_.set_streaming_width(size);
      in_flight.push_back({address, size, transport(source, next_issue)});
      address += size;
      left -= size;
      next_issue += burst_pace_ps_ * size / burst_bytes_;
    }
  }
  // The copy completes when its last burst is delivered (done is never before the last transaction).
  quantum_keeper_.set(sc_core::sc_time::from_value(done - sc_core::sc_time_stamp().value()));
  quantum_keeper_.sync();
  bytes_copied_ += command.bytes;
}

}  // namespace gpumux
