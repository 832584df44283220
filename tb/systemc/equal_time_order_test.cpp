// The equal-time order (core/equal_time_order.h): processes that act at one instant where others are
// active take turns lowest rank first, after every other process's activity at the instant (its delta
// cycles too), whatever order SystemC woke them in; a process alone at its instant acts at once; a turn
// lasts until its holder waits.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "common/test_support.h"
#include "core/equal_time_order.h"
#include "core/processes.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

/// Three turn-takers (ranks 2, 0, 1) that act at 10 ns, spawned in `spawn_order`; one of them acts
/// twice in its turn. A process without a turn wakes at 10 ns too and acts over two delta cycles. A
/// fourth turn-taker acts alone at 20 ns.
nlohmann::json run_turns(const std::vector<int>& spawn_order) {
  return run_in_child([spawn_order] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    nlohmann::json log = nlohmann::json::array();
    auto order = std::make_unique<EqualTimeOrder>("order");
    const std::vector<std::uint64_t> ranks = {2, 0, 1};
    std::vector<std::unique_ptr<EqualTimeTurn>> turns;
    for (const std::uint64_t rank : ranks) {
      turns.push_back(std::make_unique<EqualTimeTurn>());
      turns.back()->attach(*order, rank);
    }
    for (const int i : spawn_order) {
      spawn_thread(nullptr, [&log, &turns, i, rank = ranks[static_cast<std::size_t>(i)]] {
        sc_core::wait(10, sc_core::SC_NS);
        EqualTimeTurn& turn = *turns[static_cast<std::size_t>(i)];
        turn.take();
        log.push_back("rank " + std::to_string(rank));
        if (rank == 1) {
          turn.take();  // still its turn: it has not waited
          log.push_back("rank 1 again, held " + std::string(turn.held() ? "yes" : "no"));
        }
      });
    }
    spawn_thread("other", [&log] {
      sc_core::wait(10, sc_core::SC_NS);
      log.push_back("other");
      sc_core::wait(sc_core::SC_ZERO_TIME);
      log.push_back("other, a delta cycle later");
    });
    EqualTimeTurn lone;
    lone.attach(*order, 5);
    std::uint64_t waited_before_lone = 0;
    bool lone_acted_in_its_wake_delta = false;
    spawn_thread("lone", [&] {
      sc_core::wait(20, sc_core::SC_NS);
      waited_before_lone = order->waited();
      const std::uint64_t delta = sc_core::sc_delta_count();
      lone.take();
      lone_acted_in_its_wake_delta = sc_core::sc_delta_count() == delta;
    });
    sc_core::sc_start();
    nlohmann::json out;
    test::record_process_failure(out);
    out["log"] = log;
    out["waited"] = order->waited();
    out["waited_before_lone"] = waited_before_lone;
    out["lone_at_once"] = lone_acted_in_its_wake_delta;
    return out;
  });
}

TEST(EqualTimeOrder, TurnsGoByRankAfterOtherActivityWhateverOrderSystemCWokeThemIn) {
  const nlohmann::json expected = nlohmann::json::array(
      {"other", "other, a delta cycle later", "rank 0", "rank 1", "rank 1 again, held yes", "rank 2"});
  std::vector<int> spawn_order = {0, 1, 2};
  do {
    const nlohmann::json out = run_turns(spawn_order);
    ASSERT_FALSE(out.contains("failure")) << out.dump();
    EXPECT_EQ(out.at("log"), expected)
        << "spawned in order " << spawn_order[0] << spawn_order[1] << spawn_order[2];
    // The lone turn-taker at 20 ns did not wait, and acted in the delta cycle it woke in.
    EXPECT_EQ(out.at("waited"), out.at("waited_before_lone"));
    EXPECT_TRUE(out.at("lone_at_once").get<bool>());
  } while (std::next_permutation(spawn_order.begin(), spawn_order.end()));
}

TEST(EqualTimeOrder, AnUnattachedTurnNeverWaits) {
  const nlohmann::json out = run_in_child([] {
    nlohmann::json result;
    EqualTimeTurn turn;
    bool same_delta = false;
    spawn_thread("a", [] { sc_core::wait(10, sc_core::SC_NS); });
    spawn_thread("b", [&] {
      sc_core::wait(10, sc_core::SC_NS);
      const std::uint64_t delta = sc_core::sc_delta_count();
      turn.take();
      same_delta = sc_core::sc_delta_count() == delta && turn.held();
    });
    sc_core::sc_start();
    test::record_process_failure(result);
    result["same_delta"] = same_delta;
    return result;
  });
  ASSERT_FALSE(out.contains("failure")) << out.dump();
  EXPECT_TRUE(out.at("same_delta").get<bool>());
}

}  // namespace
}  // namespace gpumux
