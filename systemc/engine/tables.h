#pragma once
// The scheduling framework's tables as plain data (Tanasic 3.3, Fig. 4): the Kernel Status Register
// Table (KSRT, one KSR per active kernel) and the SM Status Table (SMST, one entry per SM).
// Plain C++ with no SystemC types: policies read these directly, and the RTL reference models use
// the same layout.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/kernel_desc.h"
#include "core/types.h"
#include "sm/occupancy.h"
#include "sm/sm_port.h"

namespace gpumux {

/// A PTBQ entry (Tanasic 3.3): a preempted thread block's id and the state it resumes from (here,
/// the execution time it still needs; the hardware keeps a stack pointer to the saved context).
struct PtbqEntry {
  std::uint32_t tb = 0;
  ResumeContext resume;  ///< where it stopped, as the SM model that saved it recorded it
};

/// One kernel launch as the execution engine tracks it: a KSR plus its context (process) id,
/// token count and priority.
struct KernelStatus {
  KernelId id{};
  ProcessId process{};
  std::uint32_t process_launch = 0;  ///< the process's n-th kernel launch (0-based)
  const KernelDesc* desc = nullptr;
  int priority = 0;
  std::optional<int> os_tokens;  ///< token budget the OS gave the process (workload `tokens`), if any
  TimePs launch_ps = 0;          ///< host submitted the launch command
  TimePs arrival_ps = 0;         ///< entered the execution engine (execution queue)
  TimePs admitted_ps = 0;        ///< entered the active queue / KSRT
  TimePs start_ps = kNever;      ///< first thread block issued
  TimePs end_ps = kNever;        ///< last thread block completed
  std::uint32_t total_tbs = 0;
  std::uint32_t next_tb = 0;     ///< next never-issued thread block index
  std::uint32_t issued_tbs = 0;  ///< issues, including re-issues of preempted TBs
  std::uint32_t completed_tbs = 0;
  /// Sum of the completed thread blocks' run times (issue to completion; a preempted block's last run),
  /// for its mean thread-block latency (Liang 3.2 profiling, step 1).
  TimePs tb_time_ps = 0;
  std::deque<PtbqEntry> preempted_tbs;  ///< PTBQ: preempted TBs, issued before new ones (FIFO)
  std::uint32_t preemptions = 0;        ///< times an SM running this kernel was preempted
  Occupancy occupancy;                  ///< alone on one SM
  bool active = false;                  ///< holds a KSRT entry
  std::uint32_t ksrt_slot = 0;          ///< its KSRT entry while active (0 .. capacity-1)
  /// Thread blocks promised to SMs the policy assigned to this kernel in the hook now running: the
  /// SM driver issues them when the hook returns (policy.h, "Actions"). Counted off unissued_tbs() so
  /// that a policy handing out several SMs in one hook sees what the earlier ones will take.
  std::uint32_t claimed_tbs = 0;

  /// Thread blocks not yet issued (new ones and the PTBQ's) and not claimed by a pending issue.
  [[nodiscard]] std::uint32_t unissued_tbs() const {
    return (total_tbs - next_tb) + static_cast<std::uint32_t>(preempted_tbs.size()) - claimed_tbs;
  }
  [[nodiscard]] bool has_tbs_to_issue() const {
    // On every thread-block issue and completion: the common case (no claim) without the PTBQ's size.
    if (claimed_tbs == 0) return next_tb < total_tbs || !preempted_tbs.empty();
    return unissued_tbs() != 0;
  }
  [[nodiscard]] bool finished() const { return completed_tbs == total_tbs; }
  [[nodiscard]] std::uint32_t remaining_tbs() const { return total_tbs - completed_tbs; }
};

enum class SmState : std::uint8_t {
  kIdle,      ///< no kernel assigned
  kRunning,   ///< executing thread blocks of `kernel`
  kReserved,  ///< being preempted; will be set up for `next` (Tanasic Fig. 3)
};

const char* to_string(SmState state);

/// How many TBs of a kernel are resident on an SM.
struct ResidentKernel {
  KernelId kernel{};
  std::uint32_t tbs = 0;
};

/// A residency limit a policy set for a kernel on an SM (MPMax, SRTF/Adaptive, Perf-Sat).
struct ResidencyLimit {
  KernelId kernel{};
  std::uint32_t limit = 0;
};

/// An SMST entry.
struct SmStatus {
  SmId id{};
  SmState state = SmState::kIdle;
  std::optional<KernelId> kernel;  ///< kernel the SM is set up for
  /// GPU context (process) the SM is set up for: SM setup carries the context id, so kernels of
  /// different processes run at once on different SMs (Tanasic 3.1).
  std::optional<ProcessId> context;
  std::optional<KernelId> next;  ///< when reserved: kernel to set up after preemption
  std::uint32_t running_tbs = 0;
  /// Thread blocks of `kernel` the SM driver will issue here when the hook now running returns (the
  /// SM was assigned in it; KernelStatus::claimed_tbs counts them too). 0 outside hooks.
  std::uint32_t claimed_tbs = 0;
  std::vector<ResidentKernel> residents;  ///< kernels with TBs on the SM (several may share it)
  std::vector<ResidencyLimit> limits;     ///< policy-set residency limits (absent = resources only)

  [[nodiscard]] const ResidentKernel* resident(KernelId k) const {
    for (const auto& r : residents) {
      if (r.kernel == k) return &r;
    }
    return nullptr;
  }
  /// 0 when no limit is set.
  [[nodiscard]] std::uint32_t limit_for(KernelId k) const {
    for (const auto& l : limits) {
      if (l.kernel == k) return l.limit;
    }
    return 0;
  }
};

}  // namespace gpumux
