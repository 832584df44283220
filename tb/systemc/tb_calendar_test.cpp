// Issue 20: the TB-level SMs' completion calendar (sm/tb/tb_calendar.h). Fake SMs record when and in
// which order the calendar calls them; another process has activity at chosen instants. Checked: SMs due
// at one instant are called in slot order; another process's activity at that instant (all its delta
// cycles) comes first; an instant with nothing else pending before it is handled ahead of SystemC's
// clock (now() ahead of sc_time_stamp()) and sync() brings the clock to it; running ahead or not gives
// the same calls at the same times.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "common/test_support.h"
#include "core/processes.h"
#include "core/rng.h"
#include "sm/tb/tb_calendar.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

constexpr TimePs kNs = 1000;

/// A fake SM: completes at the times in `plan`, one after another, and records each call.
class FakeSm final : public TbCalendarClient {
 public:
  FakeSm(TbCalendar& calendar, std::string name, std::vector<TimePs> plan, nlohmann::json& log)
      : calendar_(calendar), name_(std::move(name)), plan_(std::move(plan)), log_(log) {
    slot_ = calendar_.add(*this);
  }
  void start() {
    if (!plan_.empty()) calendar_.schedule(slot_, plan_.front());
  }
  void complete_due(TimePs now) override {
    const TimePs sc_now = sc_core::sc_time_stamp().value();
    log_.push_back({{"sm", name_}, {"now_ns", now / kNs}, {"ahead", sc_now < now}});
    calendar_.sync();
    log_.back()["synced"] = sc_core::sc_time_stamp().value() == now;
    ++next_;
    if (next_ < plan_.size()) calendar_.schedule(slot_, plan_[next_]);
  }

 private:
  TbCalendar& calendar_;
  std::string name_;
  std::vector<TimePs> plan_;
  nlohmann::json& log_;
  std::uint32_t slot_ = 0;
  std::size_t next_ = 0;
};

/// Three fake SMs (completing at 10, 20, 30 ns; 20, 40 ns; 20 ns) and a process that logs at 20 ns and
/// again one delta cycle later, and at 35 ns.
nlohmann::json run_calendar(bool run_ahead) {
  return run_in_child([run_ahead] {
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    nlohmann::json log = nlohmann::json::array();
    auto calendar = std::make_unique<TbCalendar>("calendar", run_ahead);
    FakeSm a(*calendar, "a", {10 * kNs, 20 * kNs, 30 * kNs}, log);
    FakeSm b(*calendar, "b", {20 * kNs, 40 * kNs}, log);
    FakeSm c(*calendar, "c", {20 * kNs}, log);
    a.start();
    c.start();  // out of slot order: c before b
    b.start();
    spawn_thread("other", [&log] {
      sc_core::wait(20, sc_core::SC_NS);
      log.push_back({{"sm", "other"}, {"now_ns", sc_core::sc_time_stamp().value() / kNs}});
      sc_core::wait(sc_core::SC_ZERO_TIME);
      log.push_back({{"sm", "other-delta"}, {"now_ns", sc_core::sc_time_stamp().value() / kNs}});
      sc_core::wait(15, sc_core::SC_NS);
      log.push_back({{"sm", "other"}, {"now_ns", sc_core::sc_time_stamp().value() / kNs}});
    });
    sc_core::sc_start();
    nlohmann::json out;
    test::record_process_failure(out);
    out["log"] = log;
    out["ahead"] = calendar->instants_ahead();
    out["in_step"] = calendar->instants_waited();
    return out;
  });
}

/// The log without the "ahead" flags (which differ by design).
std::vector<std::string> calls(const nlohmann::json& out) {
  std::vector<std::string> seen;
  for (const auto& e : out.at("log")) {
    seen.push_back(e.at("sm").get<std::string>() + "@" + std::to_string(e.at("now_ns").get<TimePs>()));
  }
  return seen;
}

TEST(TbCalendar, OrdersAnInstantByOtherActivityThenSlotAndRunsAheadOnlyWhenAlone) {
  const nlohmann::json ahead = run_calendar(true);
  const nlohmann::json in_step = run_calendar(false);
  ASSERT_FALSE(ahead.contains("error")) << ahead.dump();
  ASSERT_FALSE(in_step.contains("error")) << in_step.dump();
  // 10: a alone. 20: the other process and its delta cycle first, then a, b, c in slot order. 30: a. 35:
  // the other process. 40: b.
  const std::vector<std::string> expected = {"a@10", "other@20", "other-delta@20", "a@20", "b@20",
                                             "c@20", "a@30",     "other@35",       "b@40"};
  EXPECT_EQ(calls(ahead), expected);
  EXPECT_EQ(calls(in_step), expected);
  // Running ahead: 20 ns is not handled ahead (the other process is there too); 30 ns is (the other
  // process's next activity is at 35 ns); 40 ns is not (the calendar, deciding at 20 ns, saw the other
  // process pending at 35 ns before it, so it waited). 10 ns depends on whether the other process has
  // reached its first wait when the calendar first looks, which is the order SystemC starts processes in.
  for (const auto& e : ahead.at("log")) {
    if (!e.contains("ahead")) continue;
    const auto at = e.at("now_ns").get<TimePs>();
    if (at != 10) {
      EXPECT_EQ(e.at("ahead").get<bool>(), at == 30) << e.dump();
    }
    EXPECT_TRUE(e.at("synced").get<bool>()) << e.dump();
  }
  EXPECT_GE(ahead.at("ahead").get<int>(), 1);
  EXPECT_EQ(in_step.at("ahead").get<int>(), 0);
  EXPECT_EQ(in_step.at("in_step").get<int>(), 4);
}

/// `sms` fake SMs, each completing at `per_sm` times from about `base` on, drawn a few nanoseconds
/// apart so that many SMs share an instant: the calls must come in (time, slot) order, every planned
/// completion once, running ahead or not.
void expect_time_then_slot_order(std::uint32_t sms, std::size_t per_sm, TimePs base) {
  std::vector<std::vector<TimePs>> plans(sms);
  std::vector<std::string> expected;
  {
    Rng rng(7, 0);
    std::vector<std::pair<TimePs, std::uint32_t>> all;
    for (std::uint32_t s = 0; s < sms; ++s) {
      TimePs at = base + rng.below(8) * kNs;
      for (std::size_t k = 0; k < per_sm; ++k) {
        at += (1 + rng.below(4)) * kNs;  // 1 to 4 ns apart: ties between SMs are common
        plans[s].push_back(at);
        all.emplace_back(at, s);
      }
    }
    std::sort(all.begin(), all.end());
    for (const auto& [at, s] : all) {
      expected.push_back("s" + std::to_string(s) + "@" + std::to_string(at / kNs));
    }
  }
  for (const bool run_ahead : {true, false}) {
    const nlohmann::json out = run_in_child([run_ahead, &plans] {
      sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
      nlohmann::json log = nlohmann::json::array();
      auto calendar = std::make_unique<TbCalendar>("calendar", run_ahead);
      std::vector<std::unique_ptr<FakeSm>> fakes;
      for (std::uint32_t s = 0; s < plans.size(); ++s) {
        fakes.push_back(std::make_unique<FakeSm>(*calendar, "s" + std::to_string(s), plans[s], log));
      }
      // Started in reverse slot order: the order of schedule() calls must not matter.
      for (auto it = fakes.rbegin(); it != fakes.rend(); ++it) {
        (*it)->start();
      }
      sc_core::sc_start();
      nlohmann::json result;
      test::record_process_failure(result);
      result["log"] = log;
      return result;
    });
    ASSERT_FALSE(out.contains("error")) << out.dump();
    EXPECT_EQ(calls(out), expected) << sms << " SMs from " << base << " ps, run_ahead " << run_ahead;
  }
}

/// 13 SMs (a tree of 13 leaves, not a power of two) from time 0.
TEST(TbCalendar, CallsEverySmInTimeThenSlotOrderAcrossManySms) { expect_time_then_slot_order(13, 40, 0); }

/// 200 SMs (8 bits of slot in a narrow key) whose completions cross the latest due time a narrow key
/// holds, 2^56 - 2 ps: some SMs are first scheduled beyond it, others reach it while the calendar runs,
/// and the calendar moves to wide keys without changing the order.
TEST(TbCalendar, KeepsTheOrderWhenDueTimesOutgrowNarrowKeys) {
  constexpr TimePs kNarrowLimit = (TimePs{1} << 56U) - 2;
  expect_time_then_slot_order(200, 12, kNarrowLimit - 30 * kNs);
  expect_time_then_slot_order(200, 12, kNarrowLimit - 5 * kNs);
}

}  // namespace
}  // namespace gpumux
