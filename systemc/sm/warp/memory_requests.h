#pragma once
// Global-memory traffic of a warp-level SM: what a warp memory instruction moves, and where.
//
// Bytes moved (Awatramani 2.2.3: the memory system serves a warp's accesses in segments):
//   - coalesced: the warp's `bytes` rounded up to whole `memory_segment_bytes` segments (a warp
//     reading 32 x 4 B = 128 B moves one 128-byte segment; 130 B move two);
//   - scattered: one segment per thread, warp_size segments, whatever `bytes` says (each thread's
//     access lands in a segment of its own);
//   - broadcast (loads): as coalesced.
//
// Addresses (docs/config.md "Addresses of global accesses"). Programs carry no addresses, so the
// model gives each static memory instruction its own array and lays the accesses out by one rule,
// the grid-stride layout of data-parallel CUDA code: the n-th execution of the instruction by the
// g-th warp of the grid (g = thread block x warps per TB + warp in TB; n counts the passes through the
// instruction's enclosing loops, outermost first) touches element e = n x G + g, G = the grid's warps,
// at byte e x (bytes rounded to segments) of the array. So the warps running at one time touch
// neighbouring addresses (open DRAM rows, whole L2 lines) and no element is read twice: reuse in L2
// comes only from what programs share across instructions, which is none. A scattered access puts
// each thread's segment at a pseudo-random segment of the array (a hash of e and the thread), so it
// opens a row per segment; `scattered within MB` keeps those segments in the array's first M bytes (a
// table indexed at random, which an L2 as large as the table holds after its first touches). A broadcast load
// is read alike by every warp of its thread block: the n-th execution by any warp of grid thread block b
// touches element n x B + b, B = the grid's thread blocks (the reuse an L1 or the L2 serves). Arrays: kernel
// launch k's instruction pc starts at (k + 1) x 2^44 + pc x 2^36. The `simple` memory model ignores
// addresses.
//
// Timing: requests are sent at the simulated time the instruction issues, from the SM's activation
// (which runs at that time), so the memory sees the SM's requests in time order with every other
// initiator's (core/tlm_quantum.h). Under the simple model the whole warp access is one request;
// under dram a coalesced one is one request (the memory splits it at cache lines) and a scattered one
// warp_size requests, one per segment.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/types.h"
#include "program/program.h"

namespace gpumux {

/// Bytes a warp memory instruction moves through the memory (see above).
[[nodiscard]] inline std::uint64_t transaction_bytes(const program::Instruction& instruction,
                                                     std::uint32_t warp_size, std::uint32_t segment_bytes) {
  if (instruction.access == program::Access::kScattered) {
    return static_cast<std::uint64_t>(warp_size) * segment_bytes;
  }
  const std::uint64_t segments =
      (static_cast<std::uint64_t>(instruction.bytes) + segment_bytes - 1) / segment_bytes;
  return std::max<std::uint64_t>(segments, 1) * segment_bytes;
}

/// One request of a warp access: `bytes` from `address`.
struct AccessPiece {
  std::uint64_t address = 0;
  std::uint32_t bytes = 0;
};

/// The first byte of kernel launch `kernel`'s array for instruction `pc` (see above).
[[nodiscard]] inline std::uint64_t array_base(KernelId kernel, std::uint32_t pc) {
  return ((static_cast<std::uint64_t>(index(kernel)) + 1) << 44U) + (static_cast<std::uint64_t>(pc) << 36U);
}

/// SplitMix64's finaliser (Steele, Lea and Flood, OOPSLA 2014): the scattered segments' hash.
[[nodiscard]] inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27U)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31U);
}

/// The requests of element `element` of instruction `pc` of kernel launch `kernel` (see above),
/// appended to `out`: one piece when `whole` (the simple model) or the access is coalesced, else one
/// per thread.
inline void warp_access(const program::Instruction& inst, KernelId kernel, std::uint32_t pc,
                        std::uint64_t element, std::uint32_t warp_size, std::uint32_t segment_bytes,
                        bool whole, std::vector<AccessPiece>& out) {
  const std::uint64_t bytes = transaction_bytes(inst, warp_size, segment_bytes);
  const std::uint64_t base = array_base(kernel, pc);
  if (inst.access != program::Access::kScattered) {  // coalesced or broadcast: the element differs
    out.push_back({base + element * bytes, static_cast<std::uint32_t>(bytes)});
    return;
  }
  if (whole) {
    out.push_back({base + element * bytes, static_cast<std::uint32_t>(bytes)});
    return;
  }
  // Anywhere in the table `scattered within` names, else in the first 32 GB of the array's 64 GB.
  const std::uint64_t table = inst.scatter_bytes != 0 ? inst.scatter_bytes : program::kMaxScatterBytes;
  const std::uint64_t segments = std::max<std::uint64_t>(table / segment_bytes, 1);
  for (std::uint32_t t = 0; t < warp_size; ++t) {
    const std::uint64_t segment = mix64(element * warp_size + t) % segments;
    out.push_back({base + segment * segment_bytes, segment_bytes});
  }
}

}  // namespace gpumux
