#pragma once
// GTKWave's side files for the RTL waveforms (cross-checks and co-simulation, --wave FILE), written
// beside the VCD as the model's --vcd writes them (systemc/wave/gtkwave_save.h): STEM.gtkw with the
// signals grouped, and translate filters that name the enumerations. `gtkwave FILE.vcd FILE.gtkw`.
//
// DSS (testbench top tb/rtl/dss_token_policy_tb.sv): events (inputs), the search FSM and scan,
// outputs beside the reference model's exp_* and mismatch, the SMST per SM and the KSRT per entry.
// Filters: STEM.event_kind.txt and STEM.sm_state.txt from the encodings generated from rtl/dss_pkg.sv
// (policy/dss_encoding.h: a new or renamed item breaks this switch's build, -Wswitch -Werror), and
// STEM.phase.txt for the FSM's phase_e, which is local to rtl/dss_token_policy.sv (kDssPhases; the
// test tb/rtl/gtkwave_rtl_test.sh compares it with the RTL source). The leaky bucket has no
// enumerations: its save file only groups its signals. Traces are decimal, so a filter's left column
// is the value in decimal.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "policy/dss_encoding.h"
#include "policy/dss_reference.h"
#include "policy/leaky_bucket_reference.h"
#include "wave/gtkwave_save.h"

namespace gpumux::rtl {

/// rtl/dss_token_policy.sv's phase_e (PhaseIdle = 2'd0, ...).
inline const std::vector<std::pair<std::uint64_t, std::string>> kDssPhases = {
    {0, "PhaseIdle"}, {1, "PhaseScan"}, {2, "PhaseDecide"}};

inline const char* dss_event_name(dss_encoding::EventKind k) {
  switch (k) {  // no default: -Wswitch names an item of dss_pkg::event_kind_e missing here
    case dss_encoding::EventKind::kNone:
      return "EvNone";
    case dss_encoding::EventKind::kKernelInsert:
      return "EvKernelInsert";
    case dss_encoding::EventKind::kKernelFinish:
      return "EvKernelFinish";
    case dss_encoding::EventKind::kSmIdle:
      return "EvSmIdle";
    case dss_encoding::EventKind::kPreemptDone:
      return "EvPreemptDone";
    case dss_encoding::EventKind::kHasTbs:
      return "EvHasTbs";
  }
  return nullptr;
}

inline const char* dss_sm_state_name(dss_encoding::SmState s) {
  switch (s) {  // no default, as above (dss_pkg::sm_state_e)
    case dss_encoding::SmState::kIdle:
      return "SmIdle";
    case dss_encoding::SmState::kRunning:
      return "SmRunning";
    case dss_encoding::SmState::kReserved:
      return "SmReserved";
  }
  return nullptr;
}

/// STEM of FILE.vcd as an absolute path (the save file and filters are STEM.*).
inline std::string rtl_wave_stem(const std::string& vcd) {
  std::filesystem::path p(vcd);
  if (p.extension() == ".vcd") p.replace_extension();
  return std::filesystem::absolute(p).lexically_normal().string();
}

inline std::string rtl_wave_dump(const std::string& vcd) {
  return std::filesystem::absolute(vcd).lexically_normal().string();
}

/// Bits of an index into `entries` (at least 1), as the RTL's $clog2 with its 1-entry case.
inline unsigned rtl_index_bits(std::uint32_t entries) {
  unsigned w = 1;
  while ((std::uint64_t{1} << w) < entries) ++w;
  return w;
}

/// Writes STEM.gtkw, STEM.event_kind.txt, STEM.sm_state.txt and STEM.phase.txt beside `vcd`.
inline void write_dss_gtkwave(const std::string& vcd, const DssReference::Config& c) {
  const std::string stem = rtl_wave_stem(vcd);
  const std::string kinds = stem + ".event_kind.txt";
  const std::string states = stem + ".sm_state.txt";
  const std::string phases = stem + ".phase.txt";
  std::vector<std::pair<std::uint64_t, std::string>> entries;
  for (std::uint64_t v = 0; v < (std::uint64_t{1} << dss_encoding::kEventKindW); ++v) {
    if (const char* n = dss_event_name(static_cast<dss_encoding::EventKind>(v))) entries.emplace_back(v, n);
  }
  write_translate_filter(kinds, entries);
  entries.clear();
  for (std::uint64_t v = 0; v < (std::uint64_t{1} << dss_encoding::kSmStateW); ++v) {
    if (const char* n = dss_sm_state_name(static_cast<dss_encoding::SmState>(v))) entries.emplace_back(v, n);
  }
  write_translate_filter(states, entries);
  write_translate_filter(phases, kDssPhases);

  const unsigned sm_w = rtl_index_bits(c.num_sms);
  const unsigned slot_w = rtl_index_bits(c.num_slots);
  const unsigned idx_w = rtl_index_bits(c.num_sms > c.num_slots ? c.num_sms : c.num_slots);
  // scan_idx_q counts scan cycles: ceil(N / P) of them (the entry index at P = 1).
  const unsigned cycle_w = rtl_index_bits(DssReference::scan_cycles(c));
  const unsigned tok_w = c.token_bits;
  const unsigned state_w = dss_encoding::kSmStateW;
  const std::string tb = "dss_token_policy.dss_token_policy_tb.";
  const std::string dut = tb + "dut.";
  std::vector<GtkwGroup> groups;
  groups.push_back({"events (inputs)",
                    {{tb + "clk_i", 1, {}, false},
                     {tb + "rst_ni", 1, {}, false},
                     {tb + "event_kind_i", dss_encoding::kEventKindW, kinds, false},
                     {tb + "event_index_i", idx_w, {}, false},
                     {tb + "event_tokens_i", 32, {}, true},
                     {tb + "event_flag_i", 1, {}, false},
                     {tb + "model_time", 64, {}, false}},
                    false});
  groups.push_back({"search FSM and scan",
                    {{dut + "phase_q", 2, phases, false},
                     {dut + "scan_idx_q", cycle_w, {}, false},
                     {dut + "idle_valid_q", 1, {}, false},
                     {dut + "idle_sm_q", sm_w, {}, false},
                     {dut + "max_valid_q", 1, {}, false},
                     {dut + "max_slot_q", slot_w, {}, false},
                     {dut + "max_tokens_q", tok_w, {}, true},
                     {dut + "min_valid_q", 1, {}, false},
                     {dut + "min_slot_q", slot_w, {}, false},
                     {dut + "min_tokens_q", tok_w, {}, true},
                     {dut + "min_sm_q", sm_w, {}, false}},
                    false});
  GtkwGroup out{"outputs (RTL, then the reference model's exp_)", {}, false};
  for (const auto& [name, width] : std::vector<std::pair<std::string, unsigned>>{{"assign_valid", 1},
                                                                                 {"assign_sm", sm_w},
                                                                                 {"assign_slot", slot_w},
                                                                                 {"reserve_valid", 1},
                                                                                 {"reserve_sm", sm_w},
                                                                                 {"reserve_next", slot_w},
                                                                                 {"busy", 1}}) {
    out.traces.push_back({tb + name + "_o", width, {}, false});
    out.traces.push_back({tb + "exp_" + name, width, {}, false});
  }
  out.traces.push_back({tb + "mismatch", 1, {}, false});
  groups.push_back(std::move(out));
  GtkwGroup smst{"SMST (per SM: state, exp_state, kernel, next)", {}, false};
  for (std::uint32_t i = 0; i < c.num_sms; ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    smst.traces.push_back({tb + "smst_state" + at, state_w, states, false});
    smst.traces.push_back({tb + "smst_exp_state" + at, state_w, states, false});
    smst.traces.push_back({tb + "smst_kernel_valid" + at, 1, {}, false});
    smst.traces.push_back({tb + "smst_kernel" + at, slot_w, {}, false});
    smst.traces.push_back({tb + "smst_next_valid" + at, 1, {}, false});
    smst.traces.push_back({tb + "smst_next" + at, slot_w, {}, false});
  }
  groups.push_back(std::move(smst));
  GtkwGroup ksrt{"KSRT (per entry: valid, tokens, exp_tokens, has_tbs)", {}, false};
  for (std::uint32_t i = 0; i < c.num_slots; ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    ksrt.traces.push_back({tb + "ksrt_valid" + at, 1, {}, false});
    ksrt.traces.push_back({tb + "ksrt_tokens" + at, tok_w, {}, true});
    ksrt.traces.push_back({tb + "ksrt_exp_tokens" + at, tok_w, {}, true});
    ksrt.traces.push_back({tb + "ksrt_has_tbs" + at, 1, {}, false});
  }
  groups.push_back(std::move(ksrt));
  write_gtkw_save(stem + ".gtkw", rtl_wave_dump(vcd), groups);
}

/// Writes STEM.gtkw beside `vcd` for the leaky bucket's testbench top (tb/rtl/leaky_bucket_tb.sv).
inline void write_leaky_bucket_gtkwave(const std::string& vcd, const LeakyBucketReference::Config& c) {
  const unsigned k_w = rtl_index_bits(c.num_kernels);
  const unsigned lw = c.level_bits;
  const std::string tb = "leaky_bucket.leaky_bucket_tb.";
  std::vector<GtkwGroup> groups;
  groups.push_back({"inputs",
                    {{tb + "clk_i", 1, {}, false},
                     {tb + "rst_ni", 1, {}, false},
                     {tb + "advance_i", 1, {}, false},
                     {tb + "cfg_valid_i", 1, {}, false},
                     {tb + "cfg_kernel_i", k_w, {}, false},
                     {tb + "cfg_active_i", 1, {}, false},
                     {tb + "cfg_clear_i", 1, {}, false},
                     {tb + "cfg_capacity_i", lw, {}, false},
                     {tb + "cfg_rate_i", lw, {}, false}},
                    false});
  groups.push_back({"outputs (RTL, then the reference model's exp_)",
                    {{tb + "grant_valid_o", 1, {}, false},
                     {tb + "exp_grant_valid", 1, {}, false},
                     {tb + "grant_kernel_o", k_w, {}, false},
                     {tb + "exp_grant_kernel", k_w, {}, false},
                     {tb + "active_o", c.num_kernels, {}, false},
                     {tb + "exp_active", c.num_kernels, {}, false},
                     {tb + "level_o", c.num_kernels * lw, {}, false},
                     {tb + "exp_level", c.num_kernels * lw, {}, false},
                     {tb + "mismatch", 1, {}, false}},
                    false});
  write_gtkw_save(rtl_wave_stem(vcd) + ".gtkw", rtl_wave_dump(vcd), groups);
}

}  // namespace gpumux::rtl
