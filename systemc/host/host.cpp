#include "host/host.h"

#include <algorithm>

#include "core/processes.h"

namespace gpumux {

Host::Host(const sc_core::sc_module_name& name, const Workload& workload, const GpuConfig& gpu)
    : sc_core::sc_module(name),
      socket("socket"),
      workload_(workload),
      queue_count_(gpu.frontend.command_queues),
      command_bytes_(gpu.pcie.command_bytes),
      doorbell_(gpu.pcie.command_bytes, 0) {
  std::uint32_t global = 0;
  std::size_t total_streams = 0;
  for (const auto& p : workload.processes) total_streams += p.streams.size();
  streams_ = std::vector<StreamState>(total_streams);
  joins_ = std::vector<JoinPoint>(workload.processes.size());
  for (std::uint32_t p = 0; p < workload.processes.size(); ++p) {
    results_.push_back({workload.processes[p].name, {}});
    streams_of_process_.emplace_back();
    for (std::size_t s = 0; s < workload.processes[p].streams.size(); ++s) {
      streams_[global].process = ProcessId{p};
      streams_of_process_.back().push_back(global++);
    }
  }
  for (std::uint32_t p = 0; p < workload.processes.size(); ++p) {
    spawn_thread(("process_" + std::to_string(p)).c_str(), [this, p] { process_main(p); });
  }
}

void Host::set_equal_time_order(EqualTimeOrder& order, std::uint64_t first_rank) {
  const auto count = static_cast<std::uint32_t>(streams_.size());
  for (std::uint32_t s = 0; s < count; ++s) streams_[s].turn.attach(order, first_rank + (count - 1 - s));
}

bool Host::should_replay(std::uint32_t process) const {
  if (workload_.replay == ReplayMode::kFixed) {
    return results_[process].runs.size() < workload_.processes[process].repeat;
  }
  // Tanasic 4.1: replay every application until all have completed at least `repeat` times.
  if (results_[process].runs.size() >=
      std::max(workload_.replay_limit, workload_.processes[process].repeat)) {
    return false;
  }
  for (std::size_t p = 0; p < results_.size(); ++p) {
    if (results_[p].runs.size() < workload_.processes[p].repeat) return true;
  }
  return false;
}

void Host::process_main(std::uint32_t process) {
  const ProcessSpec& spec = workload_.processes[process];
  sc_core::wait(sc_core::sc_time::from_value(spec.arrival_ps));
  do {
    const TimePs start = sc_core::sc_time_stamp().value();
    std::vector<sc_core::sc_process_handle> running;
    const auto& mine = streams_of_process_[process];
    for (std::size_t s = 0; s < mine.size(); ++s) {
      const std::uint32_t stream = mine[s];
      running.push_back(
          spawn_thread(nullptr, [this, stream, &spec, s] { stream_run(stream, spec.streams[s]); }));
    }
    for (auto& handle : running) {
      if (!handle.terminated()) sc_core::wait(handle.terminated_event());
    }
    const TimePs end = sc_core::sc_time_stamp().value();
    results_[process].runs.push_back({start, end});
    last_finish_ps_ = std::max(last_finish_ps_, end);
  } while (should_replay(process));
  ++finished_processes_;
}

void Host::stream_run(std::uint32_t stream, const StreamSpec& spec) {
  StreamState& state = streams_[stream];
  state.running = true;
  const bool asynchronous = workload_.kernel_launch == KernelLaunchMode::kAsynchronous;
  for (const CommandSpec& command : spec.commands) {
    if (command.kind == CommandKind::kCpu) {
      state.waiting_on = "cpu phase";
      sc_core::wait(sc_core::sc_time::from_value(command.cpu_ps));
      continue;
    }
    if (command.kind == CommandKind::kSync) {
      state.waiting_on = "sync";
      while (state.outstanding > 0) sc_core::wait(state.done);
      continue;
    }
    if (command.kind == CommandKind::kJoin) {
      join(stream);
      continue;
    }
    const std::uint32_t launches = command.kind == CommandKind::kKernel ? command.launches : 1;
    state.waiting_on =
        std::string(to_string(command.kind)) +
        (command.kernel ? " '" + command.kernel->name + "'" : " of " + std::to_string(command.bytes) + " B");
    for (std::uint32_t i = 0; i < launches; ++i) {
      submit(stream, command.kind, command.bytes, command.kernel.get());
    }
    // Asynchronous kernel launches return once queued; everything else waits for the stream's
    // commands so far (a copy runs after the stream's earlier kernels in its in-order queue).
    if (asynchronous && command.kind == CommandKind::kKernel) continue;
    while (state.outstanding > 0) sc_core::wait(state.done);
  }
  state.waiting_on = "its last commands";
  while (state.outstanding > 0) sc_core::wait(state.done);
  state.running = false;
}

void Host::join(std::uint32_t stream) {
  StreamState& state = streams_[stream];
  state.waiting_on = "join";
  while (state.outstanding > 0) sc_core::wait(state.done);
  JoinPoint& point = joins_[index(state.process)];
  const std::uint64_t generation = point.generation;
  if (++point.arrived == streams_of_process_[index(state.process)].size()) {
    point.arrived = 0;
    ++point.generation;
    point.all_arrived.notify(sc_core::SC_ZERO_TIME);
  }
  while (point.generation == generation) sc_core::wait(point.all_arrived);
}

void Host::submit(std::uint32_t stream, CommandKind kind, std::uint64_t bytes, const KernelDesc* kernel) {
  streams_[stream].turn.take();
  auto* extension = new CommandExtension();
  GpuCommand& command = extension->command;
  command.id = next_command_id_++;
  command.kind = kind;
  command.process = streams_[stream].process;
  command.stream = stream;
  command.queue = stream % queue_count_;  // the driver maps streams onto hardware queues round robin
  command.bytes = bytes;
  command.kernel = kernel;

  tlm::tlm_generic_payload payload;
  payload.set_command(tlm::TLM_WRITE_COMMAND);
  payload.set_address(static_cast<std::uint64_t>(command.queue) * 0x100U);
  payload.set_data_ptr(doorbell_.data());
  payload.set_data_length(command_bytes_);
  payload.set_streaming_width(command_bytes_);
  payload.set_extension(extension);  // the payload owns and deletes it
  ++streams_[stream].outstanding;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(payload, delay);
  if (payload.is_response_error()) {
    SC_REPORT_FATAL("gpumux/host",
                    ("command queue rejected a command: " + payload.get_response_string()).c_str());
  }
  sc_core::wait(delay);
}

void Host::command_done(const GpuCommand& command) {
  StreamState& state = streams_[command.stream];
  if (--state.outstanding == 0) state.done.notify(sc_core::SC_ZERO_TIME);
}

std::vector<std::string> Host::unfinished() const {
  std::vector<std::string> lines;
  for (std::uint32_t s = 0; s < streams_.size(); ++s) {
    const StreamState& state = streams_[s];
    if (state.running) {
      lines.push_back("process '" + workload_.processes[index(state.process)].name + "' stream " +
                      std::to_string(s) + " waits for " + state.waiting_on + " (" +
                      std::to_string(state.outstanding) + " command(s) outstanding)");
    }
  }
  return lines;
}

}  // namespace gpumux
