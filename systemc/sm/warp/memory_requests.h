#pragma once
// Global-memory traffic of a warp-level SM: one TLM-2.0 generic-payload b_transport per warp memory
// instruction to the memory controller, carrying the bytes the instruction moves.
//
// Bytes moved (Awatramani 2.2.3: the memory system serves a warp's accesses in segments):
//   - coalesced: the warp's `bytes` rounded up to whole `memory_segment_bytes` segments (a warp
//     reading 32 x 4 B = 128 B moves one 128-byte segment; 130 B move two);
//   - scattered: one segment per thread, warp_size segments, whatever `bytes` says (each thread's
//     access lands in a segment of its own).
//
// Timing: the request is sent at the simulated time the instruction issues, with zero annotated
// delay, from the SM's activation (which runs at that time), so the memory controller sees the
// SM's requests in time order with every other initiator's (core/tlm_quantum.h). The controller
// never waits; the delay it returns gives the completion time: for a load, when the data is back;
// for a store, when the channel has taken the data (stores are posted).

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "core/error.h"
#include "core/types.h"
#include "program/program.h"

namespace gpumux {

/// Bytes a warp memory instruction moves through the memory controller (see above).
[[nodiscard]] inline std::uint64_t transaction_bytes(const program::Instruction& instruction,
                                                     std::uint32_t warp_size, std::uint32_t segment_bytes) {
  if (instruction.access == program::Access::kScattered) {
    return static_cast<std::uint64_t>(warp_size) * segment_bytes;
  }
  const std::uint64_t segments =
      (static_cast<std::uint64_t>(instruction.bytes) + segment_bytes - 1) / segment_bytes;
  return std::max<std::uint64_t>(segments, 1) * segment_bytes;
}

/// Sends warp memory requests through an SM's initiator socket, reusing one payload and one data
/// buffer (grown only when a larger request comes): no allocation per request.
class WarpMemoryPort {
 public:
  WarpMemoryPort(tlm::tlm_initiator_socket<>& socket, std::uint64_t address, std::size_t initial_bytes)
      : socket_(socket), buffer_(initial_bytes, 0) {
    payload_.set_address(address);
    payload_.set_byte_enable_ptr(nullptr);
    payload_.set_data_ptr(buffer_.data());
  }

  /// Sends `bytes` now (a store when `is_write`); returns the absolute time the request completes.
  TimePs send(bool is_write, std::uint64_t bytes) {
    if (bytes > buffer_.size()) {
      buffer_.resize(bytes, 0);
      payload_.set_data_ptr(buffer_.data());
    }
    const auto length = static_cast<unsigned int>(bytes);
    payload_.set_command(is_write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    payload_.set_data_length(length);
    payload_.set_streaming_width(length);
    payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket_->b_transport(payload_, delay);
    if (payload_.is_response_error()) {
      throw InvariantViolation("a warp memory request failed: " + payload_.get_response_string());
    }
    ++requests_;
    return sc_core::sc_time_stamp().value() + delay.value();
  }

  [[nodiscard]] std::uint64_t requests() const { return requests_; }

 private:
  tlm::tlm_initiator_socket<>& socket_;
  tlm::tlm_generic_payload payload_;
  std::vector<unsigned char> buffer_;
  std::uint64_t requests_ = 0;
};

}  // namespace gpumux
