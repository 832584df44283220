#include "dss_check.h"

#include <limits>
#include <sstream>
#include <vector>

namespace gpumux::rtl {

namespace {

using Ref = DssReference;
using Kind = Ref::EventKind;

template <typename T>
T pick(Rng& rng, const std::vector<T>& items) {
  return items[rng.below(items.size())];
}

}  // namespace

DssStimulus::DssStimulus(std::uint64_t seed) : rng_(seed, 0x4D55) {
  cycles_ = 40 + static_cast<std::uint32_t>(rng_.below(1500));
  event_rate_ = pick(rng_, std::vector<double>{0.02, 0.05, 0.15, 0.4, 0.8, 1.0});
  settle_rate_ = pick(rng_, std::vector<double>{0.0, 0.3, 0.9});
  weights_[static_cast<int>(Kind::kKernelInsert)] = 1 + static_cast<std::uint32_t>(rng_.below(4));
  weights_[static_cast<int>(Kind::kKernelFinish)] = 1 + static_cast<std::uint32_t>(rng_.below(3));
  weights_[static_cast<int>(Kind::kSmIdle)] = 1 + static_cast<std::uint32_t>(rng_.below(6));
  weights_[static_cast<int>(Kind::kPreemptDone)] = 1 + static_cast<std::uint32_t>(rng_.below(6));
  weights_[static_cast<int>(Kind::kHasTbs)] = 1 + static_cast<std::uint32_t>(rng_.below(3));
}

std::int32_t DssStimulus::draw_tokens(const DssReference& ref) {
  const auto sms = static_cast<std::int64_t>(ref.num_sms());
  const std::uint64_t r = rng_.below(100);
  auto in_range = [&](std::int64_t lo, std::int64_t hi) {
    return static_cast<std::int32_t>(
        lo + static_cast<std::int64_t>(rng_.below(static_cast<std::uint64_t>(hi - lo + 1))));
  };
  if (r < 70) return in_range(-2, sms + 2);
  if (r < 85) return in_range(std::int64_t{ref.insert_min()} - 3, std::int64_t{ref.token_max()} + 3);
  if (r < 92) {
    return pick(rng_, std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min(),
                                                std::numeric_limits<std::int32_t>::max(), ref.insert_min(),
                                                ref.insert_min() - 1, ref.token_max(), ref.token_max() + 1,
                                                ref.token_min()});
  }
  return in_range(-sms, 2 * sms);
}

DssReference::Inputs DssStimulus::next(const DssReference& ref) {
  if (settling_ && ref.busy()) return Ref::Inputs::none();
  settling_ = false;
  if (rng_.uniform() >= event_rate_) return Ref::Inputs::none();

  std::vector<std::uint32_t> free_slots;
  std::vector<std::uint32_t> used_slots;
  for (std::uint32_t k = 0; k < ref.num_slots(); ++k) {
    (ref.slot(k).valid ? used_slots : free_slots).push_back(k);
  }
  std::vector<std::uint32_t> busy_sms;
  std::vector<std::uint32_t> reserved_sms;
  for (std::uint32_t s = 0; s < ref.num_sms(); ++s) {
    if (ref.sm(s).state != Ref::SmState::kIdle) busy_sms.push_back(s);
    if (ref.sm(s).state == Ref::SmState::kReserved) reserved_sms.push_back(s);
  }

  std::uint32_t w[6] = {};
  for (int k = 1; k < 6; ++k) w[k] = weights_[k];
  if (free_slots.empty()) w[static_cast<int>(Kind::kKernelInsert)] = 0;
  if (used_slots.empty()) w[static_cast<int>(Kind::kKernelFinish)] = w[static_cast<int>(Kind::kHasTbs)] = 0;
  if (reserved_sms.empty()) w[static_cast<int>(Kind::kPreemptDone)] = 0;
  std::uint32_t total = 0;
  for (std::uint32_t x : w) total += x;
  std::uint64_t r = rng_.below(total);  // sm_idle is always possible: total > 0
  int kind = 1;
  while (r >= w[kind]) r -= w[kind++];

  Ref::Inputs in;
  switch (static_cast<Kind>(kind)) {
    case Kind::kKernelInsert:
      in = Ref::Inputs::kernel_insert(pick(rng_, free_slots), draw_tokens(ref));
      break;
    case Kind::kKernelFinish:
      in = Ref::Inputs::kernel_finish(pick(rng_, used_slots));
      break;
    case Kind::kHasTbs: {
      const std::uint32_t slot = pick(rng_, used_slots);
      const bool flip = rng_.below(10) < 7;
      in = Ref::Inputs::has_tbs(slot, flip ? !ref.slot(slot).has_tbs : ref.slot(slot).has_tbs);
      break;
    }
    case Kind::kPreemptDone:
      in = Ref::Inputs::preempt_done(pick(rng_, reserved_sms));
      break;
    default: {
      const bool any = busy_sms.empty() || rng_.below(10) < 2;
      in = Ref::Inputs::sm_idle(any ? static_cast<std::uint32_t>(rng_.below(ref.num_sms()))
                                    : pick(rng_, busy_sms));
      break;
    }
  }
  if (rng_.uniform() < settle_rate_) settling_ = true;
  return in;
}

std::string compare(const DssReference& ref, const DssReference::Outputs& ref_out, const DssSnapshot& rtl) {
  std::ostringstream d;
  const Ref::Outputs& o = rtl.out;
  if (o.busy != ref_out.busy || o.assign.valid != ref_out.assign.valid || o.assign.sm != ref_out.assign.sm ||
      o.assign.slot != ref_out.assign.slot || o.reserve.valid != ref_out.reserve.valid ||
      o.reserve.sm != ref_out.reserve.sm || o.reserve.next_slot != ref_out.reserve.next_slot) {
    d << "outputs differ";
    return d.str();
  }
  for (std::uint32_t k = 0; k < ref.num_slots(); ++k) {
    const Ref::Slot& a = ref.slot(k);
    const Ref::Slot& b = rtl.slots[k];
    if (a.valid != b.valid || a.tokens != b.tokens || a.has_tbs != b.has_tbs) {
      d << "KSRT entry " << k << " after the edge: reference valid=" << a.valid << " tokens=" << a.tokens
        << " has_tbs=" << a.has_tbs << ", RTL valid=" << b.valid << " tokens=" << b.tokens
        << " has_tbs=" << b.has_tbs;
      return d.str();
    }
  }
  for (std::uint32_t s = 0; s < ref.num_sms(); ++s) {
    const Ref::Sm& a = ref.sm(s);
    const Ref::Sm& b = rtl.sms[s];
    if (a.state != b.state || a.kernel_valid != b.kernel_valid || a.kernel != b.kernel ||
        a.next_valid != b.next_valid || a.next != b.next) {
      auto show = [&](const Ref::Sm& m) {
        std::ostringstream x;
        x << Ref::to_string(m.state) << " kernel=" << (m.kernel_valid ? "" : "!") << m.kernel
          << " next=" << (m.next_valid ? "" : "!") << m.next;
        return x.str();
      };
      d << "SMST entry " << s << " after the edge: reference " << show(a) << ", RTL " << show(b);
      return d.str();
    }
  }
  return {};
}

std::string describe(const DssReference::Inputs& in) {
  std::ostringstream s;
  s << Ref::to_string(in.kind);
  switch (in.kind) {
    case Kind::kNone:
      break;
    case Kind::kKernelInsert:
      s << "{slot " << in.index << ", tokens " << in.tokens << "}";
      break;
    case Kind::kHasTbs:
      s << "{slot " << in.index << ", " << in.flag << "}";
      break;
    case Kind::kKernelFinish:
      s << "{slot " << in.index << "}";
      break;
    default:
      s << "{sm " << in.index << "}";
      break;
  }
  return s.str();
}

std::string describe(const DssReference::Outputs& out) {
  std::ostringstream s;
  s << "busy=" << out.busy << " assign=";
  if (out.assign.valid) {
    s << "{sm " << out.assign.sm << ", slot " << out.assign.slot << "}";
  } else {
    s << "- (sm " << out.assign.sm << ", slot " << out.assign.slot << ")";
  }
  s << " reserve=";
  if (out.reserve.valid) {
    s << "{sm " << out.reserve.sm << ", next " << out.reserve.next_slot << "}";
  } else {
    s << "- (sm " << out.reserve.sm << ", next " << out.reserve.next_slot << ")";
  }
  return s.str();
}

std::string describe_config(const DssReference::Config& config) {
  std::ostringstream s;
  s << "NumSms=" << config.num_sms << " NumSlots=" << config.num_slots << " TokenW=" << config.token_bits
    << " StartOnPreemptDone=" << config.start_on_preempt_done
    << " EntriesPerCycle=" << config.entries_per_cycle;
  return s.str();
}

}  // namespace gpumux::rtl
