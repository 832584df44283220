#pragma once
// The host: one thread per process (GPU context) running its streams, CPU phases and replays
// (Tanasic 2.1: bursts of CPU work, copies and kernel launches). GPU commands go to the GPU as
// TLM-2.0 doorbell writes over the PCIe link. A stream waits for each copy to complete before it moves
// on (cudaMemcpy); kernel launches are waited for too under `kernel_launch: synchronous` (a kernel
// command with several launches submits them back to back and waits for the last), and only queued
// under `asynchronous` (Tanasic 2.1), where a `sync` step or the stream's end waits for them. A `join`
// step holds every stream of its process until all of them have reached it with nothing outstanding.
//
// Streams that ring a doorbell at an instant where other processes are active take turns
// (core/equal_time_order.h): doorbells share the link first come first served, and SystemC's own order
// for processes woken at one instant is the implementation's.

#include <cstdint>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "core/equal_time_order.h"
#include "core/gpu_config.h"
#include "core/workload.h"
#include "frontend/gpu_command.h"
#include "metrics/run_result.h"

namespace gpumux {

class Host final : public sc_core::sc_module, public CommandCompletionListener {
 public:
  tlm_utils::simple_initiator_socket<Host> socket;

  Host(const sc_core::sc_module_name& name, const Workload& workload, const GpuConfig& gpu);

  void command_done(const GpuCommand& command) override;
  /// Equal-time order: of S streams, stream s rings its doorbells with rank `first_rank` + S - 1 - s (the
  /// last-declared first, core/equal_time_order.h).
  void set_equal_time_order(EqualTimeOrder& order, std::uint64_t first_rank);

  [[nodiscard]] const std::vector<ProcessResult>& results() const { return results_; }
  [[nodiscard]] bool all_finished() const { return finished_processes_ == workload_.processes.size(); }
  [[nodiscard]] TimePs last_finish_ps() const { return last_finish_ps_; }
  /// One line per process and stream that has not finished (for the stuck-run message).
  [[nodiscard]] std::vector<std::string> unfinished() const;

 private:
  struct StreamState {
    ProcessId process{};
    std::uint32_t outstanding = 0;
    sc_core::sc_event done;
    std::string waiting_on;  ///< description of the command it waits for
    bool running = false;
    EqualTimeTurn turn;  ///< to ring a doorbell
  };

  /// Streams of one process waiting at a join (CommandKind::kJoin).
  struct JoinPoint {
    std::size_t arrived = 0;
    std::uint64_t generation = 0;  ///< joins completed; a waiting stream leaves when it changes
    sc_core::sc_event all_arrived;
  };

  void process_main(std::uint32_t process);
  void join(std::uint32_t stream);
  void stream_run(std::uint32_t stream, const StreamSpec& spec);
  void submit(std::uint32_t stream, CommandKind kind, std::uint64_t bytes, const KernelDesc* kernel);
  [[nodiscard]] bool should_replay(std::uint32_t process) const;

  const Workload& workload_;
  std::uint32_t queue_count_;
  std::uint32_t command_bytes_;
  std::vector<std::vector<std::uint32_t>> streams_of_process_;  ///< global stream indices
  std::vector<StreamState> streams_;
  std::vector<JoinPoint> joins_;  ///< per process
  std::vector<ProcessResult> results_;
  std::size_t finished_processes_ = 0;
  std::uint64_t next_command_id_ = 0;
  TimePs last_finish_ps_ = 0;
  std::vector<unsigned char> doorbell_;
};

}  // namespace gpumux
