#pragma once
// A DMA (copy) engine: moves a copy command's bytes as TLM-2.0 bursts across the PCIe link into
// (or out of) GPU memory through the memory controller. It streams: bursts are issued at the
// link's pace with several in flight (loosely timed, local time offset), synchronizing with the
// kernel every quantum so other initiators interleave; the copy completes when its last burst is
// delivered.

#include <cstdint>
#include <deque>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "core/gpu_config.h"
#include "frontend/gpu_command.h"

namespace gpumux {

class DmaEngine final : public sc_core::sc_module, public CommandEngine {
 public:
  tlm_utils::simple_initiator_socket<DmaEngine> socket;

  DmaEngine(const sc_core::sc_module_name& name, const PcieConfig& pcie, CommandCompletionListener& listener);

  void accept(const GpuCommand& command) override;
  [[nodiscard]] std::uint64_t bytes_copied() const { return bytes_copied_; }
  /// Copies queued or in progress, as an int the VCD samples.
  [[nodiscard]] const int& traced_pending() const { return traced_pending_; }

 private:
  void run();
  void copy(const GpuCommand& command);

  std::uint32_t burst_bytes_;
  TimePs burst_pace_ps_;
  TimePs quantum_ps_;
  CommandCompletionListener& listener_;
  std::deque<GpuCommand> pending_;
  sc_core::sc_event work_;
  std::uint64_t bytes_copied_ = 0;
  int traced_pending_ = 0;
};

}  // namespace gpumux
