#include "frontend/command_queues.h"

namespace gpumux {

CommandQueues::CommandQueues(const sc_core::sc_module_name& name, const FrontendConfig& config,
                             std::uint32_t processes)
    : sc_core::sc_module(name), socket("socket"), processes_(processes) {
  queues_.reserve(config.command_queues);
  for (std::uint32_t q = 0; q < config.command_queues; ++q) queues_.emplace_back(config.queue_depth);
  socket.register_b_transport(this, &CommandQueues::b_transport);
}

void CommandQueues::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  CommandExtension* ext = nullptr;
  payload.get_extension(ext);
  if (ext == nullptr || ext->command.queue >= queues_.size()) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const GpuCommand& command = ext->command;
  const bool runs_on_gpu = command.kind == CommandKind::kKernel ||
                           command.kind == CommandKind::kHostToDevice ||
                           command.kind == CommandKind::kDeviceToHost;
  if (index(command.process) >= processes_ || !runs_on_gpu ||
      (command.kind == CommandKind::kKernel && command.kernel == nullptr) ||
      (command.kind != CommandKind::kKernel && command.bytes == 0)) {
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  // The doorbell write lands after the link delay; synchronize so queue order is time order.
  sc_core::wait(delay);
  delay = sc_core::SC_ZERO_TIME;
  auto& queue = queues_[ext->command.queue];
  while (queue.full()) sc_core::wait(popped_);
  ext->command.queued_ps = sc_core::sc_time_stamp().value();
  queue.push_back(ext->command);
  ++accepted_;
  pushed_.notify(sc_core::SC_ZERO_TIME);
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

GpuCommand CommandQueues::pop(std::uint32_t queue) {
  GpuCommand command = queues_[queue].front();
  queues_[queue].pop_front();
  popped_.notify(sc_core::SC_ZERO_TIME);
  return command;
}

}  // namespace gpumux
