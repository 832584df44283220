#pragma once
// `gpumux run --phase-trace FILE` (warp-level SMs): warps per phase over time, GPU-wide, per kernel
// launch, with the ALU results and global loads in flight (Awatramani Figs. 3.4-3.5, top and bottom
// plots). The file format is in docs/user-guide.md "Warps per phase over time".
//
// Sampling schedules nothing. A sample is taken every `interval` core cycles, at the start of cycles
// 0, N, 2N, ...: it is the state left by everything that happened before that cycle began. The SMs
// change their warps only inside their own entry points (an activation, a thread block started, a
// context save or restore); each calls catch_up(now) first, which records every sample due at or
// before now by scanning the SMs, whose state has not changed since the sample's time. So the trace
// adds no SystemC event or process, cannot reorder the simulation's events, and a run with it
// produces the same statistics as one without. Without the option the SMs hold a null pointer and
// pay one test per activation.
//
// The file is streamed: a header, one line per sample, then the kernel launches (names, processes,
// phase counts) once the run has ended.

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "core/types.h"
#include "sm/warp/core_clock.h"

namespace gpumux {

class WarpSm;

/// What one sample counts, summed over the SMs (WarpSm::add_phase_counts).
struct PhaseSample {
  /// [kernel launch index][phase]: warps whose next instruction is in that phase (active warps only:
  /// not finished, not being restored, not stopped by a context save).
  std::vector<std::vector<std::uint32_t>> warps;
  std::vector<std::size_t> present;   ///< the kernels with a warp counted, in the order first counted
  std::uint64_t alu_in_flight = 0;    ///< ALU, SFU and shared-load results not yet written
  std::uint64_t loads_in_flight = 0;  ///< global loads whose data has not returned

  /// One more warp of `kernel` in `phase` (of `phases`).
  void add_warp(std::size_t kernel, std::uint32_t phase, std::size_t phases);
  /// Back to no warp counted (touches only the kernels counted: a run may have many launches).
  void clear();
};

/// A kernel launch as the trace's "kernels" list names it.
struct PhaseTraceKernel {
  std::string name;
  std::uint32_t process = 0;
  std::size_t phases = 0;
};

class PhaseTrace {
 public:
  /// Smallest and largest --phase-trace-interval, in core cycles.
  static constexpr std::uint64_t kMinInterval = 1;
  static constexpr std::uint64_t kMaxInterval = 1'000'000'000;

  /// Opens `path` and writes the header. InputError when it cannot be written.
  PhaseTrace(const std::string& path, double core_clock_mhz, std::uint64_t interval_cycles,
             std::uint32_t num_sms, std::uint32_t max_warps_per_sm, const std::string& warp_scheduler);

  void add_sm(const WarpSm* sm) { sms_.push_back(sm); }

  /// Called by an SM before it changes its warps at time `now`: records every sample due at or
  /// before `now`.
  void catch_up(TimePs now) {
    if (now >= next_ps_) record_until(now);
  }

  /// After the run: records the samples up to `end_ps`, lists the kernel launches (indexed by
  /// KernelId) and closes the file. InputError when the file could not be written.
  void finish(TimePs end_ps, const std::vector<PhaseTraceKernel>& kernels);

  [[nodiscard]] std::uint64_t samples() const { return samples_; }

 private:
  void record_until(TimePs now);
  void record(std::uint64_t cycle);

  std::string path_;
  std::ofstream out_;
  CoreClock clock_;
  std::uint64_t interval_;
  std::vector<const WarpSm*> sms_;
  std::uint64_t next_cycle_ = 0;  ///< the next sample's cycle
  TimePs next_ps_ = 0;            ///< and its time
  std::uint64_t samples_ = 0;
  PhaseSample sample_;  ///< reused: no allocation per sample once warm
};

}  // namespace gpumux
