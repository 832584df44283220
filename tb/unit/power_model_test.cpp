// The power and energy model (metrics/power_model.h): static energy per SM not gated, the uncore's, dynamic
// energy per warp instruction class and per DRAM bit, against figures worked out by hand.

#include <gtest/gtest.h>

#include <vector>

#include "metrics/power_model.h"

namespace gpumux {
namespace {

PowerConfig round_figures() {
  PowerConfig c;
  c.enabled = true;
  c.core_static_w = 2.0;
  c.uncore_static_w = 10.0;
  c.alu_nj = 1.0;
  c.sfu_nj = 2.0;
  c.shared_nj = 3.0;
  c.global_nj = 4.0;
  c.dram_pj_per_bit = 5.0;
  return c;
}

TEST(PowerModel, EnergyByHand) {
  const TimePs end = 1'000'000'000;  // 1 ms
  std::vector<SmPowerInput> sms(2);
  sms[0] = {0, 0, {1000, 100, 10, 1}};
  sms[1] = {1, 250'000'000, {0, 0, 0, 0}};  // gated a quarter of the run
  const PowerReport r = power_report(round_figures(), end, sms, 1000);
  ASSERT_TRUE(r.enabled);
  ASSERT_EQ(r.sms.size(), 2U);
  EXPECT_DOUBLE_EQ(r.time_ns, 1e6);
  EXPECT_DOUBLE_EQ(r.sms[0].static_j, 2.0e-3);  // 2 W x 1 ms
  EXPECT_DOUBLE_EQ(r.sms[1].static_j, 1.5e-3);  // 2 W x 0.75 ms
  EXPECT_DOUBLE_EQ(r.sms[1].gated_ns, 2.5e5);
  EXPECT_DOUBLE_EQ(r.sms[0].dynamic_j, 1.234e-6);  // (1000 + 200 + 30 + 4) nJ
  EXPECT_DOUBLE_EQ(r.sms[1].dynamic_j, 0.0);
  EXPECT_DOUBLE_EQ(r.uncore_static_j, 1.0e-2);  // 10 W x 1 ms
  EXPECT_DOUBLE_EQ(r.dram_j, 4.0e-8);           // 8000 bits x 5 pJ
  EXPECT_DOUBLE_EQ(r.static_j, 3.5e-3 + 1.0e-2);
  EXPECT_DOUBLE_EQ(r.total_j, r.static_j + r.sm_dynamic_j + r.dram_j);
  EXPECT_DOUBLE_EQ(r.average_w, r.total_j / 1e-3);
}

TEST(PowerModel, GatingLowersOnlyStaticEnergy) {
  const TimePs end = 2'000'000;
  std::vector<SmPowerInput> on = {{0, 0, {50, 5, 5, 5}}, {1, 0, {50, 5, 5, 5}}};
  std::vector<SmPowerInput> gated = on;
  gated[1].gated_ps = end;  // gated the whole run
  const PowerReport a = power_report(round_figures(), end, on, 64);
  const PowerReport b = power_report(round_figures(), end, gated, 64);
  EXPECT_DOUBLE_EQ(b.sm_dynamic_j, a.sm_dynamic_j);
  EXPECT_DOUBLE_EQ(b.dram_j, a.dram_j);
  EXPECT_DOUBLE_EQ(b.core_static_j, a.core_static_j / 2);
  EXPECT_LT(b.average_w, a.average_w);
  EXPECT_DOUBLE_EQ(power_report(round_figures(), 0, on, 0).average_w, 0.0);  // an empty run: no division by 0
}

}  // namespace
}  // namespace gpumux
