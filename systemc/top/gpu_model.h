#pragma once
// gpumux as a component of a user's own SystemC platform (issue 13; docs/cosim.md). The user's sc_main
// builds a GpuModel from the GPU and workload configs, optionally binds
//   - command_socket: the PCIe link's host side, a TLM-2.0 target socket taking the host's doorbell
//     writes (one b_transport per command, made by prepare_doorbell), when the host is the user's own
//     model (GpuModelOptions::built_in_host = false); completions come back through a
//     CommandCompletionListener, as an interrupt would; and
//   - memory_socket: a TLM-2.0 initiator socket that carries every memory request of the GPU (warp loads
//     and stores, DMA copies, context saves and restores; mem/external_memory.h gives the protocol), when
//     the memory is the user's own (GpuModelOptions::external_memory = true);
// runs sc_start(), and calls finish() for the checked results (RunResult, as `gpumux run` reports them).
//
// SystemC elaborates once per process: one GpuModel per process, as in gpumux itself.

#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "core/kernel_desc.h"
#include "frontend/gpu_command.h"
#include "metrics/run_result.h"
#include "top/simulation.h"

namespace gpumux {

class GpuSystem;

struct GpuModelOptions {
  /// true: the built-in host runs the workload's streams (as `gpumux run`). false: the user's host model
  /// sends the commands through command_socket; the workload then only declares the processes (GPU
  /// contexts: names, priorities, DSS tokens) that commands name, and its streams are not run.
  bool built_in_host = true;
  /// true: the GPU's memory side leaves through memory_socket(), which the user must bind; false: the GPU
  /// config's own memory model (memory.model: simple or dram).
  bool external_memory = false;
};

class GpuModel final : public sc_core::sc_module {
 public:
  /// Loads what `gpumux run --gpu GPU_FILE --workload WORKLOAD_FILE` loads (the workload's kernel
  /// libraries with it); policy fcfs, seed 1. Throws InputError naming file, line and key.
  [[nodiscard]] static SimulationSpec load(const std::string& gpu_file, const std::string& workload_file);

  GpuModel(const sc_core::sc_module_name& name, SimulationSpec spec, GpuModelOptions options = {});
  ~GpuModel() override;
  GpuModel(const GpuModel&) = delete;
  GpuModel& operator=(const GpuModel&) = delete;

  /// The doorbell target (the PCIe link's host side). With the built-in host it is already bound.
  [[nodiscard]] tlm::tlm_target_socket<>& command_socket();
  /// The memory side. InvariantViolation unless built with external_memory.
  [[nodiscard]] tlm::tlm_initiator_socket<>& memory_socket();
  /// Told of every command the GPU completes (the user's host; with the built-in host it is told too).
  void set_completion_listener(CommandCompletionListener* listener);

  [[nodiscard]] const SimulationSpec& spec() const { return spec_; }
  /// The kernel `name` of the workload's kernel libraries (valid for the model's lifetime), for a
  /// command. InputError when no library has it.
  [[nodiscard]] const KernelDesc& kernel(const std::string& name) const;
  /// Makes `payload` the doorbell write of `command` as the built-in host sends it: a write to
  /// command.queue's doorbell address carrying a CommandExtension (the payload owns it and deletes it
  /// with itself), data the GPU's pcie.command_bytes. Send it with command_socket's b_transport from a
  /// thread and wait the returned delay; the response is TLM_COMMAND_ERROR_RESPONSE for a command the
  /// GPU cannot run (a process out of range, a kernel command without a kernel, a copy of 0 bytes, a
  /// host-only kind) and TLM_ADDRESS_ERROR_RESPONSE for a queue out of range. The call blocks while the
  /// queue is full. `command.id` must be unique within the run.
  void prepare_doorbell(tlm::tlm_generic_payload& payload, const GpuCommand& command);

  /// After sc_start() returned: checks that the run ended cleanly (no process failed; every command the
  /// GPU accepted completed, and the built-in host's workload finished; every thread block ran exactly
  /// once and every SM resource returned to zero) and returns its results. Throws InvariantViolation.
  [[nodiscard]] RunResult finish();

 private:
  SimulationSpec spec_;  ///< before system_: the system keeps references into it
  std::vector<std::shared_ptr<const KernelDesc>> kernels_;
  std::vector<unsigned char> doorbell_data_;
  std::unique_ptr<GpuSystem> system_;
  bool external_memory_;
};

}  // namespace gpumux
