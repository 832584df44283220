// A user's own SystemC platform with the gpumux GPU inside it (docs/cosim.md): this testbench supplies
// the host model and the memory model itself.
//
//   - TestHost sends GPU commands through the GPU's command socket (TLM-2.0 doorbell writes) from one
//     thread per process, and hears of completions through a CommandCompletionListener.
//   - CountingMemory is the memory: the GPU's memory socket is bound to it. It answers every request
//     after a fixed latency plus the transfer time at a fixed bandwidth, and counts the bytes.
//
// It runs two processes (an H2D copy, a warp-level kernel and a D2H copy; a second kernel) and checks
// the results: every command completed, in order within its stream; the memory saw exactly the bytes the
// GPU reports having sent; each copy's bytes reached memory. It prints a summary whose "kernel time" a
// test compares across memory latencies (a slower memory must slow the warp-level kernels).
//
//   cosim_testbench [latency_ns]     (default 100)

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <gpumux/config/gpu_loader.h>
#include <gpumux/core/error.h>
#include <gpumux/top/gpu_model.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

namespace {

/// The user's memory model: latency plus bytes / bandwidth, requests served one after another.
class CountingMemory final : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<CountingMemory> socket;

  CountingMemory(const sc_core::sc_module_name& name, double latency_ns, double bytes_per_ns)
      : sc_core::sc_module(name), socket("socket"), latency_ns_(latency_ns), bytes_per_ns_(bytes_per_ns) {
    socket.register_nb_transport_fw(this, &CountingMemory::nb_transport_fw);
    socket.register_b_transport(this, &CountingMemory::b_transport);
  }

  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t requests = 0;

 private:
  /// When a request arriving at `arrival` is done: it waits for the data bus, then moves its bytes.
  sc_core::sc_time serve(tlm::tlm_generic_payload& payload, const sc_core::sc_time& arrival) {
    ++requests;
    (payload.is_write() ? write_bytes : read_bytes) += payload.get_data_length();
    const sc_core::sc_time start = arrival > bus_free_ ? arrival : bus_free_;
    bus_free_ = start + sc_core::sc_time(payload.get_data_length() / bytes_per_ns_, sc_core::SC_NS);
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    return bus_free_ + sc_core::sc_time(latency_ns_, sc_core::SC_NS);
  }

  // Answers at once with the completion delay (TLM-2.0 base protocol, early completion).
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay) {
    if (phase != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    delay = serve(payload, now + delay) - now;
    return tlm::TLM_COMPLETED;
  }

  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    delay = serve(payload, now + delay) - now;
  }

  double latency_ns_;
  double bytes_per_ns_;
  sc_core::sc_time bus_free_ = sc_core::SC_ZERO_TIME;
};

/// One command a process's stream sends.
struct Step {
  gpumux::CommandKind kind;
  std::uint64_t bytes = 0;
  const gpumux::KernelDesc* kernel = nullptr;
};

/// The user's host model: one thread per process runs its stream, each command synchronous.
class TestHost final : public sc_core::sc_module, public gpumux::CommandCompletionListener {
 public:
  tlm_utils::simple_initiator_socket<TestHost> socket;

  TestHost(const sc_core::sc_module_name& name, gpumux::GpuModel& gpu, std::vector<std::vector<Step>> streams)
      : sc_core::sc_module(name),
        socket("socket"),
        gpu_(gpu),
        streams_(std::move(streams)),
        done_(streams_.size()),
        completed_(streams_.size()) {
    gpu.set_completion_listener(this);
    sent.resize(streams_.size());
    for (std::size_t p = 0; p < streams_.size(); ++p) {
      sc_core::sc_spawn([this, p] { run(p); }, sc_core::sc_gen_unique_name("stream"));
    }
  }

  void command_done(const gpumux::GpuCommand& command) override {
    completed_[command.stream].push_back(command.id);
    done_[command.stream].notify(sc_core::SC_ZERO_TIME);
  }

  std::vector<std::vector<std::uint64_t>> sent;  ///< command ids per stream, in order
  const std::vector<std::vector<std::uint64_t>>& completed() const { return completed_; }

 private:
  void run(std::size_t process) {
    for (const Step& step : streams_[process]) {
      gpumux::GpuCommand command;
      command.id = next_id_++;
      command.kind = step.kind;
      command.process = gpumux::ProcessId{static_cast<std::uint32_t>(process)};
      command.stream = static_cast<std::uint32_t>(process);
      command.queue = static_cast<std::uint32_t>(process);
      command.bytes = step.bytes;
      command.kernel = step.kernel;
      tlm::tlm_generic_payload payload;
      gpu_.prepare_doorbell(payload, command);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(payload, delay);
      if (!payload.is_response_ok()) {
        std::cerr << "cosim_testbench: the GPU refused command " << command.id << ": "
                  << payload.get_response_string() << '\n';
        std::exit(1);
      }
      sc_core::wait(delay);
      sent[process].push_back(command.id);
      // Synchronous, as cudaMemcpy and a launch followed by a synchronize.
      while (completed_[process].size() < sent[process].size()) sc_core::wait(done_[process]);
    }
  }

  gpumux::GpuModel& gpu_;
  std::vector<std::vector<Step>> streams_;
  std::vector<sc_core::sc_event> done_;
  std::vector<std::vector<std::uint64_t>> completed_;
  std::uint64_t next_id_ = 0;
};

int check(bool ok, const std::string& what) {
  std::cout << (ok ? "  ok    " : "  FAIL  ") << what << '\n';
  return ok ? 0 : 1;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  const double latency_ns = argc > 1 ? std::atof(argv[1]) : 100.0;
  if (!(latency_ns >= 0.0)) {
    std::cerr << "usage: cosim_testbench [latency_ns >= 0]\n";
    return 2;
  }
  try {
    const std::string configs = GPUMUX_CONFIG_DIR;
    // The GPU and the processes (GPU contexts) from the shipped configs; the workload's streams are not
    // run: this testbench's host sends the commands.
    gpumux::SimulationSpec spec = gpumux::GpuModel::load(configs + "/gpus/fermi-gtx480.yaml",
                                                         configs + "/workloads/ercbench-pair.yaml");
    gpumux::apply_sm_settings(spec.gpu, gpumux::SmModel::kWarp, "");  // warps make memory traffic

    gpumux::GpuModel gpu("gpu", spec, gpumux::GpuModelOptions{false, true});
    CountingMemory memory("memory", latency_ns, 177.4);  // the GTX 480's 177.4 GB/s = bytes per ns
    gpu.memory_socket().bind(memory.socket);
    const std::uint64_t copy_bytes = 256 * 1024;
    TestHost host("host", gpu,
                  {{{gpumux::CommandKind::kHostToDevice, copy_bytes, nullptr},
                    {gpumux::CommandKind::kKernel, 0, &gpu.kernel("CUDAkernel2IDCT")},
                    {gpumux::CommandKind::kDeviceToHost, copy_bytes, nullptr}},
                   {{gpumux::CommandKind::kKernel, 0, &gpu.kernel("CUDAkernel2DCT")}}});
    host.socket.bind(gpu.command_socket());

    sc_core::sc_start();
    const gpumux::RunResult result = gpu.finish();

    std::uint64_t kernel_ps = 0;
    std::uint32_t thread_blocks = 0;
    for (const gpumux::KernelRecord& k : result.kernels) {
      kernel_ps += k.end_ps - k.start_ps;
      thread_blocks += k.thread_blocks;
    }
    std::cout << "cosim_testbench: memory latency " << latency_ns << " ns\n"
              << "  commands completed " << result.commands_completed << ", thread blocks " << thread_blocks
              << ", end " << static_cast<double>(result.end_ps) / 1e3 << " ns\n"
              << "  memory: " << memory.requests << " requests, " << memory.read_bytes << " bytes read, "
              << memory.write_bytes << " bytes written\n"
              << "kernel time ps " << kernel_ps << '\n';

    int failures = 0;
    failures += check(result.commands_completed == 4, "every command the host sent completed");
    failures += check(host.completed() == host.sent, "each stream's commands completed in the order sent");
    failures += check(result.tbs_completed == thread_blocks && thread_blocks == 1024,
                      "every thread block of both kernels ran once (512 + 512)");
    failures += check(memory.read_bytes + memory.write_bytes == result.memory.bytes,
                      "the memory saw exactly the bytes the GPU sent");
    failures += check(memory.requests == result.memory.transactions, "and exactly its requests");
    failures += check(memory.write_bytes >= copy_bytes && memory.read_bytes >= copy_bytes,
                      "both copies reached the memory (H2D writes it, D2H reads it)");
    failures += check(memory.read_bytes > 2 * copy_bytes, "the warp-level kernels' loads reached the memory");
    return failures == 0 ? 0 : 1;
  } catch (const gpumux::InputError& e) {
    std::cerr << "cosim_testbench: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "cosim_testbench: " << e.what() << '\n';
    return 1;
  }
}
