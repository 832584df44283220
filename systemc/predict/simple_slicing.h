#pragma once
// The Simple Slicing (SS) runtime predictor of Pai et al. (section 4): an online, per-SM, per-kernel
// predictor built on the staircase model (Eq. 1). Plain C++, usable by any policy and by trace
// replays (tb/validation/predictor_accuracy_test.cpp); no SystemC and no engine types beyond ids.
//
// State (Table 1), per SM per kernel, is updated by the four events of Algorithm 1: ONLAUNCH
// (on_launch), ONBLOCKSTART (on_block_start), ONBLOCKEND (on_block_end) and ONKERNELEND
// (on_kernel_end). At the end of every ONBLOCKEND that has a sample of t the prediction is Eq. 2:
//
//   Pred_Cycles = Active_Kernel_Cycles + (Total_Blocks - Done_Blocks) * t / Resident_Blocks
//
// A slice is a stretch of execution with constant t. A new slice (Reslice = true: the next sample
// replaces t) starts for a kernel on every SM when it is launched, for every running kernel when
// another kernel is launched or ends (Pai 4: "kernel launches and kernel endings mark the boundaries
// of slices for all running kernels"), and when its residency changes (3.4.3): a policy that changes
// a residency limit calls reslice(); the predictor itself reslices a kernel on an SM when a block
// start takes its residency there above Resident_Blocks (the kernel got room it did not have when t
// was sampled).
//
// Time unit: Pai counts core cycles; the predictor takes any monotonic integer clock. gpumux feeds
// it picoseconds of simulated time (TimePs), so every "cycles" quantity here is in ps (divide by
// the core period for cycles). Eq. 2 is evaluated in integers (floor of the division).
//
// Interpretation choices (Algorithm 1 as printed stops after line 13; see docs/validation.md):
//  - SampleRule::kFirstToEnd (default) is Algorithm 1 literally: the first block to end after the
//    slice began gives t, even if it started before. kFirstStartedInSlice waits for a block that
//    started inside the slice ("the duration of the first thread block of a slice").
//  - ResidencyRule::kObserved (default): a sample also sets Resident_Blocks to the kernel's blocks
//    resident on the SM when the sampled block ended (counting it), so Eq. 2 follows residency
//    limits and co-runners. kAtLaunch keeps ONLAUNCH's Kernel.Residency (R alone) throughout.
//  - Reslice is cleared by the prediction that uses the new sample (with kFirstStartedInSlice,
//    predictions before it keep the previous t).
//  - Total_Blocks_Done is kept per kernel (all SMs); Done_Blocks per SM.
//  - (Total_Blocks - Done_Blocks) is clamped at 0: an SM that ran more than its ceil(B / N_SM)
//    share predicts that the kernel ends now.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/types.h"

namespace gpumux {

/// Table 1: the state kept per kernel in each SM (plus what slicing and reports need).
struct SliceState {
  TimePs active_kernel_cycles = 0;    ///< Active_Kernel_Cycles: time with >= 1 resident block here
  std::uint32_t done_blocks = 0;      ///< Done_Blocks: blocks completed on this SM
  std::uint32_t total_blocks = 0;     ///< Total_Blocks: ceil(Kernel.Blocks / N_SM)
  std::uint32_t resident_blocks = 0;  ///< Resident_Blocks: the residency Eq. 2 divides by
  std::vector<TimePs> block_start;    ///< Block_Start[blkindex]; kNever marks a free slot
  TimePs t = 0;                       ///< t: duration of the slice's sampled block; 0 = none yet
  TimePs pred_cycles = 0;             ///< Pred_Cycles (valid when has_prediction)
  bool reslice = true;                ///< Reslice: the next sample starts a new slice

  // Beyond Table 1.
  bool has_prediction = false;
  bool own_sample = false;           ///< t was sampled on this SM (false: none, or copied from another)
  std::uint32_t running = 0;         ///< blocks of this kernel resident on this SM now
  TimePs last_event = 0;             ///< time Active_Kernel_Cycles was last brought up to date
  TimePs slice_start = 0;            ///< when the current slice began
  std::uint32_t slices = 1;          ///< slices begun on this SM (launch starts the first)
  TimePs remaining = 0;              ///< (Total_Blocks - Done_Blocks) * t / Resident_Blocks at Pred_Cycles
  TimePs first_prediction = 0;       ///< slice-unaware: the first prediction made from an own sample
  TimePs last_slice_prediction = 0;  ///< slice-aware: the prediction made at the latest own sample
  std::uint32_t samples = 0;         ///< own samples taken
};

/// Eq. 2's remaining term, (Total_Blocks - Done_Blocks) * t / residency, clamped at 0 blocks.
[[nodiscard]] TimePs eq2_remaining(const SliceState& s, std::uint32_t residency);

class SimpleSlicingPredictor {
 public:
  enum class SampleRule : std::uint8_t { kFirstToEnd, kFirstStartedInSlice };
  enum class ResidencyRule : std::uint8_t { kObserved, kAtLaunch };
  struct Options {
    SampleRule sample = SampleRule::kFirstToEnd;
    ResidencyRule residency = ResidencyRule::kObserved;
    bool record = false;  ///< keep a Record per SM of every finished kernel (accuracy reports)
  };
  /// One finished kernel on one SM, for predicted-over-actual reports (Pai Fig. 11).
  struct Record {
    KernelId kernel{};
    SmId sm{};
    TimePs slice_unaware = 0;  ///< the first prediction on this SM (made once, at the beginning)
    TimePs slice_aware = 0;    ///< the prediction made at the sample of the last slice sampled
    TimePs actual = 0;         ///< Active_Kernel_Cycles when the kernel ended
    std::uint32_t slices = 0;
    std::uint32_t samples = 0;
  };

  /// `block_slots`: most blocks of one kernel resident on an SM (Block_Start[] size; 8 on Fermi).
  SimpleSlicingPredictor(std::uint32_t num_sms, std::uint32_t block_slots, Options options);
  SimpleSlicingPredictor(std::uint32_t num_sms, std::uint32_t block_slots)
      : SimpleSlicingPredictor(num_sms, block_slots, Options{}) {}

  /// ONLAUNCH on every SM: Total_Blocks = ceil(blocks / N_SM), Resident_Blocks = residency (R alone),
  /// Reslice. Also starts a new slice for every other running kernel. Launching a known kernel again
  /// is ignored.
  void on_launch(KernelId kernel, std::uint32_t blocks, std::uint32_t residency, TimePs now);
  /// ONBLOCKSTART: Block_Start[blkindex] = now; returns blkindex.
  std::uint32_t on_block_start(SmId sm, KernelId kernel, TimePs now);
  /// ONBLOCKEND for the block in slot `blkindex`, then Eq. 2.
  void on_block_end(SmId sm, KernelId kernel, std::uint32_t blkindex, TimePs now);
  /// ONBLOCKEND for the block that started at `start` (the slot whose Block_Start equals it; when
  /// none does, e.g. the block started before the predictor saw the kernel, t = now - start).
  void on_block_end_started_at(SmId sm, KernelId kernel, TimePs start, TimePs now);
  /// ONKERNELEND: forgets the kernel (records it if asked) and starts a new slice for every other
  /// running kernel.
  void on_kernel_end(KernelId kernel, TimePs now);
  /// A new slice for `kernel` on `sm` (its residency or its co-runners changed).
  void reslice(SmId sm, KernelId kernel, TimePs now);
  /// A new slice for every known kernel on every SM.
  void reslice_all(TimePs now);
  /// SRTF (Pai 5.1.1): copy the sample of `kernel` taken on `from` (t and Resident_Blocks) to every
  /// SM that has no sample of its own, as their initial prediction. Their own first sample, when it
  /// comes, replaces it.
  void copy_sample(KernelId kernel, SmId from, TimePs now);

  [[nodiscard]] bool knows(KernelId kernel) const { return find(kernel) != nullptr; }
  /// nullptr when the kernel is unknown (never launched, or ended).
  [[nodiscard]] const SliceState* state(SmId sm, KernelId kernel) const;
  /// Pred_Cycles - Active_Kernel_Cycles as of the latest prediction on `sm`; nullopt before one.
  [[nodiscard]] std::optional<TimePs> remaining(SmId sm, KernelId kernel) const;
  /// True once any SM has sampled t for the kernel.
  [[nodiscard]] bool sampled(KernelId kernel) const;
  [[nodiscard]] std::uint32_t num_sms() const { return num_sms_; }
  /// Blocks of the kernel completed on all SMs (Total_Blocks_Done).
  [[nodiscard]] std::uint32_t total_blocks_done(KernelId kernel) const;
  /// Means over the SMs that have a prediction for the kernel (kept up to date incrementally, O(1)).
  struct Summary {
    std::uint32_t predicted_sms = 0;
    double blocks_left = 0;  ///< mean of max(0, Total_Blocks - Done_Blocks)
    double t = 0;            ///< mean t
  };
  /// nullopt when no SM has a prediction for the kernel.
  [[nodiscard]] std::optional<Summary> summary(KernelId kernel) const;
  [[nodiscard]] const std::vector<Record>& records() const { return records_; }

 private:
  struct KernelEntry {
    std::uint32_t blocks = 0;
    std::uint32_t residency = 0;
    std::uint32_t total_blocks_done = 0;
    bool sampled = false;
    std::vector<SliceState> sms;
    // Sums over the SMs with a prediction (Summary).
    std::uint64_t sum_left = 0;
    std::uint64_t sum_t = 0;
    std::uint32_t predicted_sms = 0;
  };
  static void remove_from_summary(KernelEntry& e, const SliceState& s);
  static void add_to_summary(KernelEntry& e, const SliceState& s);
  KernelEntry& entry(KernelId kernel);
  [[nodiscard]] KernelEntry* find(KernelId kernel);
  [[nodiscard]] const KernelEntry* find(KernelId kernel) const;
  void bring_up_to_date(SliceState& s, TimePs now) const;
  void start_slice(SliceState& s, TimePs now) const;
  void end_block(SmId sm, KernelId kernel, KernelEntry& e, std::optional<std::uint32_t> slot, TimePs start,
                 TimePs now);
  static void predict(SliceState& s);

  std::uint32_t num_sms_;
  std::uint32_t block_slots_;
  Options options_;
  /// By launch index (kernel ids are dense); null once a kernel ended. live_ lists the known ones.
  std::vector<std::unique_ptr<KernelEntry>> kernels_;
  std::vector<KernelId> live_;
  std::vector<Record> records_;
};

}  // namespace gpumux
