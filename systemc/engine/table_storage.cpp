#include "engine/table_storage.h"

namespace gpumux {

std::uint32_t index_bits(std::uint32_t n) {
  std::uint32_t bits = 1;
  while ((1ULL << bits) < n) ++bits;
  return bits;
}

std::vector<TableStorage> framework_storage(const GpuConfig& gpu) {
  const std::uint32_t n_sm = gpu.num_sms;
  const std::uint32_t slots = gpu.active_kernels == 0 ? n_sm : gpu.active_kernels;
  const std::uint32_t t_max = gpu.sm.max_thread_blocks;
  const std::uint32_t ksr = index_bits(slots);
  const std::uint32_t tbs_per_sm = index_bits(t_max + 1);
  // Contexts that can have a kernel waiting: one command buffer each; as many as KSRT entries.
  const std::uint32_t contexts = slots;
  // A kernel launch command: kernel entry point (40-bit address), grid size (32), block size (16),
  // parameter-buffer pointer (40): 128 bits.
  const std::uint32_t command = 40 + 32 + 16 + 40;
  // A KSR: the launch command's fields, next TB to issue (24: grids up to 16M TBs), TBs completed
  // (24), context id, priority (8), token count (signed, enough for +-N_SM), PTBQ head/tail pointers.
  const std::uint32_t ptbq_entries = n_sm * t_max;
  const std::uint32_t ptbq_ptr = index_bits(ptbq_entries);
  const std::uint32_t tokens = index_bits(n_sm) + 2;
  const std::uint32_t ksrt_entry = command + 24 + 24 + index_bits(contexts) + 8 + tokens + 2 * ptbq_ptr + 1;
  // SMST: state (2), KSR index, running TBs, next KSR index.
  const std::uint32_t smst_entry = 2 + ksr + tbs_per_sm + ksr;
  // PTBQ entry: TB id (24) and the saved context's stack pointer (40).
  const std::uint32_t ptbq_entry = 24 + 40;
  return {
      {"command buffers", contexts, command + 1, "launch command 128 b + valid"},
      {"active queue", slots, ksr + 1, "KSRT index + valid"},
      {"KSRT", slots, ksrt_entry,
       "command 128 b, next TB 24 b, done TBs 24 b, context, priority 8 b, tokens, PTBQ head/tail, valid"},
      {"SMST", n_sm, smst_entry, "state 2 b, KSR index, running TBs, next KSR index"},
      {"PTBQs", slots * ptbq_entries, ptbq_entry,
       "TB id 24 b + context stack pointer 40 b; N_SM x T_max per KSR"},
  };
}

}  // namespace gpumux
