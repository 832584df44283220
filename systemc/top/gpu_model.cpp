#include "top/gpu_model.h"

#include <sstream>
#include <utility>

#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"
#include "config/workload_loader.h"
#include "core/error.h"
#include "core/processes.h"
#include "mem/external_memory.h"
#include "top/gpu_system.h"

namespace gpumux {

SimulationSpec GpuModel::load(const std::string& gpu_file, const std::string& workload_file) {
  SimulationSpec spec;
  spec.gpu = load_gpu_config(gpu_file);
  spec.workload = load_workload(workload_file, spec.gpu);
  return spec;
}

GpuModel::GpuModel(const sc_core::sc_module_name& name, SimulationSpec spec, GpuModelOptions options)
    : sc_core::sc_module(name),
      spec_(std::move(spec)),
      doorbell_data_(spec_.gpu.pcie.command_bytes, 0),
      external_memory_(options.external_memory) {
  for (const std::string& library : spec_.workload.kernel_libraries) {
    for (auto& kernel : load_kernel_library(library, spec_.gpu)) kernels_.push_back(std::move(kernel));
  }
  system_ = std::make_unique<GpuSystem>(
      "gpu", spec_, [] {}, GpuSystemOptions{options.built_in_host, options.external_memory});
}

GpuModel::~GpuModel() = default;

tlm::tlm_target_socket<>& GpuModel::command_socket() { return system_->pcie().host_socket; }

tlm::tlm_initiator_socket<>& GpuModel::memory_socket() {
  if (!external_memory_) {
    throw InvariantViolation(std::string(name()) +
                             ": memory_socket exists only with GpuModelOptions::external_memory = true");
  }
  return static_cast<ExternalMemory&>(system_->memory()).memory_socket;
}

void GpuModel::set_completion_listener(CommandCompletionListener* listener) {
  system_->set_completion_listener(listener);
}

const KernelDesc& GpuModel::kernel(const std::string& name) const {
  for (const auto& k : kernels_) {
    if (k->name == name) return *k;
  }
  std::string libraries;
  for (const std::string& library : spec_.workload.kernel_libraries) {
    libraries += (libraries.empty() ? "" : ", ") + library;
  }
  throw InputError("no kernel '" + name + "' in the workload's kernel libraries (" + libraries + ")");
}

void GpuModel::prepare_doorbell(tlm::tlm_generic_payload& payload, const GpuCommand& command) {
  auto* extension = new CommandExtension();
  extension->command = command;
  payload.set_command(tlm::TLM_WRITE_COMMAND);
  payload.set_address(static_cast<std::uint64_t>(command.queue) * 0x100U);  // as Host::submit
  payload.set_data_ptr(doorbell_data_.data());
  payload.set_data_length(static_cast<unsigned>(doorbell_data_.size()));
  payload.set_streaming_width(static_cast<unsigned>(doorbell_data_.size()));
  payload.set_byte_enable_ptr(nullptr);
  payload.set_dmi_allowed(false);
  payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  payload.set_extension(extension);
}

RunResult GpuModel::finish() {
  if (process_failure()) std::rethrow_exception(process_failure());
  const std::uint64_t accepted = system_->commands_accepted();
  const std::uint64_t completed = system_->dispatcher().commands_completed();
  if (completed != accepted) {
    std::ostringstream msg;
    msg << name() << ": the simulation stopped at " << ns_from_ps(sc_core::sc_time_stamp().value())
        << " ns with " << (accepted - completed) << " of the " << accepted
        << " commands the GPU accepted not completed";
    throw InvariantViolation(msg.str());
  }
  if (system_->has_built_in_host() && !system_->host().all_finished()) {
    std::ostringstream msg;
    msg << name() << ": the simulation stopped at " << ns_from_ps(sc_core::sc_time_stamp().value())
        << " ns but the workload has not finished";
    for (const auto& line : system_->host().unfinished()) msg << "\n  " << line;
    throw InvariantViolation(msg.str());
  }
  system_->engine().driver().check_final_invariants();
  return system_->collect(spec_);
}

}  // namespace gpumux
