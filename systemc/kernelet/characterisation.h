#pragma once
// What Kernelet knows of each kernel before it schedules it (Zhong and He 4.3-4.4): measured once per
// kernel and GPU by a short pre-execution (`gpumux characterise`), written to a characterisation file that
// the `kernelet` policy and `gpumux kernelet` read. Per kernel: PUR and MUR (4.3, the pruning rule), the
// Markov model's inputs (4.4: the memory-instruction ratio Rm, the uncoalesced share, instructions per
// thread block, warps and resources per thread block), the IPC it reached alone, and the smallest slice
// whose overhead stays under 2% (4.1). Per GPU: the model's memory-latency parameters. Optionally the
// pairs' IPCs measured at every slice ratio (the paper's OPT pre-executes them). Plain C++: no SystemC.

#include <cstdint>
#include <string>
#include <vector>

namespace gpumux::kernelet {

struct KernelCharacter {
  std::string kernel;                ///< kernel name in its library
  std::uint32_t thread_blocks = 0;   ///< grid size
  std::uint32_t threads_per_tb = 0;  ///< resources per thread block, as the library gives them
  std::uint32_t registers_per_tb = 0;
  std::uint32_t shared_memory_per_tb = 0;  ///< bytes
  std::uint32_t warps_per_tb = 0;
  std::uint32_t tbs_per_sm = 0;     ///< occupancy alone on this GPU
  double instructions_per_tb = 0;   ///< warp instructions per thread block (Eq. 8's I_K)
  double memory_ratio = 0;          ///< Rm: global memory instructions / all warp instructions
  double uncoalesced_share = 0;     ///< of the global memory instructions, the uncoalesced ones
  double ipc = 0;                   ///< warp instructions per core cycle per SM, alone (pre-execution)
  double pur = 0;                   ///< 4.3: instructions / (time x frequency x peak IPC)
  double mur = 0;                   ///< 4.3: DRAM requests / (time x frequency x peak MPC)
  std::uint32_t min_slice_tbs = 0;  ///< 4.1's smallest slice with overhead <= 2%; 0: not measured
};

/// Two kernels resident together at a ratio: their IPCs measured (the paper's OPT, 5.1).
struct PairMeasurement {
  std::string first;
  std::string second;
  std::uint32_t first_per_sm = 0;   ///< thread blocks of `first` per SM
  std::uint32_t second_per_sm = 0;  ///< of `second`
  double first_ipc = 0;             ///< warp instructions per core cycle per SM
  double second_ipc = 0;
};

/// The GPU side of the Markov model (4.4), from the GPU file and a latency-against-load measurement.
struct MemoryModelParameters {
  std::uint32_t warp_schedulers = 1;  ///< per SM: the virtual SM divides by it (4.4)
  double peak_ipc_per_sm = 1;         ///< warp instructions per core cycle per SM
  double latency_cycles = 0;          ///< L0: a global load's latency, unloaded, core cycles
  double requests_per_cycle = 0;      ///< B: the GPU's peak DRAM requests per core cycle
  double latency_slope = 0;           ///< a0: added cycles per outstanding request and per (1/B)
  double latency_offset = 0;          ///< b0: the linear model's intercept, cycles
  double uncoalesced_requests = 32;   ///< memory requests one uncoalesced warp instruction makes
};

struct Characterisation {
  std::string gpu;  ///< GPU name
  std::uint32_t sms = 0;
  double core_clock_mhz = 0;
  std::string sm_model;              ///< "warp": PUR, MUR and IPC need the warp level
  std::string memory_model;          ///< "simple" or "dram"
  std::uint32_t request_bytes = 32;  ///< what MUR counts as one DRAM request (a 32-byte sector)
  MemoryModelParameters model;
  std::vector<KernelCharacter> kernels;
  std::vector<PairMeasurement> pairs;

  /// The character of `kernel`, or nullptr.
  [[nodiscard]] const KernelCharacter* find(const std::string& kernel) const;
  /// The measurement of `first` and `second` at that ratio (either order), or nullptr.
  [[nodiscard]] const PairMeasurement* find_pair(const std::string& first, std::uint32_t first_per_sm,
                                                 const std::string& second,
                                                 std::uint32_t second_per_sm) const;
};

/// Reads a characterisation file (YAML, docs/config.md "Characterisation files"). InputError (exit 2)
/// naming file, line and key for malformed YAML, unknown or missing keys, wrong types, numbers outside
/// physical sense (a ratio outside 0..1, a negative IPC), a kernel given twice, a pair of unknown kernels.
[[nodiscard]] Characterisation load_characterisation(const std::string& path);

/// Writes `c` as YAML that load_characterisation reads back exactly (numbers with 17 significant digits).
/// std::invalid_argument for contents the reader would reject; InputError when the file cannot be written.
void write_characterisation(const std::string& path, const Characterisation& c);

}  // namespace gpumux::kernelet
