#pragma once
// The hardware command queues (NVIDIA Hyper-Q, Tanasic 2.2): the host's driver maps each stream to
// one queue; commands arrive as TLM-2.0 writes over the PCIe link. Each queue is a bounded FIFO;
// a write to a full queue blocks the host until the dispatcher makes room. A write that is not a
// command the GPU can run (no CommandExtension, a queue, process or kind out of range, a kernel command
// without a kernel: a user's host model, docs/cosim.md) gets an error response and changes nothing.

#include <cstdint>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <boost/circular_buffer.hpp>
#include <systemc>
#include <tlm>

#include "core/gpu_config.h"
#include "frontend/gpu_command.h"

namespace gpumux {

class CommandQueues final : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<CommandQueues> socket;

  /// `processes`: the GPU contexts commands may name (the workload's processes).
  CommandQueues(const sc_core::sc_module_name& name, const FrontendConfig& config, std::uint32_t processes);

  /// Commands accepted so far (every write answered TLM_OK_RESPONSE).
  [[nodiscard]] std::uint64_t accepted() const { return accepted_; }
  [[nodiscard]] std::uint32_t count() const { return static_cast<std::uint32_t>(queues_.size()); }
  [[nodiscard]] bool empty(std::uint32_t queue) const { return queues_[queue].empty(); }
  [[nodiscard]] const GpuCommand& head(std::uint32_t queue) const { return queues_[queue].front(); }
  GpuCommand pop(std::uint32_t queue);
  /// Notified whenever a command is pushed.
  [[nodiscard]] const sc_core::sc_event& pushed_event() const { return pushed_; }
  /// Occupancy per queue, as ints the VCD samples.

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  std::uint32_t processes_;
  std::uint64_t accepted_ = 0;
  std::vector<boost::circular_buffer<GpuCommand>> queues_;
  sc_core::sc_event pushed_;
  sc_core::sc_event popped_;
};

}  // namespace gpumux
