#pragma once
// The initiator side of the model's memory protocol, shared by every initiator of the memory system
// (warp loads and stores, DMA copies, context saves and restores): TLM-2.0 base protocol,
// non-blocking, with early completion.
//
// A request is sent with nb_transport_fw(BEGIN_REQ) at the simulated time it is made (zero annotated
// delay, so the memory system sees requests in arrival-time order; it checks this). The target
// either
//   - completes it at once: returns TLM_COMPLETED with the delay until the request completes (the
//     `simple` model always does: its timing is known on arrival; the `dram` model does for cache
//     hits and posted stores), and send() returns the absolute completion time; or
//   - accepts it (TLM_ACCEPTED) and later, when its completion time is known (a DRAM scheduler
//     issued its last column command), calls nb_transport_bw(BEGIN_RESP) with the delay until it
//     completes; send() returned kPending and the client's memory_done(tag, done_ps) is called then,
//     from the memory system's process, at or before done_ps.
// "Completes": a read's data is back at the initiator; a write has been taken by the memory system.
//
// Payloads come from a pool owned by the port (the target keeps a pointer while a request is
// outstanding); each carries a RequestTag extension naming its client and tag. No allocation per
// request once the pool is warm. Data pointers point at one zeroed buffer as large as the largest
// request so far: the model moves no data, but a user's memory target may read it. A larger request
// gets a new buffer; the old ones stay alive for the requests still pointing at them.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "core/types.h"

namespace gpumux {

/// Sentinel returned by MemoryPort::send when the completion is reported later.
inline constexpr TimePs kPending = kNever - 1;

/// Who is told when an accepted request completes.
class MemoryClient {
 public:
  virtual ~MemoryClient() = default;
  /// The request sent with `tag` completes at absolute time `done_ps` (>= now).
  virtual void memory_done(std::uint64_t tag, TimePs done_ps) = 0;
};

/// No kernel: a copy or a context move.
inline constexpr std::uint32_t kNoKernelTag = ~std::uint32_t{0};

/// A request's client and tag, carried on the payload, and the kernel launch a warp access belongs
/// to (the memory system's per-kernel statistics).
struct RequestTag final : tlm::tlm_extension<RequestTag> {
  MemoryClient* client = nullptr;
  std::uint64_t tag = 0;
  std::uint32_t kernel = kNoKernelTag;
  [[nodiscard]] tlm::tlm_extension_base* clone() const override { return new RequestTag(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const RequestTag&>(other);
  }
};

class MemoryPort final : public tlm::tlm_mm_interface {
 public:
  using Socket = tlm_utils::simple_initiator_socket<MemoryPort>;

  /// `socket` must outlive the port; `owner` names the initiator in messages; `typical_bytes` sizes
  /// the first data buffer.
  MemoryPort(Socket& socket, std::string owner, std::uint32_t typical_bytes);
  ~MemoryPort() override;
  MemoryPort(const MemoryPort&) = delete;
  MemoryPort& operator=(const MemoryPort&) = delete;

  /// Sends `bytes` at `address` now (a write when `is_write`). Returns the absolute completion time,
  /// or kPending: `client.memory_done(tag, done_ps)` follows.
  TimePs send(bool is_write, std::uint64_t address, std::uint32_t bytes, MemoryClient& client,
              std::uint64_t tag, std::uint32_t kernel = kNoKernelTag) {
    return send_ahead(is_write, address, bytes, client, tag, kernel, 0);
  }
  /// As send(), arriving `ahead_ps` after now (annotated delay), for an initiator running ahead of
  /// SystemC's clock that knows no other request can arrive before it (sm/context_traffic.h). Only the
  /// `simple` memory model takes an annotated arrival (memory_target.h).
  TimePs send_ahead(bool is_write, std::uint64_t address, std::uint32_t bytes, MemoryClient& client,
                    std::uint64_t tag, std::uint32_t kernel, TimePs ahead_ps);

  [[nodiscard]] std::uint64_t requests() const { return requests_; }
  /// Requests accepted and not yet completed.
  [[nodiscard]] std::uint64_t outstanding() const { return outstanding_; }

  // tlm_mm_interface: a payload whose reference count drops to zero goes back to the pool.
  void free(tlm::tlm_generic_payload* payload) override;

 private:
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  tlm::tlm_generic_payload* acquire();

  Socket& socket_;
  std::string owner_;
  std::vector<std::vector<unsigned char>> buffers_;  ///< the last is the largest, the one in use
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> payloads_;  ///< every payload made
  std::vector<tlm::tlm_generic_payload*> free_;
  std::uint64_t requests_ = 0;
  std::uint64_t outstanding_ = 0;
};

}  // namespace gpumux
