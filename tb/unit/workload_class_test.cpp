// Workload classes C-strong, C-weak and MEM (Awatramani 4.3.1.2) from Perf-Sat's samples
// (metrics/workload_class.h): the rule's branches, its median and its refusals.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "metrics/workload_class.h"

namespace gpumux {
namespace {

ClassSm sm_at(std::uint32_t detected, bool settled, std::vector<ClassSample> samples) {
  ClassSm sm;
  sm.detected = detected;
  sm.settled = settled;
  sm.samples = std::move(samples);
  return sm;
}

TEST(WorkloadClass, DetectedAtNmaxIsCStrong) {
  const WorkloadClass c = classify_workload(6, {sm_at(6, true, {{6, 600, 1000}}), sm_at(5, false, {})});
  EXPECT_EQ(c.name, "C-strong");
  EXPECT_EQ(c.detected, 6U);  // the SM that did not settle does not count
}

TEST(WorkloadClass, BelowNmaxIsMemWhenOneBlockMoreLosesOverTwoPercentElseCWeak) {
  // Detected 4 on every SM; IPC 0.500 at 4 blocks.
  const auto at = [](std::uint64_t instructions_at_5) {
    return classify_workload(6, {sm_at(4, true, {{4, 500, 1000}, {5, instructions_at_5, 1000}}),
                                 sm_at(4, true, {{4, 500, 1000}})});
  };
  EXPECT_EQ(at(485).name, "MEM");     // 3% below
  EXPECT_EQ(at(491).name, "C-weak");  // 1.8% below
  EXPECT_EQ(at(520).name, "C-weak");  // better, but Perf-Sat rejected it on its stalls
  EXPECT_DOUBLE_EQ(at(485).ipc_at_detected, 0.5);
  EXPECT_DOUBLE_EQ(at(485).ipc_above, 0.485);
}

TEST(WorkloadClass, TheLowerMedianOfTheSettledSmsAndNoClassWithoutOne) {
  const WorkloadClass c =
      classify_workload(8, {sm_at(3, true, {{3, 30, 100}, {4, 10, 100}}), sm_at(5, true, {}),
                            sm_at(8, true, {}), sm_at(4, true, {{4, 10, 100}})});
  EXPECT_EQ(c.detected, 4U);  // of 3, 4, 5, 8
  EXPECT_EQ(c.name, "");      // no sample at 5
  EXPECT_NE(c.reason.find("5 thread blocks"), std::string::npos) << c.reason;
  EXPECT_EQ(classify_workload(8, {sm_at(4, false, {})}).name, "");
  EXPECT_EQ(classify_workload(8, {}).reason, "Perf-Sat did not run for it");
}

}  // namespace
}  // namespace gpumux
