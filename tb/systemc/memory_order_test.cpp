// Issue 19: every initiator of the memory controller (the DMA engines, each SM's context save and
// restore) synchronises through its quantum keeper, so requests reach the controller in arrival-time
// order. Several initiators share one controller through a probe that records each request's
// arrival; the test checks the order and every completion time against the numbers worked out by
// hand in the comments (a channel that serves requests first come first served, in time order).
//
// Configuration, chosen so every time is a whole number of nanoseconds:
//   memory 64 GB/s, 100 ns latency: a 4 KB burst occupies the channel 64 ns.
//   4 SMs with a 1/4 share for context traffic (16 GB/s): one 4 KB context burst every 256 ns.
//   PCIe 500 MHz x 32 lanes x 4 bits = 8 GB/s, 500 ns latency: one 4 KB burst every 512 ns.

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <systemc>
#include <tlm>

#include "common/test_support.h"
#include "core/error.h"
#include "core/processes.h"
#include "core/tlm_quantum.h"
#include "frontend/dma_engine.h"
#include "host/pcie_link.h"
#include "mem/memory_controller.h"
#include "sm/tb/tb_sm.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

constexpr TimePs kNs = 1000;

GpuConfig test_gpu() {
  GpuConfig gpu;
  gpu.name = "order-test";
  gpu.num_sms = 4;
  gpu.core_clock_mhz = 1000;
  gpu.sm.registers = 65536;
  gpu.sm.max_threads = 2048;
  gpu.sm.max_thread_blocks = 16;
  gpu.sm.max_warps = 64;
  gpu.sm.shared_memory_configs = {49152};
  gpu.memory.bandwidth_gb_per_s = 64.0;
  gpu.memory.latency_ns = 100.0;
  gpu.pcie.clock_mhz = 500;
  gpu.pcie.lanes = 32;
  gpu.pcie.bits_per_lane_per_cycle = 4;
  gpu.pcie.burst_bytes = 4096;
  gpu.pcie.latency_ns = 500;
  gpu.context_switch.per_sm_share = true;
  gpu.context_switch.burst_bytes = 4096;
  // Whole 4 KB bursts, so the times below can be worked out by hand (the shipped files cut a save
  // into at least 64 pieces: Validation.ConcurrentSavesOfEverySmEachTakeTanasicTable1Time).
  gpu.context_switch.min_transactions = 1;
  return gpu;
}

/// Sits in front of the memory controller: records the arrival time (now + annotated delay) of
/// every request it forwards.
class ArrivalProbe final : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<ArrivalProbe> in;
  tlm_utils::simple_initiator_socket<ArrivalProbe> out;
  std::vector<TimePs> arrivals;

  explicit ArrivalProbe(const sc_core::sc_module_name& name)
      : sc_core::sc_module(name), in("in"), out("out") {
    in.register_nb_transport_fw(this, &ArrivalProbe::nb_transport_fw);
  }

 private:
  // The simple memory controller completes every request on the forward path (mem/memory_port.h).
  tlm::tlm_sync_enum nb_transport_fw(int /*initiator*/, tlm::tlm_generic_payload& payload,
                                     tlm::tlm_phase& phase, sc_core::sc_time& delay) {
    arrivals.push_back(sc_core::sc_time_stamp().value() + delay.value());
    return out->nb_transport_fw(payload, phase, delay);
  }
};

/// Stands in for the host and the command queues on the link's other sockets (no commands here).
class IdleEnds final : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<IdleEnds> host;
  tlm_utils::simple_target_socket<IdleEnds> queues;
  explicit IdleEnds(const sc_core::sc_module_name& name)
      : sc_core::sc_module(name), host("host"), queues("queues") {
    queues.register_b_transport(this, &IdleEnds::b_transport);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& /*delay*/) {
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

/// Records SM events and DMA completions with their times.
class Recorder final : public TbCompletionListener, public CommandCompletionListener {
 public:
  void on_tb_complete(SmId sm, KernelId /*kernel*/, std::uint32_t tb, TimePs /*start_ps*/) override {
    events.push_back({"tb_done sm" + std::to_string(index(sm)) + " tb" + std::to_string(tb), now()});
  }
  void on_context_saved(SmId sm, const std::vector<PreemptedTb>& saved, const ContextSave& save) override {
    std::string what = "saved sm" + std::to_string(index(sm)) + " bytes" + std::to_string(save.bytes);
    for (const PreemptedTb& p : saved) {
      what += " tb" + std::to_string(p.tb) + "/" + std::to_string(p.resume.remaining_ps);
    }
    events.push_back({what, now()});
  }
  void command_done(const GpuCommand& command) override {
    events.push_back({"copy_done " + std::to_string(command.id), now()});
  }
  struct Event {
    std::string what;
    TimePs at_ps;
  };
  std::vector<Event> events;

 private:
  static TimePs now() { return sc_core::sc_time_stamp().value(); }
};

/// Context of `registers` 32-bit registers: registers * 4 bytes.
TbFootprint footprint(std::uint32_t registers) { return TbFootprint{registers, 0, 256, 8}; }

/// Thread block `tb` of a kernel whose thread blocks run `duration_ps` (fixed durations); with
/// `restore_bytes`, a preempted one that restores that much context and then runs `duration_ps`.
TbLaunch launch(std::uint32_t tb, std::uint32_t registers, TimePs duration_ps, std::uint64_t restore_bytes) {
  static std::deque<KernelDesc> kernels;  // outlive the simulation of this process
  kernels.emplace_back();
  kernels.back().name = "k";
  kernels.back().tb_time.mean_ps = duration_ps;
  TbLaunch l;
  l.kernel = KernelId{0};
  l.desc = &kernels.back();
  l.tb = tb;
  l.footprint = footprint(registers);
  l.shared_memory_config = 49152;
  l.restore_bytes = restore_bytes;
  if (restore_bytes > 0) {
    l.resumed = true;
    l.resume.remaining_ps = duration_ps;
  }
  return l;
}

/// One elaboration: a memory controller behind a probe, a PCIe link, two DMA engines and `sms`
/// SMs; `script` runs in a thread at time zero and drives them. Returns the recorded events, the
/// arrivals and the controller's count, or the error that stopped the simulation.
nlohmann::json run_scenario(
    std::uint32_t sms,
    const std::function<void(std::vector<std::unique_ptr<TbSm>>&, DmaEngine&, DmaEngine&)>& script) {
  return run_in_child([&] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    set_global_quantum();
    static const GpuConfig gpu = test_gpu();
    Recorder recorder;
    auto memory = std::make_unique<MemoryController>("memory", gpu.memory);
    auto probe = std::make_unique<ArrivalProbe>("probe");
    auto link = std::make_unique<PcieLink>("pcie", gpu.pcie);
    auto h2d =
        std::make_unique<DmaEngine>("dma_h2d", gpu.pcie, CopyPolicy::kFcfs, std::vector<int>{0}, recorder);
    auto d2h =
        std::make_unique<DmaEngine>("dma_d2h", gpu.pcie, CopyPolicy::kFcfs, std::vector<int>{0}, recorder);
    auto ends = std::make_unique<IdleEnds>("ends");
    ends->host.bind(link->host_socket);
    link->frontend_socket.bind(ends->queues);
    probe->out.bind(memory->socket);
    h2d->link_socket.bind(link->dma_socket);
    h2d->memory_socket.bind(probe->in);
    d2h->link_socket.bind(link->dma_socket);
    d2h->memory_socket.bind(probe->in);
    auto calendar = std::make_unique<TbCalendar>("tb_calendar", true);
    auto context_traffic = std::make_unique<ContextTraffic>("context_traffic", true);
    std::vector<std::unique_ptr<TbSm>> list;
    for (std::uint32_t s = 0; s < sms; ++s) {
      list.push_back(std::make_unique<TbSm>(("sm_" + std::to_string(s)).c_str(), SmId{s}, gpu,
                                            TbDurationMode::kFixed, 1, recorder, *calendar,
                                            *context_traffic));
      list.back()->memory_socket.bind(probe->in);
    }
    spawn_thread("script", [&] { script(list, *h2d, *d2h); });
    sc_core::sc_start();
    nlohmann::json out;
    test::record_process_failure(out);
    for (const auto& e : recorder.events) out["events"][e.what] = e.at_ps / kNs;
    out["arrivals_ns"] = nlohmann::json::array();
    for (TimePs a : probe->arrivals) out["arrivals_ns"].push_back(a / kNs);
    out["transactions"] = memory->transactions();
    return out;
  });
}

void wait_until(TimePs at_ps) {
  sc_core::wait(sc_core::sc_time::from_value(at_ps - sc_core::sc_time_stamp().value()));
}

GpuCommand copy(std::uint64_t id, CommandKind kind, std::uint64_t bytes) {
  GpuCommand c;
  c.id = id;
  c.kind = kind;
  c.bytes = bytes;
  return c;
}

void expect_time_order(const nlohmann::json& r) {
  ASSERT_FALSE(r.contains("error")) << r["error"];
  const auto arrivals = r["arrivals_ns"].get<std::vector<TimePs>>();
  EXPECT_EQ(arrivals.size(), r["transactions"].get<std::uint64_t>());
  for (std::size_t i = 1; i < arrivals.size(); ++i) {
    EXPECT_LE(arrivals[i - 1], arrivals[i]) << "request " << i << " reached the controller out of order";
  }
}

// The concurrent-save bug: SM 0 saves 16 KB at 0 ns, SM 1 saves 16 KB at 10 ns. Bursts leave at the
// 1/4 share: SM 0 at 256, 512, 768, 1024 ns, SM 1 at 266, 522, 778, 1034 ns. In time order each of
// SM 1's bursts waits for SM 0's burst just ahead (64 ns of service): SM 0's last write is taken at
// 1024 + 64 = 1088 ns, SM 1's at 1088 + 64 = 1152 ns. (Booking SM 0's whole save first, as the model
// did before issue 19, put all of SM 1's bursts behind 1088 ns: it finished at 1344 ns.)
TEST(MemoryOrder, ConcurrentContextSavesInterleaveInTimeOrder) {
  const nlohmann::json r = run_scenario(2, [](auto& sms, DmaEngine&, DmaEngine&) {
    sms[0]->start_tb(launch(0, 4096, 1'000'000 * kNs, 0));
    sms[0]->save_context();
    wait_until(10 * kNs);
    sms[1]->start_tb(launch(1, 4096, 1'000'000 * kNs, 0));
    sms[1]->save_context();
  });
  expect_time_order(r);
  EXPECT_EQ(r["arrivals_ns"], nlohmann::json({256, 266, 512, 522, 768, 778, 1024, 1034}));
  EXPECT_EQ(r["events"]["saved sm0 bytes16384 tb0/1000000000"], 1088);
  EXPECT_EQ(r["events"]["saved sm1 bytes16384 tb1/1000000000"], 1152);
}

// Two DMA copies and a context save at once.
//   H2D 16 KB from 0 ns: bursts cross the link at 0, 512, 1024, 1536 ns and reach the GPU 512 + 500 ns
//     later, at 1012, 1524, 2036, 2548 ns, where they are written to memory.
//   D2H 8 KB from 0 ns: memory reads at 0 and 512 ns, data 64 + 100 ns later (164, 676 ns), across
//     the link upstream in 512 + 500 ns: at the host at 1176 and 1688 ns. The copy ends at 1688 ns.
//   SM 0 saves 16 KB from 1000 ns: writes at 1256, 1512, 1768, 2024 ns.
// In arrival order: 0 D2H, 512 D2H, 1012 H2D, 1256 SM, 1512 SM, 1524 H2D (waits for the SM's burst
// until 1576, done 1640), 1768 SM, 2024 SM (done 2088: the save ends), 2036 H2D (waits until 2088,
// done 2152), 2548 H2D (done 2612: the H2D copy ends).
TEST(MemoryOrder, DmaCopiesAndAContextSaveShareTheControllerInTimeOrder) {
  const nlohmann::json r = run_scenario(1, [](auto& sms, DmaEngine& h2d, DmaEngine& d2h) {
    h2d.accept(copy(1, CommandKind::kHostToDevice, 16384));
    d2h.accept(copy(2, CommandKind::kDeviceToHost, 8192));
    wait_until(1000 * kNs);
    sms[0]->start_tb(launch(0, 4096, 1'000'000 * kNs, 0));
    sms[0]->save_context();
  });
  expect_time_order(r);
  EXPECT_EQ(r["arrivals_ns"], nlohmann::json({0, 512, 1012, 1256, 1512, 1524, 1768, 2024, 2036, 2548}));
  EXPECT_EQ(r["events"]["copy_done 2"], 1688);
  EXPECT_EQ(r["events"]["saved sm0 bytes16384 tb0/1000000000"], 2088);
  EXPECT_EQ(r["events"]["copy_done 1"], 2612);
}

// Restores are reads: a re-issued thread block runs once its context is back. SM 1 saves 16 KB from
// 0 ns (writes at 256, 512, 768, 1024 ns); SM 0 restores 8 KB for a 1000 ns thread block from 20 ns
// (reads at 276 and 532 ns, each behind SM 1's write of 20 ns earlier: served 320-384 and 576-640 ns,
// data at 484 and 740 ns). The thread block runs 740-1740 ns.
TEST(MemoryOrder, RestoredThreadBlockStartsWhenItsContextIsBack) {
  const nlohmann::json r = run_scenario(2, [](auto& sms, DmaEngine&, DmaEngine&) {
    sms[1]->start_tb(launch(1, 4096, 1'000'000 * kNs, 0));
    sms[1]->save_context();
    wait_until(20 * kNs);
    sms[0]->start_tb(launch(0, 2048, 1000 * kNs, 8192));
  });
  expect_time_order(r);
  EXPECT_EQ(r["arrivals_ns"], nlohmann::json({256, 276, 512, 532, 768, 1024}));
  EXPECT_EQ(r["events"]["saved sm1 bytes16384 tb1/1000000000"], 1088);
  EXPECT_EQ(r["events"]["tb_done sm0 tb0"], 1740);
}

// A save that stops the SM while a thread block's context is still being restored includes that
// thread block and ends after its restore: restore of 8 KB from 0 ns (reads at 256 and 512 ns, the
// last data at 512 + 64 + 100 = 676 ns), save requested at 300 ns (8 KB: writes at 556 and 812 ns,
// the first waits for the read at 512 ns: 576-640 ns; the last is taken at 876 ns). The thread block never
// ran: all of its 1000 ns are left.
TEST(MemoryOrder, SaveDuringARestoreWaitsForIt) {
  const nlohmann::json r = run_scenario(1, [](auto& sms, DmaEngine&, DmaEngine&) {
    sms[0]->start_tb(launch(0, 2048, 1000 * kNs, 8192));
    wait_until(300 * kNs);
    sms[0]->save_context();
  });
  expect_time_order(r);
  EXPECT_EQ(r["arrivals_ns"], nlohmann::json({256, 512, 556, 812}));
  EXPECT_EQ(r["events"]["saved sm0 bytes8192 tb0/1000000"], 876);
  EXPECT_FALSE(r["events"].contains("tb_done sm0 tb0"));
}

/// Sends a request annotated 1 us ahead, then one annotated now: the second arrives earlier.
class OutOfOrderInitiator final : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<OutOfOrderInitiator> socket;
  explicit OutOfOrderInitiator(const sc_core::sc_module_name& name)
      : sc_core::sc_module(name), socket("socket") {
    spawn_thread("run", [this] {
      std::vector<unsigned char> data(64);
      tlm::tlm_generic_payload p;
      p.set_command(tlm::TLM_WRITE_COMMAND);
      p.set_data_ptr(data.data());
      p.set_data_length(64);
      p.set_streaming_width(64);
      for (const TimePs ahead : {1000 * kNs, TimePs{0}}) {
        sc_core::sc_time delay = sc_core::sc_time::from_value(ahead);
        socket->b_transport(p, delay);
      }
    });
  }
};

/// Accepts every request and answers them later, newest first: request i (0-based, of n) is answered at
/// `answer_ns[i]`, its data back then. What a DRAM scheduler that reorders reads does to a copy.
class ReorderingMemory final : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<ReorderingMemory> socket;
  ReorderingMemory(const sc_core::sc_module_name& name, std::vector<TimePs> answer_ns)
      : sc_core::sc_module(name), socket("socket"), answer_ns_(std::move(answer_ns)) {
    socket.register_nb_transport_fw(this, &ReorderingMemory::nb_transport_fw);
    spawn_thread("answer", [this] { answer(); });
  }

 private:
  tlm::tlm_sync_enum nb_transport_fw(int initiator, tlm::tlm_generic_payload& payload,
                                     tlm::tlm_phase& /*phase*/, sc_core::sc_time& /*delay*/) {
    payload.acquire();
    taken_.push_back({initiator, &payload});
    return tlm::TLM_ACCEPTED;
  }
  void answer() {
    std::vector<std::size_t> order(answer_ns_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return answer_ns_[a] < answer_ns_[b]; });
    for (const std::size_t i : order) {
      wait_until_ns(answer_ns_[i]);
      if (i >= taken_.size()) throw std::logic_error("request " + std::to_string(i) + " never came");
      tlm::tlm_generic_payload& p = *taken_[i].second;
      p.set_response_status(tlm::TLM_OK_RESPONSE);
      tlm::tlm_phase phase = tlm::BEGIN_RESP;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket[taken_[i].first]->nb_transport_bw(p, phase, delay);
    }
  }
  static void wait_until_ns(TimePs ns) {
    sc_core::wait(sc_core::sc_time::from_value(ns * kNs - sc_core::sc_time_stamp().value()));
  }
  std::vector<TimePs> answer_ns_;
  std::vector<std::pair<int, tlm::tlm_generic_payload*>> taken_;
};

// A device-to-host copy of two 4 KB bursts reads memory at 0 and 512 ns (the link's pace). The memory
// answers the second read first (600 ns) and the first at 2000 ns. The link takes the engine's bursts
// in order, so the second goes on the link after the first, at 2000 ns, not at its own 600 ns (before
// the fix, sending it at 600 ns with the clock at 2000 stopped the run: "sent late"). Link: 4 KB take
// 512 ns, then 500 ns of latency: the first is delivered at 2000 + 512 + 500 = 3012 ns, the second,
// serialised behind it, at 2512 + 512 + 500 = 3524 ns, when the copy is done.
TEST(MemoryOrder, ADeviceToHostCopySendsReadsAnsweredOutOfOrderInItsOwnOrder) {
  const nlohmann::json r = run_in_child([] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    set_global_quantum();
    static const GpuConfig gpu = test_gpu();
    Recorder recorder;
    auto memory = std::make_unique<ReorderingMemory>("memory", std::vector<TimePs>{2000, 600});
    auto link = std::make_unique<PcieLink>("pcie", gpu.pcie);
    auto d2h =
        std::make_unique<DmaEngine>("dma_d2h", gpu.pcie, CopyPolicy::kFcfs, std::vector<int>{0}, recorder);
    auto ends = std::make_unique<IdleEnds>("ends");
    ends->host.bind(link->host_socket);
    link->frontend_socket.bind(ends->queues);
    d2h->link_socket.bind(link->dma_socket);
    d2h->memory_socket.bind(memory->socket);
    d2h->accept(copy(7, CommandKind::kDeviceToHost, 8192));
    sc_core::sc_start();
    nlohmann::json out;
    test::record_process_failure(out);
    for (const auto& e : recorder.events) out["events"][e.what] = e.at_ps / kNs;
    return out;
  });
  ASSERT_FALSE(r.contains("error")) << r["error"];
  EXPECT_EQ(r["events"]["copy_done 7"], 3524);
}

TEST(MemoryOrder, ARequestOutOfTimeOrderStopsTheRun) {
  const nlohmann::json r = run_in_child([] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    auto memory = std::make_unique<MemoryController>("memory", simple_memory(64.0, 100.0));
    auto initiator = std::make_unique<OutOfOrderInitiator>("early_bird");
    initiator->socket.bind(memory->socket);
    sc_core::sc_start();
    nlohmann::json out;
    out["transactions"] = memory->transactions();
    try {
      if (process_failure()) std::rethrow_exception(process_failure());
    } catch (const InvariantViolation& e) {
      out["error"] = e.what();
    }
    return out;
  });
  ASSERT_TRUE(r.contains("error"));
  const std::string error = r["error"];
  EXPECT_NE(error.find("arrives at 0 ns, before the previous request"), std::string::npos) << error;
  EXPECT_NE(error.find("early_bird"), std::string::npos) << error;
  EXPECT_EQ(r["transactions"], 1);
}

}  // namespace
}  // namespace gpumux
