#include "policy/dss.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "core/error.h"
#include "policy/clock_edges.h"

namespace gpumux {

namespace {

using Ref = DssReference;

/// Safety net: a search provably stops (every reservation lowers the sum of squared tokens), so
/// this many cycles in one batch means a model bug, not a long search.
constexpr std::uint64_t kMaxCyclesPerBatch = 100'000'000;

SmState engine_state(Ref::SmState s) {
  switch (s) {
    case Ref::SmState::kIdle:
      return SmState::kIdle;
    case Ref::SmState::kRunning:
      return SmState::kRunning;
    case Ref::SmState::kReserved:
      return SmState::kReserved;
  }
  return SmState::kIdle;
}

DssImplementationFactory& implementation_factory() {
  static DssImplementationFactory factory;
  return factory;
}

bool& verify_skipped_has_tbs() {
  static bool on = false;
  return on;
}

bool same_outputs(const Ref::Outputs& a, const Ref::Outputs& b) {
  return a.busy == b.busy && a.assign.valid == b.assign.valid && a.assign.sm == b.assign.sm &&
         a.assign.slot == b.assign.slot && a.reserve.valid == b.reserve.valid &&
         a.reserve.sm == b.reserve.sm && a.reserve.next_slot == b.reserve.next_slot;
}

}  // namespace

void set_dss_implementation_factory(DssImplementationFactory factory) {
  implementation_factory() = std::move(factory);
}

void set_dss_verify_skipped_has_tbs(bool on) { verify_skipped_has_tbs() = on; }

int EqualShareTokens::tokens_for(ProcessId process, std::optional<int> os_tokens, std::uint32_t num_sms,
                                 std::uint32_t num_processes) {
  if (os_tokens) return *os_tokens;
  const std::uint32_t p = index(process);
  if (p >= by_process_.size()) by_process_.resize(p + 1);
  if (!by_process_[p]) {
    const std::uint32_t n = std::max(num_processes, 1U);
    const std::uint32_t share = num_sms / n;
    const std::uint32_t remainder = num_sms % n;
    std::uint32_t tokens = share;
    if (remainder_given_ < remainder) {
      ++remainder_given_;
      ++tokens;
    }
    by_process_[p] = static_cast<int>(tokens);
  }
  return *by_process_[p];
}

DssPolicy::DssPolicy(std::uint32_t token_bits, bool start_on_preempt_done, TokenHolder holder,
                     Latency latency, std::uint32_t search_width)
    : token_bits_(token_bits),
      start_on_preempt_done_(start_on_preempt_done),
      holder_(holder),
      latency_(latency),
      search_width_(search_width) {}

const OptionSpecs& DssPolicy::option_specs() {
  static const OptionSpecs specs = {
      OptionSpec::integer_or_auto("token_bits", 2, 31, "8 up to 63 SMs, else 16",
                                  "width of the signed token counters; the GPU's SM count must fit in "
                                  "2^(bits-1) - 1"),
      OptionSpec::on_off("preempt_done_starts", true,
                         "every finished preemption starts a token search (off: only Tanasic's two events, "
                         "a kernel entering the active queue and an SM going idle)"),
      OptionSpec::choice("tokens", {"process", "kernel"}, "process",
                         "who holds a token count: each GPU context, its active kernels sharing it (Tanasic "
                         "4.4 equal sharing), or each active kernel"),
      OptionSpec::choice(
          "latency", {"instant", "hardware"}, "instant",
          "when decisions take effect: at once, or after the cycles the search hardware "
          "needs at the GPU's core clock (N + 1 per decision for the serial scan, Tanasic 3.4)"),
      OptionSpec::integer(
          "search_width", 1, 4096, 1,
          "KSRT/SMST entries the search hardware compares per cycle (1: Tanasic's serial scan; "
          "N = max(SMs, KSRT entries): a comparator tree); ceil(N / width) + 1 cycles per "
          "decision, the same decisions (rtl/dss_token_policy.sv, docs/rtl-report.md)"),
  };
  return specs;
}

std::unique_ptr<SchedulingPolicy> DssPolicy::create(const OptionValues& options) {
  const std::optional<std::int64_t> bits = options.integer_or_auto("token_bits");
  return std::make_unique<DssPolicy>(
      bits ? static_cast<std::uint32_t>(*bits) : 0U, options.on("preempt_done_starts"),
      options.choice("tokens") == "kernel" ? TokenHolder::kKernel : TokenHolder::kProcess,
      options.choice("latency") == "hardware" ? Latency::kHardware : Latency::kInstant,
      static_cast<std::uint32_t>(options.integer("search_width")));
}

void DssPolicy::ensure_model(const EngineControl& control) {
  if (model_) return;
  Ref::Config config;
  config.num_sms = control.num_sms();
  config.num_slots = control.active_capacity();
  config.token_bits = token_bits_ != 0 ? token_bits_ : (config.num_sms <= 63 ? 8U : 16U);
  config.start_on_preempt_done = start_on_preempt_done_;
  const std::uint32_t entries = std::max(config.num_sms, config.num_slots);
  if (search_width_ > entries) {
    throw InputError("policy dss: search_width " + std::to_string(search_width_) + " is more than the " +
                     std::to_string(entries) +
                     " entries the search compares on this GPU (max(SMs, KSRT entries)); at most " +
                     std::to_string(entries));
  }
  config.entries_per_cycle = search_width_;
  try {
    model_ = std::make_unique<Ref>(config);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("policy dss: ") + e.what());
  }
  if (implementation_factory()) implementation_ = implementation_factory()(config);
  clock_mhz_ = control.core_clock_mhz();
  next_cycle_ = edge_at(control.now());
  slot_kernel_.assign(config.num_slots, std::nullopt);
  queued_kernel_.assign(config.num_slots, std::nullopt);
  queued_has_tbs_.assign(config.num_slots, 0);
}

std::optional<int> DssPolicy::tokens_given(KernelId kernel) const {
  return index(kernel) < tokens_given_.size() ? tokens_given_[index(kernel)] : std::nullopt;
}

std::optional<KernelId> DssPolicy::slot_kernel(std::uint32_t slot) const {
  return slot < slot_kernel_.size() ? slot_kernel_[slot] : std::nullopt;
}

std::optional<std::int32_t> DssPolicy::slot_tokens(std::uint32_t slot) const {
  if (!model_ || slot >= model_->num_slots() || !model_->slot(slot).valid) return std::nullopt;
  return model_->slot(slot).tokens;
}

void DssPolicy::push(const EngineControl& control, const Ref::Inputs& in, KernelId kernel) {
  pending_.push_back({in, kernel, control.now()});
  synced_epoch_.reset();  // the queued slots may differ from what the last sync_has_tbs() left
  switch (in.kind) {
    case Ref::EventKind::kKernelInsert:
      queued_kernel_[in.index] = kernel;
      queued_has_tbs_[in.index] = 1;
      queued_slots_.push_back(in.index);
      break;
    case Ref::EventKind::kKernelFinish:
      queued_kernel_[in.index].reset();
      queued_has_tbs_[in.index] = 0;
      queued_slots_.erase(std::remove(queued_slots_.begin(), queued_slots_.end(), in.index),
                          queued_slots_.end());
      break;
    case Ref::EventKind::kHasTbs:
      queued_has_tbs_[in.index] = in.flag ? 1 : 0;
      break;
    default:
      break;
  }
}

void DssPolicy::sync_has_tbs(const EngineControl& control) {
  // Called on every thread-block completion. Most find nothing changed since the last look (a thread
  // block issued that left others to issue): skipped on the engine's epoch. Otherwise only the (few)
  // slots holding a kernel are looked at.
  const std::uint64_t epoch = control.tbs_to_issue_epoch();
  if (synced_epoch_ == epoch) {
    if (verify_skipped_has_tbs()) {
      for (const std::uint32_t slot : queued_slots_) {
        if (slot_has_tbs(slot, control) != (queued_has_tbs_[slot] != 0)) {
          violation("has_tbs of KSRT slot " + std::to_string(slot) +
                        " changed while the engine's epoch stood still (a look was skipped wrongly)",
                    0, queued_kernel_[slot], control);
        }
      }
    }
    return;
  }
  for (std::size_t i = 0; i < queued_slots_.size(); ++i) {
    const std::uint32_t slot = queued_slots_[i];
    const bool has = slot_has_tbs(slot, control);
    if (has != (queued_has_tbs_[slot] != 0)) push(control, Ref::Inputs::has_tbs(slot, has));
  }
  synced_epoch_ = epoch;
}

void DssPolicy::on_kernel_arrival(KernelId kernel, EngineControl& control) {
  ensure_model(control);
  const KernelStatus& k = control.kernel(kernel);
  std::uint32_t slot = k.ksrt_slot;
  if (holder_ == TokenHolder::kProcess) {
    const std::uint32_t p = index(k.process);
    if (p >= process_slot_.size()) process_slot_.resize(p + 1);
    if (process_slot_[p]) {
      // The context holds its entry already: its count now covers this kernel too.
      sync_has_tbs(control);
      run(control);
      return;
    }
    // The context's first active kernel: the lowest free entry of the model's table.
    slot = 0;
    while (slot < model_->num_slots() && queued_kernel_[slot]) ++slot;
    process_slot_[p] = slot;
  }
  if (slot >= model_->num_slots() || queued_kernel_[slot]) {
    violation("kernel admitted to KSRT slot " + std::to_string(slot) + ", which DSS holds busy", 0, kernel,
              control);
  }
  const int given = shares_.tokens_for(k.process, k.os_tokens, control.num_sms(), control.num_contexts());
  if (given > model_->token_max()) {
    // The hardware would clamp (dss_reference.h, "Tokens"); a budget the counter cannot hold is a
    // configuration mistake, not something to change silently.
    throw InputError("policy dss: process #" + std::to_string(index(k.process)) +
                     " (in workload order) has " + std::to_string(given) + " tokens, more than the " +
                     std::to_string(model_->config().token_bits) + "-bit token counter holds (at most " +
                     std::to_string(model_->token_max()) +
                     "); lower the workload's `tokens` or raise --policy-opt token_bits");
  }
  const std::int32_t tokens = std::max(given, model_->insert_min());
  if (index(kernel) >= tokens_given_.size()) tokens_given_.resize(index(kernel) + 1);
  tokens_given_[index(kernel)] = tokens;
  push(control, Ref::Inputs::kernel_insert(slot, tokens), kernel);
  run(control);
}

void DssPolicy::on_sm_idle(SmId sm, EngineControl& control) {
  ensure_model(control);
  // After a preemption whose `next` kernel finished meanwhile, the engine reports the SM idle once
  // more; the model made it idle (and searched) on preempt_done already.
  if (model_->sm(index(sm)).state == Ref::SmState::kIdle) return;
  push(control, Ref::Inputs::sm_idle(index(sm)));
  run(control);
}

void DssPolicy::on_tb_finished(SmId /*sm*/, KernelId /*kernel*/, TimePs /*duration_ps*/,
                               EngineControl& control) {
  if (!model_) return;
  // A kernel issues its last thread block when an SM backfills after a completion: has_tbs falls.
  sync_has_tbs(control);
  if (!pending_.empty()) run(control);
}

void DssPolicy::on_kernel_finished(KernelId kernel, EngineControl& control) {
  ensure_model(control);
  const std::optional<std::uint32_t> slot = slot_of(kernel, control);
  if (!slot || *slot >= model_->num_slots() || !queued_kernel_[*slot] ||
      (holder_ == TokenHolder::kKernel && queued_kernel_[*slot] != kernel)) {
    violation("finished kernel is not in the KSRT slot DSS knows it by", 0, kernel, control);
  }
  if (holder_ == TokenHolder::kProcess) {
    const ProcessId process = control.kernel(kernel).process;
    for (const KernelId other : control.active_kernels()) {
      if (control.kernel(other).process != process) continue;
      // The context keeps its entry for its other active kernels; one of them now stands for it.
      if (queued_kernel_[*slot] == kernel) {
        queued_kernel_[*slot] = other;
        synced_epoch_.reset();
      }
      if (slot_kernel_[*slot] == kernel) slot_kernel_[*slot] = other;
      // SMs reserved for the context with the finished kernel as their `next` are set up for another
      // of its kernels instead (Tanasic 3.4: the target may change while the SM is preempted).
      const KernelId next = kernel_of_slot(*slot, control);
      for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
        const SmStatus& sm = control.sm(SmId{s});
        if (sm.state == SmState::kReserved && sm.next == kernel) control.reserve_sm(SmId{s}, next);
      }
      sync_has_tbs(control);
      run(control);
      return;
    }
    process_slot_[index(process)].reset();
  }
  push(control, Ref::Inputs::kernel_finish(*slot), kernel);
  run(control);
}

void DssPolicy::on_preemption_done(SmId sm, KernelId /*preempted*/, EngineControl& control) {
  ensure_model(control);
  push(control, Ref::Inputs::preempt_done(index(sm)));
  run(control);
}

void DssPolicy::run(EngineControl& control) {
  if (latency_ == Latency::kHardware) {
    run_timed(control);
    return;
  }
  sync_has_tbs(control);
  std::uint64_t cycles = 0;
  while (!pending_.empty() || model_->busy()) {
    if (++cycles > kMaxCyclesPerBatch) violation("DSS search did not stop", 0, std::nullopt, control);
    if (pending_.empty()) {
      apply(step(nullptr, control), control);
      continue;
    }
    const Pending p = pending_.front();
    pending_.pop_front();
    apply(step(&p, control), control);
  }
  check_agreement(control);
}

Ref::Outputs DssPolicy::step(const Pending* pending, EngineControl& control) {
  Ref::Inputs in;
  if (pending != nullptr) {
    in = pending->in;
    if (in.kind == Ref::EventKind::kKernelInsert) slot_kernel_[in.index] = pending->kernel;
    if (in.kind == Ref::EventKind::kKernelFinish) slot_kernel_[in.index].reset();
  }
  Ref::Outputs out;
  try {
    out = model_->step(in);
  } catch (const std::invalid_argument& e) {
    const bool sm_event = in.kind == Ref::EventKind::kSmIdle || in.kind == Ref::EventKind::kPreemptDone;
    violation(std::string("event rejected by the DSS model: ") + e.what(), sm_event ? in.index : 0,
              std::nullopt, control);
  }
  if (implementation_) {
    // Co-simulation: the implementation's decisions are applied; the reference checks them.
    Ref::Outputs decided;
    try {
      decided = implementation_->step(in, *model_);
    } catch (const std::logic_error& e) {
      violation(std::string("co-simulation: ") + e.what(), 0, std::nullopt, control);
    }
    if (!same_outputs(decided, out)) {
      violation("co-simulation: the RTL's outputs differ from the reference model's in cycle " +
                    std::to_string(model_->stats().cycles),
                decided.assign.valid ? decided.assign.sm : decided.reserve.sm, std::nullopt, control);
    }
    out = decided;
  }
  ++next_cycle_;
  return out;
}

TimePs DssPolicy::edge_time(std::uint64_t cycle) const { return gpumux::edge_time(cycle, clock_mhz_); }

std::uint64_t DssPolicy::edge_at(TimePs time) const { return gpumux::edge_at(time, clock_mhz_); }

void DssPolicy::clock_until(std::uint64_t cycle, EngineControl& control) {
  if (!model_->busy()) {
    // An idle search does nothing until an event: the idle cycles need no clocking.
    next_cycle_ = std::max(next_cycle_, cycle + 1);
    return;
  }
  while (next_cycle_ <= cycle) {
    const Ref::Outputs out = step(nullptr, control);
    if (out.assign.valid || out.reserve.valid) {
      violation("DSS decided in cycle " + std::to_string(next_cycle_ - 1) + ", before the cycle planned",
                out.assign.valid ? out.assign.sm : out.reserve.sm, std::nullopt, control);
    }
    if (!model_->busy()) {
      next_cycle_ = std::max(next_cycle_, cycle + 1);
      return;
    }
  }
}

std::optional<std::uint64_t> DssPolicy::next_decision_cycle() const {
  if (!model_->busy()) return std::nullopt;
  DssReference ahead = *model_;
  for (std::uint64_t cycle = next_cycle_;; ++cycle) {
    const Ref::Outputs out = ahead.step(Ref::Inputs::none());
    if (out.assign.valid || out.reserve.valid) return cycle;
    if (!ahead.busy()) return std::nullopt;  // the search stops without deciding
  }
}

void DssPolicy::run_timed(EngineControl& control) {
  sync_has_tbs(control);
  const TimePs now = control.now();
  std::uint64_t steps = 0;
  for (;;) {
    if (++steps > kMaxCyclesPerBatch) violation("DSS search did not stop", 0, std::nullopt, control);
    // The next thing the hardware does: take the first pending event (one per cycle, at the first edge
    // at or after it happened), or make the planned decision; an event in the decision's cycle wins
    // (the model restarts its search on an event).
    std::optional<std::uint64_t> event_cycle;
    if (!pending_.empty()) event_cycle = std::max(next_cycle_, edge_at(pending_.front().at_ps));
    if (event_cycle && (!decision_ || *event_cycle <= *decision_)) {
      if (edge_time(*event_cycle) > now) break;
      if (*event_cycle > 0) clock_until(*event_cycle - 1, control);
      const Pending p = pending_.front();
      pending_.pop_front();
      apply(step(&p, control), control);  // an event cycle does no search work: nothing to apply
      decision_ = next_decision_cycle();
      continue;
    }
    if (!decision_ || edge_time(*decision_) > now) break;
    if (*decision_ > 0) clock_until(*decision_ - 1, control);
    const Ref::Outputs out = step(nullptr, control);
    if (!out.assign.valid && !out.reserve.valid) {
      violation("DSS made no decision in the cycle planned for one", 0, std::nullopt, control);
    }
    apply(out, control);  // may queue has_tbs events (at now)
    decision_ = next_decision_cycle();
  }
  if (pending_.empty()) check_agreement(control);
  std::optional<std::uint64_t> wake = decision_;
  if (!pending_.empty()) {
    const std::uint64_t event_cycle = std::max(next_cycle_, edge_at(pending_.front().at_ps));
    if (!wake || event_cycle < *wake) wake = event_cycle;
  }
  if (wake) control.wake_at(edge_time(*wake));
}

void DssPolicy::on_timer(EngineControl& control) {
  if (model_) run(control);
}

void DssPolicy::on_tb_started(SmId /*sm*/, KernelId /*kernel*/, EngineControl& control) {
  // Latency hardware: a kernel's last thread block issued lowers its has_tbs bit now, not at the next
  // hook: the event is stamped now and the policy woken to feed it at the next edge (a decision planned
  // later restarts, as in the hardware). Instant decisions read the bit at the next hook instead.
  if (latency_ != Latency::kHardware || !model_) return;
  const std::size_t before = pending_.size();
  sync_has_tbs(control);
  if (pending_.size() != before) control.wake_at(control.now());
}

void DssPolicy::apply(const Ref::Outputs& out, EngineControl& control) {
  if (out.assign.valid) {
    const KernelId k = kernel_of_slot(out.assign.slot, control);
    const SmId sm{out.assign.sm};
    control.assign_sm(sm, k);
    // The driver issues after this hook; the thread blocks the SM will take are claimed now.
    if (control.sm(sm).state == SmState::kRunning && control.sm(sm).claimed_tbs == 0) {
      violation("DSS assigned an SM that will receive no thread block", out.assign.sm, k, control);
    }
  }
  if (out.reserve.valid) {
    const KernelId k = kernel_of_slot(out.reserve.next_slot, control);
    control.reserve_sm(SmId{out.reserve.sm}, k);
  }
  if (out.assign.valid || out.reserve.valid) sync_has_tbs(control);
}

KernelId DssPolicy::kernel_of_slot(std::uint32_t slot, const EngineControl& control) const {
  const std::optional<KernelId> k = slot < slot_kernel_.size() ? slot_kernel_[slot] : std::nullopt;
  if (!k || !control.kernel(*k).active) {
    violation("DSS decided for KSRT slot " + std::to_string(slot) + ", which holds no active kernel", 0, k,
              control);
  }
  if (holder_ == TokenHolder::kKernel) return *k;
  // Per-process tokens: the context's first active kernel (admission order) with thread blocks to issue.
  const ProcessId process = control.kernel(*k).process;
  for (const KernelId other : control.active_kernels()) {
    if (control.kernel(other).process == process && control.kernel(other).has_tbs_to_issue()) return other;
  }
  return *k;
}

bool DssPolicy::context_has_tbs(ProcessId process, const EngineControl& control) const {
  for (const KernelId other : control.active_kernels()) {
    const KernelStatus& o = control.kernel(other);
    if (o.process == process && o.has_tbs_to_issue()) return true;
  }
  return false;
}

std::optional<std::uint32_t> DssPolicy::slot_of(KernelId kernel, const EngineControl& control) const {
  if (holder_ == TokenHolder::kKernel) return control.kernel(kernel).ksrt_slot;
  const std::uint32_t p = index(control.kernel(kernel).process);
  return p < process_slot_.size() ? process_slot_[p] : std::nullopt;
}

void DssPolicy::check_agreement(const EngineControl& control) const {
  // Counted on every batch; the tables are N_SM entries.
  const bool per_process = holder_ == TokenHolder::kProcess;
  auto same_kernel = [&](bool model_valid, std::uint32_t model_slot, const std::optional<KernelId>& engine) {
    if (model_valid) {
      if (!engine.has_value()) return false;
      if (!per_process) return slot_kernel_[model_slot] == engine;
      // Per-process tokens: the SM holds a kernel of the slot's context.
      return slot_kernel_[model_slot].has_value() &&
             control.kernel(*slot_kernel_[model_slot]).process == control.kernel(*engine).process;
    }
    return !engine.has_value() || !control.kernel(*engine).active;  // none, or a finished kernel
  };
  for (std::uint32_t s = 0; s < model_->num_sms(); ++s) {
    const Ref::Sm& m = model_->sm(s);
    const SmStatus& e = control.sm(SmId{s});
    std::string what;
    if (engine_state(m.state) != e.state) {
      what = std::string("SMST says ") + to_string(e.state) + ", DSS model says " + Ref::to_string(m.state);
    } else if (m.state != Ref::SmState::kIdle && !same_kernel(m.kernel_valid, m.kernel, e.kernel)) {
      what = "SMST and DSS model disagree on the SM's kernel (model: " +
             (m.kernel_valid ? "slot " + std::to_string(m.kernel) : std::string("none")) + ")";
    } else if (m.state == Ref::SmState::kReserved && !same_kernel(m.next_valid, m.next, e.next)) {
      what = "SMST and DSS model disagree on the kernel the SM is reserved for (model: " +
             (m.next_valid ? "slot " + std::to_string(m.next) : std::string("none")) + ")";
    }
    if (!what.empty()) violation(what, s, e.kernel ? e.kernel : e.next, control);
  }
  std::uint32_t valid = 0;
  for (std::uint32_t slot = 0; slot < model_->num_slots(); ++slot) {
    valid += model_->slot(slot).valid ? 1U : 0U;
  }
  std::vector<ProcessId> holders;
  for (KernelId k : control.active_kernels()) {
    const std::optional<std::uint32_t> slot = slot_of(k, control);
    const bool known =
        slot && *slot < model_->num_slots() && model_->slot(*slot).valid && slot_kernel_[*slot].has_value() &&
        (per_process ? control.kernel(*slot_kernel_[*slot]).process == control.kernel(k).process
                     : slot_kernel_[*slot] == k);
    if (!known) violation("active kernel missing from the DSS model's KSRT", 0, k, control);
    const ProcessId p = control.kernel(k).process;
    if (std::find(holders.begin(), holders.end(), p) == holders.end()) holders.push_back(p);
  }
  const std::size_t expected = per_process ? holders.size() : control.active_kernels().size();
  if (valid != expected) {
    violation("DSS model holds " + std::to_string(valid) + " token holders, the active queue " +
                  std::to_string(expected),
              0, std::nullopt, control);
  }
  const Ref::Check check = model_->check_invariants();
  if (!check) violation(check.message, 0, std::nullopt, control);
}

void DssPolicy::violation(const std::string& what, std::uint32_t sm, std::optional<KernelId> kernel,
                          const EngineControl& control) const {
  std::ostringstream msg;
  msg << "invariant violated at " << ns_from_ps(control.now()) << " ns on SM " << sm << ", kernel ";
  if (kernel) {
    const KernelStatus& k = control.kernel(*kernel);
    msg << "'" << (k.desc != nullptr ? k.desc->name : std::string("?")) << "' (launch #" << index(*kernel)
        << ", process #" << index(k.process) << ")";
  } else {
    msg << "none";
  }
  msg << ": dss: " << what;
  throw InvariantViolation(msg.str());
}

}  // namespace gpumux
