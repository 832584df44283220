#include "policy/dss_reference.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace gpumux {

DssReference::DssReference(const Config& config) : config_(config) {
  if (config_.num_sms == 0 || config_.num_slots == 0) {
    throw std::invalid_argument("DssReference: num_sms and num_slots must be at least 1");
  }
  if (config_.num_sms > 65535 || config_.num_slots > 65535) {
    throw std::invalid_argument("DssReference: at most 65535 SMs and slots");
  }
  if (config_.token_bits < 2 || config_.token_bits > 31) {
    throw std::invalid_argument("DssReference: token_bits must be 2..31");
  }
  token_max_ = static_cast<std::int32_t>((std::uint32_t{1} << (config_.token_bits - 1)) - 1);
  token_min_ = -token_max_ - 1;
  if (config_.num_sms > static_cast<std::uint32_t>(token_max_)) {
    throw std::invalid_argument("DssReference: " + std::to_string(config_.token_bits) +
                                "-bit tokens cannot count the debt of " + std::to_string(config_.num_sms) +
                                " SMs (need num_sms <= 2^(token_bits-1) - 1)");
  }
  scan_length_ = std::max(config_.num_sms, config_.num_slots);
  if (config_.entries_per_cycle == 0 || config_.entries_per_cycle > scan_length_) {
    throw std::invalid_argument("DssReference: entries_per_cycle must be 1.." + std::to_string(scan_length_) +
                                " (max(num_sms, num_slots)), got " +
                                std::to_string(config_.entries_per_cycle));
  }
  reset();
}

std::uint32_t DssReference::scan_cycles(const Config& config) {
  const std::uint32_t n = std::max(config.num_sms, config.num_slots);
  const std::uint32_t p = std::max<std::uint32_t>(config.entries_per_cycle, 1);
  return (n + p - 1) / p;
}

std::uint32_t DssReference::iteration_cycles(const Config& config) { return scan_cycles(config) + 1; }

void DssReference::reset() {
  slots_.assign(config_.num_slots, Slot{});
  sms_.assign(config_.num_sms, Sm{});
  phase_ = Phase::kIdle;
  scan_ = Scan{};
  stats_ = Stats{};
  search_cycles_ = 0;
}

DssReference::Outputs DssReference::step(const Inputs& in) {
  if (in.kind != EventKind::kNone) validate_event(in);  // throws before any state changes
  Outputs out;
  out.busy = phase_ != Phase::kIdle;
  ++stats_.cycles;
  if (out.busy) {
    ++stats_.busy_cycles;
    ++search_cycles_;
  }

  if (in.kind != EventKind::kNone) {
    // An event cycle does no search work; a search in progress restarts at scan index 0.
    const bool start = apply_event(in);
    if (phase_ != Phase::kIdle) {
      ++stats_.restarts;
      begin_scan();
    } else if (start) {
      ++stats_.searches;
      search_cycles_ = 0;
      begin_scan();
    }
  } else if (phase_ == Phase::kScan) {
    // One scan cycle: entries index .. index + P - 1, folded in index order (what the RTL's tree of
    // lower-index-wins merges computes; see the header).
    const std::uint32_t end = std::min(scan_.index + config_.entries_per_cycle, scan_length_);
    for (std::uint32_t i = scan_.index; i < end; ++i) scan_entry(i);
    scan_.index = end;
    if (scan_.index == scan_length_) phase_ = Phase::kDecide;
  } else if (phase_ == Phase::kDecide) {
    ++stats_.iterations;
    if (decide(out)) {
      begin_scan();
    } else {
      phase_ = Phase::kIdle;
      stats_.max_search_cycles = std::max(stats_.max_search_cycles, search_cycles_);
      search_cycles_ = 0;
    }
  }
  return out;
}

void DssReference::validate_event(const Inputs& in) const {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument(std::string("DssReference: ") + to_string(in.kind) + " " +
                                std::to_string(in.index) + ": " + what);
  };
  switch (in.kind) {
    case EventKind::kNone:
      return;
    case EventKind::kKernelInsert:
      if (in.index >= config_.num_slots) fail("no such KSRT slot");
      if (slots_[in.index].valid) fail("slot already holds a kernel");
      return;
    case EventKind::kKernelFinish:
    case EventKind::kHasTbs:
      if (in.index >= config_.num_slots) fail("no such KSRT slot");
      if (!slots_[in.index].valid) fail("slot holds no kernel");
      return;
    case EventKind::kSmIdle:
      if (in.index >= config_.num_sms) fail("no such SM");
      return;
    case EventKind::kPreemptDone:
      if (in.index >= config_.num_sms) fail("no such SM");
      if (sms_[in.index].state != SmState::kReserved) fail("SM is not reserved");
      return;
  }
  fail("unknown event kind");
}

bool DssReference::apply_event(const Inputs& in) {
  switch (in.kind) {
    case EventKind::kNone:
      return false;
    case EventKind::kKernelInsert: {
      Slot& s = slots_[in.index];
      const std::int32_t tokens = std::clamp(in.tokens, insert_min(), token_max_);
      s = Slot{true, tokens, true, tokens};
      return true;
    }
    case EventKind::kKernelFinish: {
      slots_[in.index] = Slot{};
      for (Sm& m : sms_) {
        if (m.kernel_valid && m.kernel == in.index) m.kernel_valid = false;
        if (m.next_valid && m.next == in.index) m.next_valid = false;
      }
      return false;
    }
    case EventKind::kSmIdle: {
      Sm& m = sms_[in.index];
      if (m.state == SmState::kRunning && m.kernel_valid) ++slots_[m.kernel].tokens;
      if (m.state == SmState::kReserved && m.next_valid) ++slots_[m.next].tokens;
      m = Sm{};
      return true;
    }
    case EventKind::kPreemptDone: {
      Sm& m = sms_[in.index];
      if (m.next_valid) {
        m = Sm{SmState::kRunning, true, m.next, false, 0};
        return config_.start_on_preempt_done;
      }
      m = Sm{};
      return true;
    }
    case EventKind::kHasTbs:
      slots_[in.index].has_tbs = in.flag;
      return false;
  }
  return false;
}

void DssReference::begin_scan() {
  phase_ = Phase::kScan;
  scan_ = Scan{};
}

void DssReference::scan_entry(std::uint32_t i) {
  if (i < config_.num_slots) {
    const Slot& s = slots_[i];
    if (s.valid && s.has_tbs && (!scan_.max_valid || s.tokens > scan_.max_tokens)) {
      scan_.max_valid = true;
      scan_.max_slot = i;
      scan_.max_tokens = s.tokens;
    }
  }
  if (i < config_.num_sms) {
    const Sm& m = sms_[i];
    if (m.state == SmState::kIdle) {
      if (!scan_.idle_valid) {
        scan_.idle_valid = true;
        scan_.idle_sm = i;
      }
    } else if (m.state == SmState::kRunning && m.kernel_valid) {
      // The first running SM of the final ksr_min sets the candidate, and no later SM of the same
      // slot displaces it: min_sm is that slot's lowest-index running SM.
      const std::int32_t t = slots_[m.kernel].tokens;
      if (!scan_.min_valid || t < scan_.min_tokens || (t == scan_.min_tokens && m.kernel < scan_.min_slot)) {
        scan_.min_valid = true;
        scan_.min_slot = m.kernel;
        scan_.min_tokens = t;
        scan_.min_sm = i;
      }
    }
  }
}

bool DssReference::decide(Outputs& out) {
  if (scan_.idle_valid && scan_.max_valid) {
    sms_[scan_.idle_sm] = Sm{SmState::kRunning, true, scan_.max_slot, false, 0};
    --slots_[scan_.max_slot].tokens;
    out.assign = Assign{true, scan_.idle_sm, scan_.max_slot};
    ++stats_.assigns;
    return true;
  }
  if (scan_.max_valid && scan_.min_valid && scan_.max_tokens > scan_.min_tokens + 1) {
    Sm& m = sms_[scan_.min_sm];
    m.state = SmState::kReserved;
    m.next_valid = true;
    m.next = scan_.max_slot;
    ++slots_[scan_.min_slot].tokens;
    --slots_[scan_.max_slot].tokens;
    out.reserve = Reserve{true, scan_.min_sm, scan_.max_slot};
    ++stats_.reservations;
    return true;
  }
  return false;
}

std::uint32_t DssReference::held_sms(std::uint32_t slot) const {
  std::uint32_t n = 0;
  for (const Sm& m : sms_) {
    if ((m.state == SmState::kRunning && m.kernel_valid && m.kernel == slot) ||
        (m.state == SmState::kReserved && m.next_valid && m.next == slot)) {
      ++n;
    }
  }
  return n;
}

DssReference::Check DssReference::check_invariants() const {
  std::ostringstream msg;
  auto fail = [&]() { return Check{false, msg.str()}; };
  for (std::uint32_t i = 0; i < config_.num_sms; ++i) {
    const Sm& m = sms_[i];
    if ((m.kernel_valid && (m.kernel >= config_.num_slots || !slots_[m.kernel].valid)) ||
        (m.next_valid && (m.next >= config_.num_slots || !slots_[m.next].valid))) {
      msg << "SM " << i << " (" << to_string(m.state) << ") refers to an empty KSRT slot";
      return fail();
    }
    if ((m.state == SmState::kIdle && (m.kernel_valid || m.next_valid)) ||
        (m.state == SmState::kRunning && m.next_valid)) {
      msg << "SM " << i << " is " << to_string(m.state) << " with a stale kernel or next field";
      return fail();
    }
  }
  for (std::uint32_t k = 0; k < config_.num_slots; ++k) {
    const Slot& s = slots_[k];
    if (!s.valid) continue;
    const std::uint32_t held = held_sms(k);
    if (s.tokens + static_cast<std::int32_t>(held) != s.granted) {
      msg << "tokens not conserved in KSRT slot " << k << ": " << s.tokens << " tokens + " << held
          << " SMs held != " << s.granted << " given at insert";
      return fail();
    }
    if (s.tokens < token_min_ || s.tokens > token_max_) {
      msg << "tokens of KSRT slot " << k << " (" << s.tokens << ") outside the " << config_.token_bits
          << "-bit range";
      return fail();
    }
  }
  if (phase_ == Phase::kScan && scan_.index >= scan_length_) {
    msg << "scan index " << scan_.index << " past the end (" << scan_length_ << ")";
    return fail();
  }
  if (phase_ == Phase::kScan && scan_.index % config_.entries_per_cycle != 0) {
    msg << "scan index " << scan_.index << " not at the start of a scan cycle (" << config_.entries_per_cycle
        << " entries per cycle)";
    return fail();
  }
  return {};
}

const char* DssReference::to_string(EventKind kind) {
  switch (kind) {
    case EventKind::kNone:
      return "none";
    case EventKind::kKernelInsert:
      return "kernel_insert";
    case EventKind::kKernelFinish:
      return "kernel_finish";
    case EventKind::kSmIdle:
      return "sm_idle";
    case EventKind::kPreemptDone:
      return "preempt_done";
    case EventKind::kHasTbs:
      return "has_tbs";
  }
  return "?";
}

const char* DssReference::to_string(SmState state) {
  switch (state) {
    case SmState::kIdle:
      return "idle";
    case SmState::kRunning:
      return "running";
    case SmState::kReserved:
      return "reserved";
  }
  return "?";
}

}  // namespace gpumux
