#pragma once
// Tanasic 4.2's priority scenario, shared by the priority and waveform testbenches: a low-priority
// process fills every SM with long thread blocks (13 SMs x 8 TBs, 3 waves of 200 us); a second
// low-priority process queues another such kernel at 20 us; at 50 us a high-priority process launches
// a short kernel needing 2 SMs (launch index 2).

#include <string>
#include <utility>

#include "common/test_support.h"
#include "top/simulation.h"

namespace gpumux::test {

inline SimulationSpec priority_scenario(const std::string& policy, PreemptionMechanism mechanism,
                                        PolicyOptions options = {}) {
  auto long_kernel = kernel("long", 13 * 8 * 3, 200.0, 256, 8192);
  auto short_kernel = kernel("short", 16, 10.0, 256, 8192);
  SimulationSpec spec;
  spec.gpu = k20c();
  spec.policy = policy;
  spec.policy_options = std::move(options);
  spec.preemption = mechanism;
  spec.workload.name = "priority";
  spec.workload.tb_duration = TbDurationMode::kFixed;
  ProcessSpec low = process("low", {StreamSpec{{launch(long_kernel)}}});
  ProcessSpec queued = process("queued", {StreamSpec{{launch(long_kernel)}}}, 20.0);
  ProcessSpec high = process("high", {StreamSpec{{launch(short_kernel)}}}, 50.0);
  high.priority = 1;
  spec.workload.processes = {low, queued, high};
  return spec;
}

}  // namespace gpumux::test
