#pragma once
// On-chip storage of the scheduling framework's tables (Tanasic 3.3): command buffers, active
// queue, KSRT, SMST and PTBQs, sized as the hardware sizes them (N_SM entries; N_SM PTBQs of
// N_SM x T_max entries). The field widths are our reading of what each entry must hold; the paper
// gives only the totals (command buffers + KSRT + SMST + active queue under 0.5 KB, PTBQs 21 KB for
// the K20c), which docs/validation.md compares with these.

#include <cstdint>
#include <string>
#include <vector>

#include "core/gpu_config.h"

namespace gpumux {

struct TableStorage {
  std::string name;
  std::uint32_t entries = 0;
  std::uint32_t bits_per_entry = 0;
  std::string fields;  ///< what an entry holds, with widths
  [[nodiscard]] std::uint64_t bits() const { return static_cast<std::uint64_t>(entries) * bits_per_entry; }
};

/// The tables for `gpu`, in the order command buffers, active queue, KSRT, SMST, PTBQs.
[[nodiscard]] std::vector<TableStorage> framework_storage(const GpuConfig& gpu);

/// ceil(log2(n)), at least 1: bits to index n things.
[[nodiscard]] std::uint32_t index_bits(std::uint32_t n);

}  // namespace gpumux
