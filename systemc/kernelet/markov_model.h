#pragma once
// Kernelet's Markov-chain IPC model (Zhong and He, "Kernelet: High-Throughput GPU Kernel Executions with
// Dynamic Slicing and Scheduling", 4.4): the instructions per cycle of one kernel alone on an SM
// (homogeneous workload, Eqs. 2-4) and of two or more kernels sharing it (heterogeneous workload,
// Eqs. 5-7), from a few profiled numbers per kernel and a few per GPU. Plain C++, no SystemC types:
// Kernelet's scheduler (kernelet/co_schedule.h) evaluates it for every slice ratio of every kernel pair
// at every scheduling decision.
//
// The chain (4.4, Table 1). A unit (a warp, or a thread block: 4.4's "thread block as a scheduling
// unit") is ready or idle; idle units wait on a coalesced or an uncoalesced memory instruction (4.4
// "Uncoalesced Access"; a two-state kernel is the case with one kind only). The chain's state is the
// number of idle units of each kind of each kernel; its time step is a round, in which the warp
// scheduler issues one instruction for every warp of every ready unit. The round lasts
// D(S) = max(1, ready warps / peak_ipc) cycles: 4.4's W - i on its one-instruction-a-cycle scheduler,
// and one cycle when no warp is ready (4.4: "the round duration is one"). In a round:
//  - a ready unit goes idle with probability Rm (P_r->i, 4.4), on an uncoalesced instruction with
//    probability Rm x uncoalesced_share, on a coalesced one with Rm x (1 - uncoalesced_share). A
//    thread-block unit goes idle as a whole: its warps run the same code and the scheduler polls them in
//    turn, so they reach a memory instruction in the same round, and the share of memory instructions
//    issued stays Rm;
//  - an idle unit becomes ready with probability min(1, D / L): 4.4's P_i->r = (W - I) / L is D / L.
//    Two changes keep it a probability: with D = W - I the all-idle state would have P_i->r = 0 and be
//    absorbing (the SM idle forever), so it uses its one-cycle duration; and D / L is capped at 1 (a
//    round at least as long as the latency returns every request). Rm is checked to lie in [0, 1) and
//    the uncoalesced share in [0, 1], so every probability lies in [0, 1].
// Units move independently given the state; the probability of going from one state to another sums the
// binomial (multinomial for the three-state kernel) probabilities of the mutually exclusive numbers of
// units that leave and enter each idle kind (Eq. 2). Kernels move independently given the joint state,
// whose round duration and memory latency they share (4.4 "Heterogeneous Workloads"): the joint
// probability is the product of theirs.
//
// Memory latency (4.4, linear model). The printed formula "L = L0 + B / (a0 Si) + b0" falls as the load
// grows, against its own sentence ("more outstanding memory requests usually lead to higher latency"),
// and its units do not work out (requests per cycle over requests). This model reads it as
//     L(S) = L0 + a0 x Q(S) / B + b0,
// Q(S) the memory requests outstanding in state S (an idle warp holds one instruction: 1 request if
// coalesced, requests_per_uncoalesced_instruction if not) and B the bandwidth in requests per cycle:
// Q / B is the cycles the memory system needs to return Q requests, a0 scales it to the measured
// contention and b0 is the fit's intercept. An uncoalesced instruction completes with the last of its
// R requests, which leave (R - 1) / B after the first: L_u(S) = L(S) + a0 x (R - 1) / B. Both Q and B
// are the virtual SM's (below), whose Q / B is the SM's.
//
// Multiple warp schedulers (4.4 "Adaptation"). The chain runs on a virtual SM with one scheduler, the
// SM's active warps and bandwidth divided by the number of schedulers S; its IPC times S is the SM's.
// Dividing a kernel's T thread blocks gives T / S of them, not a whole number for T = 3 on 4
// schedulers; the virtual SM here keeps the divided totals exactly (T x warps_per_tb / S warps) and makes
// them ceil(T / S) units of equal size (ceil(T x warps_per_tb / S) for warp units): a unit holds at most
// one thread block's warps, as in the paper, and may hold fewer.
//
// Programming errors (a field out of range, NaN, a chain too large to solve) throw std::invalid_argument
// naming the field: the inputs are built by code from profiles and GPU configurations.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpumux::kernelet {

/// What Kernelet knows of a kernel (4.3, 4.4): its profile from a short single-kernel run and the
/// resources one of its thread blocks takes from an SM.
struct KernelTraits {
  std::string name;
  /// Rm: memory instructions / all instructions (4.4, Table 1), in [0, 1). Rm = 1 (no instruction but
  /// memory ones, which no real kernel has: address arithmetic and loop control are not) is refused: the
  /// steady state is unique because an idle unit may return and a ready one stay ready in any round.
  double memory_instruction_ratio = 0;
  /// The share of the memory instructions that are uncoalesced (4.4 "Uncoalesced Access"), in [0, 1].
  double uncoalesced_share = 0;
  std::uint32_t warps_per_tb = 1;  ///< >= 1
  /// I_K of Eq. 8: warp instructions one thread block executes, > 0.
  double instructions_per_tb = 1;
  std::uint32_t threads_per_tb = 32;       ///< >= 1
  std::uint32_t registers_per_tb = 0;      ///< registers of all threads of one thread block
  std::uint32_t shared_memory_per_tb = 0;  ///< bytes
  /// Pipeline and memory-bandwidth utilisation ratios alone (4.3), >= 0; only pruning reads them.
  /// PUR may exceed 1 (Table 4: 1.68 on the GTX680, whose peak IPC the paper counts per dual issue).
  double pur = 0;
  double mur = 0;
};

/// The SM of one GPU as the model sees it. Latency constants are fitted once per GPU from a
/// latency-versus-load measurement, never per kernel.
struct SmModel {
  std::uint32_t warp_schedulers = 1;    ///< S, >= 1 (Fermi C2050: 2, Kepler SMX: 4)
  double peak_ipc_per_scheduler = 1.0;  ///< warp instructions one scheduler issues per cycle at most, > 0
  // SM limits: how many thread blocks fit alone and beside another kernel's.
  std::uint32_t max_threads = 1536;  ///< >= 1
  std::uint32_t registers = 32768;   ///< >= 1
  std::uint32_t shared_memory_bytes = 49152;
  std::uint32_t max_thread_blocks = 8;  ///< >= 1
  std::uint32_t max_warps = 48;         ///< >= 1
  /// L0: memory latency without load, cycles, >= 0.
  double unloaded_latency_cycles = 400;
  /// B: this SM's memory bandwidth in requests per cycle, > 0. The model takes one SM for all (4.4:
  /// SPMD), every SM with the same load, so the GPU's Q_gpu / B_gpu is this SM's Q / (B_gpu / SMs):
  /// pass the GPU's bandwidth divided by its SM count.
  double bandwidth_requests_per_cycle = 1;
  double latency_slope = 1;             ///< a0, >= 0: cycles of latency per cycle of queued requests
  double latency_intercept_cycles = 0;  ///< b0; L0 + b0 must be >= 1 cycle
  /// Memory requests of an uncoalesced warp instruction (a coalesced one makes 1), >= 1 (Fermi: up to 32).
  double requests_per_uncoalesced_instruction = 32;
};

/// std::invalid_argument naming the kernel and the field unless every field of `kernel` is in range.
void validate(const KernelTraits& kernel);
/// std::invalid_argument naming the field unless every field of `sm` is in range.
void validate(const SmModel& sm);

/// Thread blocks of `kernel` that fit on an SM alone: the first resource to run out bounds it (threads,
/// registers, shared memory, warps, thread-block slots). 0 when one does not fit. Allocation granularity
/// is not modelled: pass footprints already rounded to it.
[[nodiscard]] std::uint32_t tbs_alone(const KernelTraits& kernel, const SmModel& sm);

/// True when `tbs_first` thread blocks of `first` and `tbs_second` of `second` fit on one SM together:
/// their footprints add up within every limit.
[[nodiscard]] bool fit_together(const KernelTraits& first, std::uint32_t tbs_first,
                                const KernelTraits& second, std::uint32_t tbs_second, const SmModel& sm);

/// The unit of the chain (4.4): a thread block (the paper's optimisation, the default: a kernel has at
/// most max_thread_blocks / S units) or a warp (the paper's original model; up to max_warps / S units,
/// the chain grows with their product and the solve with its cube).
enum class ModelUnit { kThreadBlock, kWarp };

struct ModelOptions {
  ModelUnit unit = ModelUnit::kThreadBlock;
  /// Cost bound: when the joint chain would have more states, every kernel's unit count is capped at the
  /// largest m that keeps it within (the same m for all, so symmetric pairs stay symmetric), each unit
  /// growing to keep the kernel's warps. The solve is O(states^3): 100 states take about 0.3 ms, 225
  /// about 2.5 ms (-O2). 100 leaves every two-state pair of up to 9 units each alone and caps two
  /// three-state kernels at 3 units each (4 on a Kepler SMX's virtual SM would be 225 states).
  std::size_t max_states = 100;
};

/// One kernel on the virtual SM, in units of the chain.
struct ChainKernel {
  std::uint32_t units = 0;       ///< active units of the kernel, 0 allowed (the kernel is absent)
  double warps_per_unit = 1;     ///< > 0; warps that issue in lockstep in a round
  double memory_ratio = 0;       ///< Rm, in [0, 1)
  double uncoalesced_share = 0;  ///< in [0, 1]
};

/// The single-scheduler virtual SM (4.4 "Adaptation"): the memory parameters of SmModel with the
/// bandwidth divided by the number of schedulers.
struct VirtualSm {
  double peak_ipc = 1;                      ///< SmModel::peak_ipc_per_scheduler
  double bandwidth_requests_per_cycle = 1;  ///< B / S
  double unloaded_latency_cycles = 400;     ///< L0
  double latency_slope = 1;                 ///< a0
  double latency_intercept_cycles = 0;      ///< b0
  double requests_per_uncoalesced_instruction = 32;
};

/// The virtual SM of `sm` (validated).
[[nodiscard]] VirtualSm virtual_sm(const SmModel& sm);

/// `tbs_per_sm` thread blocks of `kernel` on one SM as units of the virtual SM (file comment): the
/// kernel's tbs_per_sm x warps_per_tb / S warps in ceil(tbs_per_sm / S) thread-block units or
/// ceil(tbs_per_sm x warps_per_tb / S) warp units of equal size. 0 thread blocks: 0 units.
[[nodiscard]] ChainKernel chain_kernel(const KernelTraits& kernel, std::uint32_t tbs_per_sm,
                                       const SmModel& sm, ModelUnit unit);

/// `kernels` with every unit count capped as ModelOptions::max_states says (warps kept).
[[nodiscard]] std::vector<ChainKernel> cap_units(std::vector<ChainKernel> kernels, std::size_t max_states);

/// States of one kernel's part of the chain with `kernel`'s unit count: 1 when it never goes idle
/// (Rm = 0 or no units), units + 1 with one kind of memory instruction, (units + 1)(units + 2) / 2 with
/// both kinds (the three-state warp of 4.4). States that no round can reach are left out.
[[nodiscard]] std::size_t kernel_state_count(const ChainKernel& kernel);

/// The linear memory-latency model (file comment): L0 + a0 x outstanding / B + b0, cycles.
[[nodiscard]] double memory_latency_cycles(const VirtualSm& vsm, double outstanding_requests);

/// Idle units of one kernel in one state of the chain.
struct IdleUnits {
  std::uint32_t coalesced = 0;
  std::uint32_t uncoalesced = 0;

  friend bool operator==(const IdleUnits& a, const IdleUnits& b) {
    return a.coalesced == b.coalesced && a.uncoalesced == b.uncoalesced;
  }
};

/// One state of the joint chain: the idle units of each kernel, in the order of the kernels.
using JointState = std::vector<IdleUnits>;

/// The chain's transition matrix P (Table 1: P_ij, from S_i to S_j).
struct TransitionMatrix {
  /// The states in index order: mixed radix with the last kernel's state fastest, as Eqs. 5-6 list
  /// (p, q); a kernel's own states by coalesced idle, then uncoalesced idle, ascending. One kernel with
  /// one kind of idle: S_0, S_1, ..., S_W of 4.4.
  std::vector<JointState> states;
  std::vector<double> probabilities;  ///< row-major, states.size() squared; every row sums to 1

  [[nodiscard]] std::size_t size() const { return states.size(); }
  [[nodiscard]] double at(std::size_t from, std::size_t to) const {
    return probabilities[from * states.size() + to];
  }
};

/// P for `kernels` sharing `vsm` (Eq. 2, heterogeneous: the product over kernels). std::invalid_argument
/// for an out-of-range field or more than 4096 joint states.
[[nodiscard]] TransitionMatrix build_transition_matrix(const std::vector<ChainKernel>& kernels,
                                                       const VirtualSm& vsm);

/// The steady-state vector pi of P (Eq. 3): pi P = pi, sum pi = 1, solved as the linear system
/// (P^T - I) pi = 0 with its last equation replaced by sum pi = 1, by LU decomposition with partial
/// pivoting (Boost uBLAS). The chain has one recurrent class (in any round every idle unit may become
/// ready and every ready one stay ready, Rm < 1: the all-ready state is reachable from every state), so
/// the system has one solution.
/// Rounding below 1e-10 under zero is set to zero and the vector renormalised; std::logic_error if the
/// system is singular or an entry is more negative.
[[nodiscard]] std::vector<double> stationary_distribution(const TransitionMatrix& p);

/// The solved chain of `kernels` on one virtual SM.
struct ChainSolution {
  TransitionMatrix transitions;
  std::vector<double> stationary;  ///< pi, one entry per state of `transitions`
  /// IPC of each kernel on the virtual SM (Eqs. 4-6): expected warp instructions it issues per round
  /// over the expected round duration, sum_S pi_S ready_k(S) warps_per_unit_k / sum_S pi_S D(S), where
  /// D(S) = max(1, ready warps of all kernels / peak_ipc) cycles. With peak_ipc = 1 and one warp per
  /// unit, exactly Eq. 4 (one kernel) and Eqs. 5-6 (two).
  std::vector<double> virtual_sm_ipc;
};

/// Builds, solves and evaluates the chain of `kernels` on `vsm` (no capping: see cap_units).
[[nodiscard]] ChainSolution solve_chain(const std::vector<ChainKernel>& kernels, const VirtualSm& vsm);

/// IPC_K (Eq. 4) of `kernel` alone with `tbs_per_sm` thread blocks per SM, for the whole SM: the virtual
/// SM's IPC times the number of schedulers (its warps and bandwidth were divided by it). 0 for 0 thread
/// blocks. std::invalid_argument when they do not fit (tbs_per_sm > tbs_alone).
[[nodiscard]] double alone_ipc(const KernelTraits& kernel, std::uint32_t tbs_per_sm, const SmModel& sm,
                               const ModelOptions& options = {});

/// IPCs of two kernels sharing an SM (Eqs. 5-7), whole SM as alone_ipc.
struct PairIpc {
  double first = 0;                                              ///< IPC_K1 (Eq. 5)
  double second = 0;                                             ///< IPC_K2 (Eq. 6)
  [[nodiscard]] double total() const { return first + second; }  ///< C (Eq. 7)
};

/// Eqs. 5-7 for `tbs_first` thread blocks of `first` beside `tbs_second` of `second` on each SM. Either
/// count may be 0 (that kernel is absent: the other's IPC is its alone_ipc). std::invalid_argument when
/// they do not fit together.
[[nodiscard]] PairIpc concurrent_ipc(const KernelTraits& first, std::uint32_t tbs_first,
                                     const KernelTraits& second, std::uint32_t tbs_second, const SmModel& sm,
                                     const ModelOptions& options = {});

}  // namespace gpumux::kernelet
