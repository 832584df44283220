#pragma once
// What the SMs and the memory controller did, stretch by stretch, kept for the debugging outputs
// that are written once a run has ended: the Perfetto timeline (metrics/timeline.h) and the waveform
// (wave/waveform.h). Only collected when one of them is asked for.

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "engine/sm_driver.h"
#include "mem/memory_target.h"
#include "sm/sm_model.h"

namespace gpumux {

class ActivityLog final : public TbTraceSink, public WarpActivitySink {
 public:
  /// One stretch a thread block was resident, with its run number and the end of its context restore.
  struct Stretch {
    TbStretch what;
    std::uint32_t run = 1;   ///< 1 for the first stretch of the thread block, 2 after its first resume, ...
    TimePs restored_ps = 0;  ///< end of its context restore (= what.start_ps: not resumed)
  };
  struct Interval {
    std::uint32_t sm = 0;
    TimePs start_ps = 0;
    TimePs end_ps = 0;
  };
  /// A KSRT entry (Tanasic 3.3) taken by a kernel entering the active queue, or freed.
  struct KsrtChange {
    std::uint32_t slot = 0;
    TimePs time_ps = 0;
    std::optional<KernelId> kernel;  ///< none: freed
    std::optional<KsrtState> state;  ///< set: a state change of the entry's kernel (kernel unchanged)
  };
  /// The policy's token count of a table entry (DSS, Tanasic 3.4); none: the entry is empty.
  struct TokenChange {
    std::uint32_t slot = 0;
    TimePs time_ps = 0;
    std::optional<std::int32_t> tokens;
  };
  /// An SMST entry (Tanasic 3.3) as the SM driver changed it.
  struct SmstChange {
    std::uint32_t sm = 0;
    TimePs time_ps = 0;
    SmState state = SmState::kIdle;
    std::optional<KernelId> kernel;
    std::optional<KernelId> next;
  };
  /// A warp-level SM's active warps and the instructions it issued in its latest cycle, from `time_ps`.
  struct WarpSample {
    std::uint32_t sm = 0;
    TimePs time_ps = 0;
    std::uint32_t active_warps = 0;
    std::uint32_t issued = 0;
    std::uint32_t units = 0;  ///< bit i: an instruction went to UnitKind i
  };

  void on_tb(const TbStretch& stretch) override;
  void on_tb_restored(SmId sm, KernelId kernel, std::uint32_t tb, TimePs start_ps, TimePs done_ps) override;
  void on_setup(SmId sm, TimePs start_ps, TimePs end_ps) override;
  void on_warp_activity(SmId sm, TimePs time_ps, std::uint32_t active_warps, std::uint32_t issued,
                        std::uint32_t units) override;
  void on_ksrt(std::uint32_t slot, KernelId kernel, bool occupied, TimePs time_ps) override;
  void on_tokens(std::uint32_t slot, std::optional<std::int32_t> tokens, TimePs time_ps) override;
  void on_ksrt_state(std::uint32_t slot, KernelId kernel, KsrtState state, TimePs time_ps) override;
  void on_smst(SmId sm, TimePs time_ps, SmState state, std::optional<KernelId> kernel,
               std::optional<KernelId> next);
  /// The memory controller appends what it serves here (MemoryController::set_transfer_log).
  [[nodiscard]] std::vector<MemoryTransfer>& memory_transfers() { return memory_transfers_; }
  [[nodiscard]] const std::vector<MemoryTransfer>& memory_transfers() const { return memory_transfers_; }
  /// The dram model's channels (commands, burst arrivals); empty unless attached (waveforms only).
  [[nodiscard]] DramActivity& dram() { return dram_; }
  [[nodiscard]] const DramActivity& dram() const { return dram_; }
  [[nodiscard]] const std::vector<SmstChange>& smst_changes() const { return smst_changes_; }
  [[nodiscard]] const std::vector<KsrtChange>& ksrt_changes() const { return ksrt_changes_; }
  [[nodiscard]] const std::vector<TokenChange>& token_changes() const { return token_changes_; }

  [[nodiscard]] const std::vector<Stretch>& stretches() const { return stretches_; }
  [[nodiscard]] const std::vector<Interval>& setups() const { return setups_; }
  [[nodiscard]] const std::vector<WarpSample>& warp_samples() const { return warp_samples_; }

 private:
  std::vector<Stretch> stretches_;
  std::vector<Interval> setups_;
  std::vector<WarpSample> warp_samples_;
  std::vector<SmstChange> smst_changes_;
  std::vector<KsrtChange> ksrt_changes_;
  std::vector<TokenChange> token_changes_;
  std::vector<MemoryTransfer> memory_transfers_;
  DramActivity dram_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t>
      runs_;  ///< (launch, tb) -> stretches so far
  /// (launch, tb) -> its last context restore (start, end), until the stretch it belongs to is recorded
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::pair<TimePs, TimePs>> restores_;
};

}  // namespace gpumux
