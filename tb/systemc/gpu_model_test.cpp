// gpumux inside a user's platform (top/gpu_model.h, mem/external_memory.h; docs/cosim.md): the module with
// its own host and memory runs what `gpumux run` runs; a user memory target that answers as the `simple`
// model does (the same BandwidthChannel) gives the same run whether it completes at once or later
// through b_transport (tlm_utils' adapter: TLM_ACCEPTED, then BEGIN_RESP); the user's host gets an error
// response for a command the GPU cannot run; a memory error response stops the run with a message naming
// the address.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "common/test_support.h"
#include "config/gpu_loader.h"
#include "core/bandwidth_channel.h"
#include "core/error.h"
#include "core/processes.h"
#include "top/gpu_model.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

/// The Fermi GTX 480 with the two-process ERCBench workload, at the warp level (warps make memory
/// traffic) with the simple memory model.
SimulationSpec warp_pair() {
  const std::string configs = std::string(GPUMUX_SOURCE_DIR) + "/configs";
  SimulationSpec spec =
      GpuModel::load(configs + "/gpus/fermi-gtx480.yaml", configs + "/workloads/ercbench-pair.yaml");
  apply_sm_settings(spec.gpu, SmModel::kWarp, "");
  spec.gpu.memory.model = MemoryModel::kSimple;
  return spec;
}

/// A user's memory target that answers as the simple model does: one BandwidthChannel with the GPU's
/// bandwidth and latency. `blocking_only`: it registers only b_transport, so tlm_utils' simple target
/// socket answers non-blocking calls later from a process of its own (TLM_ACCEPTED, then BEGIN_RESP).
class SimpleLikeMemory final : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<SimpleLikeMemory> socket;
  std::uint64_t bytes = 0;
  bool fail_writes = false;

  SimpleLikeMemory(const sc_core::sc_module_name& name, const MemoryConfig& config, bool blocking_only)
      : sc_core::sc_module(name),
        socket("socket"),
        channel_(config.bandwidth_gb_per_s * 1e9, ps_from_ns(config.latency_ns)) {
    socket.register_b_transport(this, &SimpleLikeMemory::b_transport);
    if (!blocking_only) socket.register_nb_transport_fw(this, &SimpleLikeMemory::nb_transport_fw);
  }

 private:
  TimePs serve(tlm::tlm_generic_payload& payload, TimePs arrival) {
    bytes += payload.get_data_length();
    if (fail_writes && payload.is_write()) {
      payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return arrival;
    }
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    const BandwidthChannel::Slot slot = channel_.reserve(payload.get_data_length(), arrival);
    return payload.is_write() ? slot.end_ps : slot.deliver_ps;
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& /*phase*/,
                                     sc_core::sc_time& delay) {
    const TimePs now = sc_core::sc_time_stamp().value();
    delay = sc_core::sc_time::from_value(serve(payload, now + delay.value()) - now);
    return tlm::TLM_COMPLETED;
  }
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    const TimePs now = sc_core::sc_time_stamp().value();
    delay = sc_core::sc_time::from_value(serve(payload, now + delay.value()) - now);
  }

  BandwidthChannel channel_;
};

/// The run as gpumux reports it, without the wall time.
nlohmann::json comparable(const RunResult& result) {
  nlohmann::json j = result;
  j.erase("wall_seconds");
  // The memory model's own figures: a user's memory keeps its own (busy 0, details {"model":"external"}).
  j["memory"].erase("dram");
  j["memory"].erase("busy_ps");
  return j;
}

/// As comparable(), with the SMs' figures as a sorted list without their ids: which SM ran which thread
/// blocks depends on the order of equal-time completions, which a target answering later through its own
/// processes (tlm_utils' adapter) sets, not the model.
nlohmann::json comparable_up_to_sm_order(nlohmann::json j) {
  std::vector<std::string> sms;
  for (nlohmann::json& sm : j["sms"]) {
    sm.erase("id");
    sms.push_back(sm.dump());
  }
  std::sort(sms.begin(), sms.end());
  j["sms"] = sms;
  return j;
}

/// A GpuModel run in a child: its built-in host, the user's memory when `user_memory` (blocking_only as
/// above), else the config's.
nlohmann::json run_model(const SimulationSpec& spec, bool user_memory, bool blocking_only,
                         bool fail_writes = false) {
  return run_in_child([&] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    GpuModel gpu("gpu", spec, GpuModelOptions{true, user_memory});
    std::unique_ptr<SimpleLikeMemory> memory;
    if (user_memory) {
      memory = std::make_unique<SimpleLikeMemory>("memory", spec.gpu.memory, blocking_only);
      memory->fail_writes = fail_writes;
      gpu.memory_socket().bind(memory->socket);
    }
    nlohmann::json out;
    try {
      sc_core::sc_start();
      const RunResult result = gpu.finish();
      out["result"] = comparable(result);
      out["user_bytes"] = memory ? memory->bytes : 0;
    } catch (const std::exception& e) {
      out["error"] = e.what();
    }
    return out;
  });
}

TEST(GpuModel, WithItsOwnHostAndMemoryRunsWhatGpumuxRunRuns) {
  const SimulationSpec spec = warp_pair();
  const nlohmann::json model = run_model(spec, false, false);
  ASSERT_FALSE(model.contains("error")) << model["error"];
  EXPECT_TRUE(model["result"] == comparable(simulate(spec)));  // (not EXPECT_EQ: it would print both runs)
  EXPECT_GT(model["result"]["memory"]["bytes"].get<std::uint64_t>(), 0U);
}

TEST(GpuModel, AUserMemoryAnsweringAsTheSimpleModelGivesTheSameRunEarlyOrLate) {
  const SimulationSpec spec = warp_pair();
  const nlohmann::json builtin = comparable(simulate(spec));
  for (const bool blocking_only : {false, true}) {
    SCOPED_TRACE(blocking_only ? "b_transport only (TLM_ACCEPTED, BEGIN_RESP later)" : "early completion");
    const nlohmann::json user = run_model(spec, true, blocking_only);
    ASSERT_FALSE(user.contains("error")) << user["error"];
    if (blocking_only) {
      EXPECT_TRUE(comparable_up_to_sm_order(user["result"]) == comparable_up_to_sm_order(builtin));
    } else {
      EXPECT_TRUE(user["result"] == builtin);
    }
    // Every byte the GPU reports went through the user's target.
    EXPECT_EQ(user["user_bytes"], builtin["memory"]["bytes"]);
  }
}

TEST(GpuModel, AMemoryErrorResponseStopsTheRunNamingTheAddress) {
  const nlohmann::json out = run_model(warp_pair(), true, false, true);
  ASSERT_TRUE(out.contains("error")) << out.dump();
  const std::string error = out["error"];
  EXPECT_NE(error.find("answered a write of"), std::string::npos) << error;
  EXPECT_NE(error.find("at address 0x"), std::string::npos) << error;
  EXPECT_NE(error.find("cannot retry"), std::string::npos) << error;
}

/// The user's host: sends `commands` one after another and records each response status.
class ProbeHost final : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<ProbeHost> socket;
  std::vector<std::string> responses;

  ProbeHost(const sc_core::sc_module_name& name, GpuModel& gpu, std::vector<GpuCommand> commands)
      : sc_core::sc_module(name), socket("socket"), gpu_(gpu), commands_(std::move(commands)) {
    spawn_thread("run", [this] {
      for (const GpuCommand& command : commands_) {
        tlm::tlm_generic_payload payload;
        gpu_.prepare_doorbell(payload, command);
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket->b_transport(payload, delay);
        responses.push_back(payload.get_response_string());
        sc_core::wait(delay);
      }
    });
  }

 private:
  GpuModel& gpu_;
  std::vector<GpuCommand> commands_;
};

TEST(GpuModel, TheUsersHostGetsAnErrorResponseForACommandTheGpuCannotRun) {
  const SimulationSpec spec = warp_pair();
  const nlohmann::json out = run_in_child([&] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    GpuModel gpu("gpu", spec, GpuModelOptions{false, false});
    const KernelDesc* idct = &gpu.kernel("CUDAkernel2IDCT");
    auto command = [&](std::uint64_t id, CommandKind kind, std::uint32_t process, std::uint32_t queue,
                       std::uint64_t bytes, const KernelDesc* kernel) {
      GpuCommand c;
      c.id = id;
      c.kind = kind;
      c.process = ProcessId{process};
      c.queue = queue;
      c.bytes = bytes;
      c.kernel = kernel;
      return c;
    };
    ProbeHost host("host", gpu,
                   {command(0, CommandKind::kKernel, 2, 0, 0, idct),           // process out of range
                    command(1, CommandKind::kKernel, 0, 0, 0, nullptr),        // no kernel
                    command(2, CommandKind::kHostToDevice, 0, 0, 0, nullptr),  // a copy of nothing
                    command(3, CommandKind::kCpu, 0, 0, 0, nullptr),           // host-only
                    command(4, CommandKind::kKernel, 0, 1000, 0, idct),        // no such queue
                    command(5, CommandKind::kKernel, 1, 1, 0, idct)});         // fine
    host.socket.bind(gpu.command_socket());
    nlohmann::json j;
    sc_core::sc_start();
    j["responses"] = host.responses;
    const RunResult result = gpu.finish();
    j["completed"] = result.commands_completed;
    j["tbs"] = result.tbs_completed;
    bool unknown_kernel = false;
    try {
      (void)gpu.kernel("NoSuchKernel");
    } catch (const InputError&) {
      unknown_kernel = true;
    }
    j["unknown_kernel_is_input_error"] = unknown_kernel;
    return j;
  });
  const std::vector<std::string> expected{"TLM_COMMAND_ERROR_RESPONSE", "TLM_COMMAND_ERROR_RESPONSE",
                                          "TLM_COMMAND_ERROR_RESPONSE", "TLM_COMMAND_ERROR_RESPONSE",
                                          "TLM_ADDRESS_ERROR_RESPONSE", "TLM_OK_RESPONSE"};
  EXPECT_EQ(out["responses"].get<std::vector<std::string>>(), expected);
  EXPECT_EQ(out["completed"], 1);
  EXPECT_EQ(out["tbs"], 512);
  EXPECT_TRUE(out["unknown_kernel_is_input_error"].get<bool>());
}

}  // namespace
}  // namespace gpumux
