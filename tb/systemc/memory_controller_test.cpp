// The memory controller's bandwidth model, driven by TLM-2.0 initiators streaming 4 KB bursts.

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <systemc>
#include <tlm>

#include "core/processes.h"
#include "core/tlm_quantum.h"
#include "mem/memory_controller.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

/// Streams `bytes` as 4 KB writes, one burst per `pace_ps`, keeping its local time in a quantum keeper
/// and sending each burst at its own time (core/tlm_quantum.h), like the DMA engine.
class StreamingInitiator final : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<StreamingInitiator> socket;

  StreamingInitiator(const sc_core::sc_module_name& name, std::uint64_t bytes, TimePs pace_ps)
      : sc_core::sc_module(name), socket("socket"), bytes_(bytes), pace_ps_(pace_ps) {
    spawn_thread("run", [this] { run(); });
  }
  TimePs done_ps = 0;

 private:
  void run() {
    std::vector<unsigned char> data(4096);
    tlm::tlm_generic_payload p;
    p.set_command(tlm::TLM_WRITE_COMMAND);
    p.set_data_ptr(data.data());
    p.set_data_length(4096);
    p.set_streaming_width(4096);
    tlm_utils::tlm_quantumkeeper keeper;
    keeper.reset();
    TimePs issue = 0;
    TimePs last = 0;
    for (std::uint64_t sent = 0; sent < bytes_; sent += 4096) {
      advance_to(keeper, issue);
      sc_core::sc_time delay = keeper.get_local_time();
      socket->b_transport(p, delay);
      last = std::max<TimePs>(last, sc_core::sc_time_stamp().value() + delay.value());
      issue += pace_ps_;
    }
    advance_to(keeper, last);
    done_ps = sc_core::sc_time_stamp().value();
  }
  std::uint64_t bytes_;
  TimePs pace_ps_;
};

nlohmann::json stream(std::uint32_t initiators, std::uint64_t bytes_each, double gb_per_s) {
  return run_in_child([=] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    set_global_quantum();
    auto mc = std::make_unique<MemoryController>("mc", simple_memory(gb_per_s, 400));
    const auto pace = static_cast<TimePs>(4096.0 / (gb_per_s * 1e9) * 1e12);
    std::vector<std::unique_ptr<StreamingInitiator>> list;
    for (std::uint32_t i = 0; i < initiators; ++i) {
      list.push_back(
          std::make_unique<StreamingInitiator>(("init" + std::to_string(i)).c_str(), bytes_each, pace));
      list.back()->socket.bind(mc->socket);
    }
    sc_core::sc_start();
    nlohmann::json out;
    for (const auto& init : list) out["done_ps"].push_back(init->done_ps);
    out["bytes_by_initiator"] = mc->bytes_by_initiator();
    out["busy_ps"] = mc->channel().busy_ps();
    return out;
  });
}

TEST(MemoryController, LongTransferAchievesConfiguredBandwidth) {
  const std::uint64_t bytes = 64ULL << 20;
  const nlohmann::json r = stream(1, bytes, 208.0);
  const double seconds = r["done_ps"][0].get<double>() / 1e12;
  const double achieved = static_cast<double>(bytes) / seconds / 1e9;
  std::printf("one initiator, 64 MiB: %.2f GB/s of 208 configured\n", achieved);
  EXPECT_NEAR(achieved, 208.0, 208.0 * 0.02) << "achieved " << achieved << " GB/s";
}

TEST(MemoryController, TwoInitiatorsShareTheBandwidth) {
  const std::uint64_t bytes = 32ULL << 20;
  const nlohmann::json r = stream(2, bytes, 208.0);
  const double a = r["done_ps"][0].get<double>();
  const double b = r["done_ps"][1].get<double>();
  const double total_seconds = std::max(a, b) / 1e12;
  std::printf("two initiators, 32 MiB each: %.2f GB/s together, finish times %.1f us and %.1f us\n",
              2.0 * static_cast<double>(bytes) / total_seconds / 1e9, a / 1e6, b / 1e6);
  // Together they move 64 MiB at the configured bandwidth ...
  EXPECT_NEAR(2.0 * static_cast<double>(bytes) / total_seconds / 1e9, 208.0, 208.0 * 0.02);
  // ... and interleave: neither finishes first at full speed while the other waits.
  EXPECT_NEAR(a / b, 1.0, 0.02);
  EXPECT_EQ(r["bytes_by_initiator"][0].get<std::uint64_t>(), bytes);
  EXPECT_EQ(r["bytes_by_initiator"][1].get<std::uint64_t>(), bytes);
}

}  // namespace
}  // namespace gpumux
