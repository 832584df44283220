#pragma once
// A GPU command as it travels from the host through the PCIe link, a hardware command queue and
// the command dispatcher to an engine, and back as a completion.

#include <cstdint>
#include <functional>

#include <tlm>

#include "core/kernel_desc.h"
#include "core/types.h"
#include "core/workload.h"

namespace gpumux {

struct GpuCommand {
  std::uint64_t id = 0;  ///< unique within a run, in submission order
  CommandKind kind = CommandKind::kKernel;
  ProcessId process{};
  std::uint32_t stream = 0;  ///< global stream index (all processes)
  std::uint32_t queue = 0;   ///< hardware queue the driver mapped the stream to
  std::uint64_t bytes = 0;   ///< copies
  const KernelDesc* kernel = nullptr;
  TimePs queued_ps = 0;  ///< entered the hardware queue
  TimePs issued_ps = 0;  ///< dispatcher issued it to its engine
};

/// Carries a GpuCommand in the generic payload of the host's doorbell write.
struct CommandExtension final : tlm::tlm_extension<CommandExtension> {
  GpuCommand command;
  [[nodiscard]] tlm::tlm_extension_base* clone() const override { return new CommandExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    command = static_cast<const CommandExtension&>(other).command;
  }
};

/// An engine (DMA or execution) that the dispatcher issues commands to.
class CommandEngine {
 public:
  virtual ~CommandEngine() = default;
  /// False while the engine cannot take `command` now (the execution engine: its context's command
  /// buffer is full); the dispatcher then leaves it at the head of its queue.
  [[nodiscard]] virtual bool can_accept(const GpuCommand& /*command*/) const { return true; }
  /// Called when an engine that refused a command may take it now (the dispatcher rescans).
  virtual void set_room_listener(const std::function<void()>& /*listener*/) {}
  virtual void accept(const GpuCommand& command) = 0;
};

/// Told when an engine completes a command.
class CommandCompletionListener {
 public:
  virtual ~CommandCompletionListener() = default;
  virtual void command_done(const GpuCommand& command) = 0;
};

}  // namespace gpumux
