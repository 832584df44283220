#pragma once
// Intra-core concurrent kernel execution (Awatramani, PhD thesis, chapter 5.4): the thread-block
// scheduler's kernel status block (KSB, Fig. 5.6) and core status block (CSB, Fig. 5.7), in two mappings:
//
//  - interleaved (5.4.1, "the interleaved scheduler maps each kernel to all the cores"): every core's
//    CSB entry holds a queue with one entry per active kernel, each with a maximum-blocks and an
//    active-blocks field. On each kernel launch, each kernel whose last block is issued, and each kernel
//    exit, the maximum blocks of every kernel on every core is recomputed (5.4.2) and written to the SM
//    driver as a residency limit (SmStatus::limits), which is what enforces it.
//  - baseline (5.4.1, "the baseline scheduler"): one assigned kernel per core. Under the left-over
//    order the thesis's baseline runs with ([60], Pai et al.; 5.3: "the next kernel does not begin
//    until all CTAs of the current kernel have been launched"), a core is assigned the oldest kernel
//    with blocks left; while the core still holds blocks of another (active) kernel, no block is launched
//    on it (5.4.1: "launch of new thread blocks is stalled on cores for which the active kernel is
//    different than the assigned kernel"; Fig. 5.7, core 16). This differs from `fifo` only at a kernel
//    boundary: fifo lets the next kernel's blocks into room left over beside the previous kernel's.
//    Option core_mapping=round-robin (5.4.1: "the baseline scheduler maps kernels to cores in a round
//    robin order"): core c is assigned the (c mod n)-th of the n kernels with blocks left, in launch
//    order, so concurrent kernels get disjoint cores (spatial multitasking); on every launch, last issue
//    and exit the assignment is recomputed, and a core reassigned launches nothing until the blocks of
//    its active kernel have drained (the same check).
//
// The partition rule (ours; 5.5.1 says only "resources within each core are first partitioned to
// execute both the kernels. Once all the CTAs of the shorter kernel have been issued, the kernel
// scheduler starts to change the core partitioning such that more resources are assigned to the longer
// executing kernel"): the kernels that still have blocks to issue (KSB active bit set), n of them (at
// most sm.max_resident_kernels, the oldest first; the others get 0 until one leaves), share every
// resource of a core equally: a kernel's maximum blocks is the most of its blocks that fit in 1/n of
// the registers, threads, warps, thread-block slots and its shared-memory carve-out, at least 1 and at
// most its occupancy alone. With n = 1 the kernel has the whole core (no limit). A kernel whose blocks
// are all issued keeps its running blocks (lowering a limit never evicts); the room they free goes to
// the kernels still issuing. Fig. 5.8's run (two 8-warp kernels on an 8-slot core, 4 CTAs each) is this
// rule's result.
//
// Kernel exits (5.4.3): on each block launch the KSB's next block advances; past the grid the kernel's
// active bit goes off. A core retires its CSB queue entry for the kernel when the kernel is inactive and
// the core holds none of its blocks, decrementing the KSB's active-cores count; at zero the entry's
// valid bit is reset and the mapping recomputed.
//
// A full KSB (option ksb_entries): the thesis's launch "fails"; here the launch waits (the host's
// retry) until an entry is freed, and takes it in arrival order. Its kernel is in the SM driver's active
// queue meanwhile but no block of it is issued.
//
// Gathering (option gather_ns): kernels the host launches together reach the GPU some ns apart (one
// PCIe command each), and the first would fill every core before the second arrives. With gather_ns
// > 0 no block is issued until gather_ns after the first launch (as Fig. 5.8's run starts both kernels
// together); later launches are scheduled at once.
//
// Plain C++: no SystemC types (policy.h).

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "policy/registry.h"

namespace gpumux {

class IntracorePolicy final : public SchedulingPolicy {
 public:
  enum class Mapping : std::uint8_t { kInterleaved, kBaseline };
  /// The baseline's kernel-to-core assignment (option core_mapping): every core the oldest kernel with
  /// blocks left (left-over), or core c the (c mod n)-th of them (round-robin).
  enum class CoreAssignment : std::uint8_t { kLeftOver, kRoundRobin };

  /// One KSB entry (Fig. 5.6). The grid and next block are linear block indices (the model has 1-D grids).
  struct KsbEntry {
    bool valid = false;
    KernelId kernel{};
    std::uint32_t grid = 0;           ///< thread blocks of the launch
    std::uint32_t next_block = 0;     ///< next block to launch
    bool active = false;              ///< blocks left to launch (5.4.3's "active bit")
    std::uint32_t registers = 0;      ///< per thread block (Fig. 5.6 "Resources: Reg")
    std::uint32_t shared_memory = 0;  ///< bytes per thread block ("Resources: SMEM")
    std::uint32_t active_cores = 0;   ///< cores whose CSB queue holds the kernel
  };
  /// One kernel of a core's queue (Fig. 5.7's maximum and active blocks).
  struct CsbKernel {
    KernelId kernel{};
    std::uint32_t max_blocks = 0;
    std::uint32_t active_blocks = 0;
  };
  /// One CSB entry (Fig. 5.7). The interleaved mapping uses `queue`; the baseline the assigned and
  /// active kernel (its queue holds the active kernel's entry, and the assigned one's when they differ).
  struct CoreStatus {
    std::optional<KernelId> active_kernel;
    std::optional<KernelId> assigned_kernel;
    std::vector<CsbKernel> queue;
    [[nodiscard]] bool full() const { return !queue.empty(); }
    [[nodiscard]] const CsbKernel* find(KernelId k) const;
  };

  IntracorePolicy(Mapping mapping, std::uint32_t ksb_entries, TimePs gather_ps,
                  CoreAssignment assignment = CoreAssignment::kLeftOver);
  /// Options: ksb_entries=N, gather_ns=N; the baseline (leftover) also core_mapping=left-over|round-robin.
  [[nodiscard]] static const OptionSpecs& option_specs(Mapping mapping);
  [[nodiscard]] static std::unique_ptr<SchedulingPolicy> create(Mapping mapping, const OptionValues& options);

  [[nodiscard]] std::string name() const override {
    return mapping_ == Mapping::kInterleaved ? "interleaved" : "leftover";
  }
  void on_kernel_arrival(KernelId kernel, EngineControl& control) override;
  void on_sm_idle(SmId sm, EngineControl& control) override;
  void on_tb_started(SmId sm, KernelId kernel, EngineControl& control) override;
  void on_tb_finished(SmId sm, KernelId kernel, TimePs duration_ps, EngineControl& control) override;
  void on_kernel_finished(KernelId kernel, EngineControl& control) override;
  void on_timer(EngineControl& control) override;
  [[nodiscard]] std::optional<KernelId> select_kernel(SmId sm, const EngineControl& control) override;

  [[nodiscard]] const std::vector<KsbEntry>& kernel_status_block() const { return ksb_; }
  [[nodiscard]] const std::vector<CoreStatus>& core_status_block() const { return csb_; }
  /// Launches waiting for a free KSB entry, in arrival order.
  [[nodiscard]] const std::deque<KernelId>& waiting_for_ksb() const { return waiting_; }
  /// Times the kernel-to-core mapping was recomputed (5.4.1: on launch and exit; 5.5.1: on last issue).
  [[nodiscard]] std::uint64_t remaps() const { return remaps_; }

 private:
  [[nodiscard]] KsbEntry* entry_of(KernelId k);
  [[nodiscard]] const KsbEntry* entry_of(KernelId k) const;
  [[nodiscard]] static CsbKernel* queue_entry(CoreStatus& core, KernelId k);
  /// Takes free KSB entries for waiting launches, retires finished CSB/KSB entries (5.4.3), and
  /// recomputes the mapping when the set of kernels with blocks left changed.
  void update(EngineControl& control);
  void remap(EngineControl& control);
  [[nodiscard]] bool gathering(const EngineControl& control) const;
  /// The kernels with blocks left to launch, in KSB launch order.
  [[nodiscard]] std::vector<KernelId> issuing() const;
  void hand_out(EngineControl& control);

  Mapping mapping_;
  CoreAssignment assignment_;
  TimePs gather_ps_;
  std::optional<TimePs> first_arrival_;
  std::vector<KsbEntry> ksb_;           ///< option ksb_entries entries, fixed for the run
  std::vector<KernelId> launch_order_;  ///< valid KSB kernels in launch order
  std::deque<KernelId> waiting_;
  std::vector<CoreStatus> csb_;
  std::vector<KernelId> mapped_for_;  ///< issuing set the current mapping was computed for
  std::uint64_t remaps_ = 0;
};

}  // namespace gpumux
