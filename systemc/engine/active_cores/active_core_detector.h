#pragma once
// Detectors of a kernel's optimal number of active cores (Awatramani 4.4): the number of SMs beyond which
// its IPC no longer rises, so that the others can be power gated. A detector sees the kernel's IPC
// sampled over a sampling period at the core counts it asks for (4.4.2.4: the SM work manager pauses and
// un-pauses cores, the active ones sample) and answers with the count to sample next, until it has
// detected the optimal count. Plain C++: the SM driver owns the pausing, the sampling and the gating.

#include <cstdint>
#include <string>
#include <vector>

namespace gpumux {

/// One IPC sample the detector was given: the kernel's instructions per cycle (whole GPU) with
/// `active_cores` cores active.
struct CoreCountSample {
  std::uint32_t active_cores = 0;
  double ipc = 0;
};

/// What the detector wants next.
struct ActiveCoreDecision {
  std::uint32_t active_cores = 0;  ///< cores to run (and sample, unless detected) next
  bool detected = false;           ///< active_cores is the optimal count: stop sampling, gate the rest
};

class ActiveCoreDetector {
 public:
  virtual ~ActiveCoreDetector() = default;
  /// The kernel starts on a GPU of `cores` cores: the first count to sample (all of them, 4.4.2.2: the
  /// IPC with every core active is the kernel's maximum).
  [[nodiscard]] virtual ActiveCoreDecision start(std::uint32_t cores) = 0;
  /// The IPC sampled at the count last asked for. Not called once detected.
  [[nodiscard]] virtual ActiveCoreDecision on_sample(double ipc) = 0;
  /// Every sample so far, in order.
  [[nodiscard]] const std::vector<CoreCountSample>& samples() const { return samples_; }
  [[nodiscard]] virtual std::string name() const = 0;

 protected:
  std::vector<CoreCountSample> samples_;
};

/// The performance threshold both detectors use (4.4.1.1: a kernel's performance is saturated at a
/// core count whose IPC is within `tolerance` of its IPC with every core, 2% in the thesis).
[[nodiscard]] inline double ipc_threshold(double ipc_all, double tolerance) {
  return ipc_all * (1.0 - tolerance);
}

}  // namespace gpumux
