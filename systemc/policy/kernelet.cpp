#include "policy/kernelet.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "config/yaml_reader.h"
#include "core/error.h"
#include "kernelet/co_schedule_plan.h"
#include "policy/pai_common.h"

namespace gpumux {

namespace {

/// Salt of the random choice's generator stream, so it draws apart from every other seeded component.
constexpr std::uint64_t kRandomStream = 0x4B45524E454C4554ULL;  // "KERNELET"

std::string choice_text(KerneletPolicy::Choice choice) {
  switch (choice) {
    case KerneletPolicy::Choice::kModel:
      return "model";
    case KerneletPolicy::Choice::kMeasured:
      return "measured";
    case KerneletPolicy::Choice::kRandom:
      return "random";
    case KerneletPolicy::Choice::kSerial:
      return "serial";
    case KerneletPolicy::Choice::kFixed:
      return "fixed";
  }
  return "model";
}

}  // namespace

KerneletPolicy::KerneletPolicy(std::string profile_path, std::optional<kernelet::Characterisation> profiles,
                               Settings settings)
    : profile_path_(std::move(profile_path)), profiles_(std::move(profiles)), settings_(settings) {}

const OptionSpecs& KerneletPolicy::option_specs() {
  static const OptionSpecs specs = {
      OptionSpec::path("profiles", "none: only choice=serial with slice_tbs runs without one",
                       "characterisation file of the kernels (gpumux characterise writes it; docs/config.md "
                       "\"Characterisation files\")"),
      OptionSpec::choice(
          "choice", {"model", "measured", "random", "serial", "fixed"}, "model",
          "model: Kernelet's greedy co-scheduling by the Markov model's CP with PUR/MUR pruning "
          "(4.2-4.4); measured: the paper's OPT, the same greedy choice from every pair's IPCs "
          "measured at every ratio (the file's pairs); random: MC, a random pair and ratio per "
          "decision (the run's seed); serial: no co-scheduling, kernels one after another, "
          "sliced (5.2, Fig. 6); fixed: the kernels of the first two processes at `ratio` (a pair "
          "measurement)"),
      OptionSpec::integer("slice_tbs", 0, 0x7FFFFFFF, 0,
                          "thread blocks per slice for every kernel (0: each kernel's smallest slice with at "
                          "most 2% overhead from the characterisation file, 4.1; without one: unsliced)"),
      OptionSpec::integer(
          "gap_ns", 0, 1000000000, 3000,
          "host time of each further slice's launch; the runtime launches one slice at a time, "
          "one queued ahead of each kernel (default 3 us: an asynchronous launch's cost on "
          "Fermi-era GPUs, docs/validation.md \"Kernelet\")"),
      OptionSpec::real("alpha_p", 0, 1000, 0.4,
                       "prune pairs whose PUR differs by less than this (4.3; 5.4: 0.4)"),
      OptionSpec::real(
          "alpha_m", 0, 1000, 0.1,
          "prune pairs whose MUR differs by less than this (4.3; 5.4: 0.1 on the C2050, 0.105 on "
          "the GTX 680)"),
      OptionSpec::integer_or_auto("draw_seed", 0, 0x7FFFFFFFFFFFFFFF, "the run's seed",
                                  "choice=random: the seed of the pair and ratio draws (MC(s): s runs with "
                                  "draw seeds 1..s, the thread blocks' own draws unchanged)"),
      OptionSpec::integer_list(
          "ratio", 1, 4096, ':', "none (required with choice=fixed)",
          "choice=fixed: thread blocks per SM of the workload's first and second process's "
          "kernel, e.g. 2:4"),
  };
  return specs;
}

std::unique_ptr<SchedulingPolicy> KerneletPolicy::create(const OptionValues& options) {
  Settings s;
  const std::string& choice = options.choice("choice");
  s.choice = choice == "measured" ? Choice::kMeasured
             : choice == "random" ? Choice::kRandom
             : choice == "serial" ? Choice::kSerial
             : choice == "fixed"  ? Choice::kFixed
                                  : Choice::kModel;
  const std::vector<std::int64_t>& ratio = options.integer_list("ratio");
  if ((s.choice == Choice::kFixed) != !ratio.empty() || (!ratio.empty() && ratio.size() != 2)) {
    throw InputError(
        "policy kernelet: option ratio=N1:N2 (two thread-block counts per SM) goes with "
        "choice=fixed, and only with it");
  }
  if (const auto seed = options.integer_or_auto("draw_seed")) s.draw_seed = static_cast<std::uint64_t>(*seed);
  if (!ratio.empty()) {
    s.fixed_first = static_cast<std::uint32_t>(ratio[0]);
    s.fixed_second = static_cast<std::uint32_t>(ratio[1]);
  }
  s.slice_tbs = static_cast<std::uint32_t>(options.integer("slice_tbs"));
  s.gap_ps = static_cast<TimePs>(options.integer("gap_ns")) * 1000U;
  s.alpha_p = options.real("alpha_p");
  s.alpha_m = options.real("alpha_m");
  const std::string& path = options.text("profiles");
  std::optional<kernelet::Characterisation> profiles;
  if (!path.empty()) profiles = kernelet::load_characterisation(path);
  if (!profiles && s.choice != Choice::kFixed && !(s.choice == Choice::kSerial && s.slice_tbs > 0)) {
    throw InputError("policy kernelet: option profiles=FILE is required with choice=" + choice +
                     (s.choice == Choice::kSerial ? " and slice_tbs=0" : "") +
                     " (the kernels' characterisation; gpumux characterise --gpu G --library L --out FILE "
                     "writes it, docs/user-guide.md \"Kernelet\")");
  }
  if (profiles && s.choice == Choice::kMeasured && profiles->pairs.empty()) {
    throw InputError(path + ": choice=measured needs the pairs' measured IPCs (gpumux characterise --pairs)");
  }
  return std::make_unique<KerneletPolicy>(path, std::move(profiles), s);
}

KerneletPolicy::Slicing& KerneletPolicy::slicing(KernelId kernel) {
  const std::size_t i = index(kernel);
  if (i >= slicing_.size()) slicing_.resize(i + 1);
  return slicing_[i];
}

std::uint32_t KerneletPolicy::slice_size(const KernelStatus& kernel, std::uint32_t per_sm,
                                         const EngineControl& control) const {
  std::uint32_t smallest = settings_.slice_tbs;
  if (smallest == 0 && profiles_) {
    if (const kernelet::KernelCharacter* c = profiles_->find(kernel.desc->name)) smallest = c->min_slice_tbs;
  }
  if (smallest == 0) return kernel.total_tbs;  // unsliced
  if (settings_.choice == Choice::kSerial) return smallest;
  // 5.2: slices are multiples of the SM count; a co-scheduled slice puts per_sm blocks on each SM, made a
  // whole multiple of that at least the kernel's smallest slice.
  const std::uint64_t unit = std::uint64_t{per_sm} * control.num_sms();
  const std::uint64_t units = (smallest + unit - 1) / unit;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(units * unit, kernel.total_tbs));
}

KerneletPolicy::Plan KerneletPolicy::serial_plan(const std::vector<KernelId>& candidates,
                                                 const EngineControl& control) const {
  Plan p;
  p.first = 0;
  p.first_per_sm = control.kernel(candidates.front()).occupancy.tbs_per_sm;
  return p;
}

KerneletPolicy::Plan KerneletPolicy::fixed_plan(const std::vector<KernelId>& candidates,
                                                const EngineControl& control) const {
  // The kernels of the workload's first and second process, at the given ratio; when one has issued all
  // its blocks the other keeps its share alone. Other processes' kernels run after them, one at a time.
  std::optional<std::size_t> first;
  std::optional<std::size_t> second;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::uint32_t process = index(control.kernel(candidates[i]).process);
    if (process == 0 && !first) first = i;
    if (process == 1 && !second) second = i;
  }
  if (first && second) return Plan{*first, second, settings_.fixed_first, settings_.fixed_second};
  if (first) return Plan{*first, std::nullopt, settings_.fixed_first, 0};
  if (second) return Plan{*second, std::nullopt, settings_.fixed_second, 0};
  return serial_plan(candidates, control);
}

KerneletPolicy::Plan KerneletPolicy::plan(const std::vector<KernelId>& candidates,
                                          const EngineControl& control) {
  if (settings_.choice == Choice::kFixed) return fixed_plan(candidates, control);
  if (candidates.size() < 2 || settings_.choice == Choice::kSerial) return serial_plan(candidates, control);
  std::vector<kernelet::Candidate> inputs;
  inputs.reserve(candidates.size());
  for (const KernelId k : candidates) {
    const KernelStatus& status = control.kernel(k);
    const kernelet::KernelCharacter* c = profiles_->find(status.desc->name);
    if (c == nullptr) {
      std::vector<std::string> known;
      for (const kernelet::KernelCharacter& kc : profiles_->kernels) known.push_back(kc.kernel);
      const std::string guess = config::closest_name(status.desc->name, known);
      throw InputError(profile_path_ + ": no characterisation of kernel '" + status.desc->name + "'" +
                       (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                       "; gpumux characterise --kernels " + status.desc->name + " measures one");
    }
    inputs.push_back({c, &status.occupancy});
  }
  const auto fits = [&](std::size_t a, std::uint32_t na, std::size_t b) {
    return tbs_alongside(control.sm_resources(), *inputs[b].occupancy, {{inputs[a].occupancy, na}});
  };
  kernelet::PlanRequest request{&*profiles_, inputs, fits, settings_.alpha_p, settings_.alpha_m};
  std::optional<kernelet::PairPlan> chosen;
  switch (settings_.choice) {
    case Choice::kModel:
      chosen = kernelet::plan_by_model(request, control.sm_resources());
      break;
    case Choice::kMeasured:
      chosen = kernelet::plan_by_measurement(request);
      break;
    case Choice::kRandom:
      if (!random_) random_.emplace(settings_.draw_seed.value_or(control.seed()), kRandomStream);
      chosen = kernelet::plan_at_random(request, *random_);
      break;
    case Choice::kSerial:
    case Choice::kFixed:
      break;
  }
  if (!chosen) return serial_plan(candidates, control);
  Plan p;
  p.first = chosen->first;
  p.second = chosen->second;
  p.first_per_sm = chosen->first_per_sm;
  p.second_per_sm = chosen->second_per_sm;
  return p;
}

void KerneletPolicy::decide(const EngineControl& control) {
  decision_due_ = false;
  std::vector<KernelId> candidates;
  for (const KernelId k : arrived_) {
    if (control.kernel(k).has_tbs_to_issue()) candidates.push_back(k);
  }
  running_.clear();
  if (candidates.empty()) return;
  const Plan p = plan(candidates, control);
  running_.push_back({candidates.at(p.first), p.first_per_sm});
  if (p.second) running_.push_back({candidates.at(*p.second), p.second_per_sm});
  std::string text;
  for (const Running& r : running_) {
    const KernelStatus& k = control.kernel(r.kernel);
    Slicing& s = slicing(r.kernel);
    s.slice_tbs = slice_size(k, r.per_sm, control);
    if (s.released == 0) {
      // The kernel's first slice is its launch (what an unsliced launch costs: nothing more).
      s.released = std::min(s.slice_tbs, k.total_tbs);
      ++slices_launched_;
    }
    text += (text.empty() ? "" : "+") + k.desc->name + ":" + std::to_string(r.per_sm);
  }
  decisions_.push_back(text + " (" + choice_text(settings_.choice) + ")");
  start_launches(control);
}

void KerneletPolicy::start_launches(const EngineControl& control) {
  // The runtime's host thread launches one slice at a time (gap_ps each), in the co-schedule's order, and
  // keeps one slice queued ahead of each kernel's dispatch: a launch starts once less than a slice of the
  // kernel is launched and not yet dispatched.
  for (const Running& r : running_) {
    const KernelStatus& k = control.kernel(r.kernel);
    Slicing& s = slicing(r.kernel);
    if (s.launch_at != kNever || s.released >= k.total_tbs) continue;
    if (s.released - std::min(k.next_tb, s.released) >= s.slice_tbs) continue;
    s.launch_at = std::max(control.now(), host_free_at_) + settings_.gap_ps;
    host_free_at_ = s.launch_at;
  }
}

bool KerneletPolicy::launch_due(const EngineControl& control) {
  bool any = false;
  for (std::size_t i = 0; i < slicing_.size(); ++i) {
    Slicing& s = slicing_[i];
    if (s.launch_at > control.now()) continue;
    s.launch_at = kNever;
    const KernelStatus& k = control.kernel(KernelId{static_cast<std::uint32_t>(i)});
    s.released = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(std::uint64_t{s.released} + s.slice_tbs, k.total_tbs));
    ++slices_launched_;
    any = true;
  }
  return any;
}

void KerneletPolicy::request_timer(const EngineControl& control) const {
  TimePs at = decision_due_ ? control.now() : kNever;
  for (const Slicing& s : slicing_) at = std::min(at, s.launch_at);
  if (at != kNever) control.wake_at(at);
}

bool KerneletPolicy::needs_decision(const EngineControl& control) const {
  if (running_.empty()) return true;
  return std::any_of(running_.begin(), running_.end(),
                     [&](const Running& r) { return !control.kernel(r.kernel).has_tbs_to_issue(); });
}

void KerneletPolicy::on_kernel_arrival(KernelId kernel, EngineControl& control) {
  slicing(kernel).known = true;
  arrived_.push_back(kernel);
  // Algorithm 1, lines 2-3: a new kernel joins R; a decision now only when fewer than two kernels run.
  if (running_.size() < 2) decide(control);
  request_timer(control);
  control.deal_thread_blocks();
}

void KerneletPolicy::on_sm_idle(SmId sm, EngineControl& control) { control.request_issue(sm); }

void KerneletPolicy::on_tb_started(SmId /*sm*/, KernelId kernel, EngineControl& control) {
  if (!control.kernel(kernel).has_tbs_to_issue()) decision_due_ = true;
  start_launches(control);
  request_timer(control);
}

void KerneletPolicy::on_kernel_finished(KernelId kernel, EngineControl& control) {
  arrived_.erase(std::remove(arrived_.begin(), arrived_.end(), kernel), arrived_.end());
  if (needs_decision(control)) {
    decide(control);
    control.deal_thread_blocks();
  }
  request_timer(control);
}

void KerneletPolicy::on_timer(EngineControl& control) {
  launch_due(control);
  if (decision_due_ || needs_decision(control)) decide(control);
  start_launches(control);
  request_timer(control);
  control.deal_thread_blocks();
}

std::optional<KernelId> KerneletPolicy::select_kernel(SmId sm, const EngineControl& control) {
  const SmStatus& status = control.sm(sm);
  // The co-schedule's kernel furthest below its share of this SM first, so both fill in step.
  std::optional<KernelId> best;
  double best_fill = std::numeric_limits<double>::infinity();
  for (const Running& r : running_) {
    const KernelStatus& k = control.kernel(r.kernel);
    if (k.next_tb >= slicing_[index(r.kernel)].released || !k.has_tbs_to_issue()) continue;
    const ResidentKernel* resident = status.resident(r.kernel);
    const std::uint32_t here = resident == nullptr ? 0 : resident->tbs;
    if (here >= r.per_sm || !control.can_issue(sm, r.kernel)) continue;
    const double fill = static_cast<double>(here) / r.per_sm;
    if (fill < best_fill) {
      best_fill = fill;
      best = r.kernel;
    }
  }
  return best;
}

}  // namespace gpumux
