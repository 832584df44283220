#include "policy/srtf.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "policy/pai_common.h"

namespace gpumux {

namespace {
constexpr double kHysteresis = 0.1;  // srtf-adaptive leaves sharing below threshold - this
}  // namespace

OptionSpecs ShortestFirstPolicy::option_specs(Mode mode) {
  OptionSpecs specs;
  if (mode != Mode::kSrtf && mode != Mode::kSrtfAdaptive) return specs;  // the oracles: none
  specs.push_back(
      OptionSpec::choice("sample", {"first-to-end", "first-started-in-slice"}, "first-to-end",
                         "which thread block's time the Simple Slicing sample measures (Pai 5.1.1)"));
  specs.push_back(
      OptionSpec::choice("decide", {"per-sm", "gpu"}, "per-sm",
                         "per-sm: each SM ranks kernels by its own predictions (Pai); gpu: every SM "
                         "ranks by the mean of the per-SM predictions (ours)"));
  if (mode == Mode::kSrtfAdaptive) {
    specs.push_back(
        OptionSpec::real("threshold", 0, 1e6, 0.5,
                         "shares SMs when estimated slowdowns differ by more than this (Pai 5.1.2: "
                         "0.5); back to SRTF below threshold - 0.1"));
    specs.push_back(OptionSpec::integer(
        "shared_limit", 1, 1024, 3, "thread blocks per SM the fastest kernel keeps while sharing (Pai: 3)"));
  }
  return specs;
}

std::unique_ptr<SchedulingPolicy> ShortestFirstPolicy::create(Mode mode, const OptionValues& options) {
  Options o;
  if (mode == Mode::kSrtf || mode == Mode::kSrtfAdaptive) {
    o.sample = options.choice("sample") == "first-started-in-slice"
                   ? SimpleSlicingPredictor::SampleRule::kFirstStartedInSlice
                   : SimpleSlicingPredictor::SampleRule::kFirstToEnd;
    o.gpu_wide = options.choice("decide") == "gpu";
  }
  if (mode == Mode::kSrtfAdaptive) {
    o.unfairness_threshold = options.real("threshold");
    o.shared_limit = static_cast<std::uint32_t>(options.integer("shared_limit"));
  }
  return std::make_unique<ShortestFirstPolicy>(mode, o);
}

std::string ShortestFirstPolicy::name() const {
  switch (mode_) {
    case Mode::kSrtf:
      return "srtf";
    case Mode::kSrtfAdaptive:
      return "srtf-adaptive";
    case Mode::kSrtfOracle:
      return "srtf-oracle";
    case Mode::kSjf:
      return "sjf";
    case Mode::kLjf:
      return "ljf";
  }
  return "srtf";
}

// --- ranking and choice ---------------------------------------------------------------------------

std::optional<TimePs> ShortestFirstPolicy::key(SmId sm, const KernelStatus& k,
                                               const EngineControl& control) const {
  switch (mode_) {
    case Mode::kSjf:
      return staircase_runtime_ps(k, control.num_sms());
    case Mode::kLjf:
      return std::numeric_limits<TimePs>::max() - staircase_runtime_ps(k, control.num_sms());
    case Mode::kSrtfOracle:
      return staircase_remaining_ps(k, control.num_sms());
    case Mode::kSrtf:
    case Mode::kSrtfAdaptive:
      break;
  }
  if (!predictor_) return std::nullopt;
  if (!options_.gpu_wide) return predictor_->remaining(sm, k.id);
  // GPU-wide: the mean of the per-SM predictions.
  TimePs sum = 0;
  std::uint32_t n = 0;
  for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
    if (const auto r = predictor_->remaining(SmId{s}, k.id)) {
      sum += *r;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

std::optional<KernelId> ShortestFirstPolicy::choose(SmId sm, const EngineControl& control) const {
  // The sampling SM issues only the kernel it samples (Pai 5.1.1, Fig. 12: B0 on SM0).
  if (sampling_ && sampling_sm_ == sm) {
    const KernelStatus& s = control.kernel(*sampling_);
    if (s.active && s.has_tbs_to_issue()) return sampling_;
  }
  // Kernels with a rank, best first (ties: arrival order, which the active queue keeps).
  std::optional<KernelId> best;
  TimePs best_key = 0;
  std::optional<KernelId> oldest;  // oldest kernel with blocks left, ranked or not
  for (KernelId id : control.active_kernels()) {
    const KernelStatus& k = control.kernel(id);
    if (!k.has_tbs_to_issue()) continue;
    if (!oldest) oldest = id;
    const std::optional<TimePs> r = key(sm, k, control);
    if (!r) continue;
    if (!best || *r < best_key) {
      best = id;
      best_key = *r;
    }
  }
  if (!best) return oldest;  // nothing ranked has blocks left: run the oldest (work conserving)
  if (!sharing_ || !limited_) return best;

  // SRTF/Adaptive sharing mode: the fastest kernel up to its limit, then the others by rank, each
  // only if it fits (the rest of the SM goes to the co-runners).
  if (control.kernel(*limited_).active && control.can_issue(sm, *limited_)) return limited_;
  std::vector<std::pair<TimePs, KernelId>> ranked;
  for (KernelId id : control.active_kernels()) {
    const KernelStatus& k = control.kernel(id);
    if (id == *limited_ || !k.has_tbs_to_issue()) continue;
    if (const auto r = key(sm, k, control)) ranked.emplace_back(*r, id);
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [r, id] : ranked) {
    if (control.can_issue(sm, id)) return id;
  }
  return std::nullopt;
}

std::optional<KernelId> ShortestFirstPolicy::select_kernel(SmId sm, const EngineControl& control) {
  const std::optional<KernelId> k = choose(sm, control);
  if (k && control.can_issue(sm, *k)) return k;
  return std::nullopt;  // the chosen kernel does not fit yet: wait for blocks to finish (hand-off)
}

void ShortestFirstPolicy::hand_out(EngineControl& control) {
  hand_out_sms(control, [&](SmId sm) { return choose(sm, control); });
}

// --- predictor bookkeeping and sampling -------------------------------------------------------------

void ShortestFirstPolicy::ensure_predictor(const EngineControl& control) {
  if (predictor_ || !predicts()) return;
  SimpleSlicingPredictor::Options o;
  o.sample = options_.sample;
  predictor_ = std::make_unique<SimpleSlicingPredictor>(control.num_sms(),
                                                        control.sm_resources().max_thread_blocks, o);
}

void ShortestFirstPolicy::know(KernelId kernel, const EngineControl& control) {
  ensure_predictor(control);
  if (!predictor_ || predictor_->knows(kernel)) return;
  const KernelStatus& k = control.kernel(kernel);
  if (k.finished()) return;
  predictor_->on_launch(kernel, k.total_tbs, k.occupancy.tbs_per_sm, control.now());
}

void ShortestFirstPolicy::advance_sampling(EngineControl& control) {
  if (sampling_) {
    const KernelStatus& s = control.kernel(*sampling_);
    if (s.active && !predictor_->sampled(*sampling_)) return;  // still under way
    sampling_.reset();
  }
  while (!to_sample_.empty()) {
    const KernelId k = to_sample_.front();
    to_sample_.pop_front();
    const KernelStatus& ks = control.kernel(k);
    if (!ks.active || !ks.has_tbs_to_issue() || predictor_->sampled(k)) continue;
    // The SM where the sample starts soonest: an idle one, else one with room for a block of it,
    // else the one with the fewest blocks left to drain.
    std::optional<SmId> pick;
    for (std::uint32_t s = 0; s < control.num_sms() && !pick; ++s) {
      if (control.sm(SmId{s}).state == SmState::kIdle) pick = SmId{s};
    }
    for (std::uint32_t s = 0; s < control.num_sms() && !pick; ++s) {
      if (control.can_issue(SmId{s}, k)) pick = SmId{s};
    }
    if (!pick) {
      std::uint32_t fewest = std::numeric_limits<std::uint32_t>::max();
      for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
        const SmStatus& st = control.sm(SmId{s});
        if (st.state != SmState::kReserved && st.running_tbs < fewest) {
          fewest = st.running_tbs;
          pick = SmId{s};
        }
      }
    }
    if (!pick) continue;
    sampling_ = k;
    sampling_sm_ = *pick;
    ++stats_.samples_started;
    return;
  }
}

// --- hooks --------------------------------------------------------------------------------------------

void ShortestFirstPolicy::on_kernel_arrival(KernelId kernel, EngineControl& control) {
  if (predicts()) {
    know(kernel, control);
    // A kernel that arrives while others run is sampled (one at a time, FIFO); a lone kernel on an
    // empty GPU just runs everywhere and is predicted as its first blocks end.
    bool others = false;
    for (KernelId k : control.active_kernels()) {
      others = others || (k != kernel && !control.kernel(k).finished());
    }
    if (others && !predictor_->sampled(kernel)) {
      to_sample_.push_back(kernel);
      advance_sampling(control);
    }
    if (mode_ == Mode::kSrtfAdaptive) evaluate_sharing(control);
  }
  hand_out(control);
}

void ShortestFirstPolicy::on_sm_idle(SmId sm, EngineControl& control) {
  const std::optional<KernelId> k = choose(sm, control);
  if (k && control.can_issue(sm, *k)) control.assign_sm(sm, *k);
}

void ShortestFirstPolicy::on_tb_started(SmId sm, KernelId kernel, EngineControl& control) {
  if (!predicts()) return;
  know(kernel, control);
  if (predictor_->knows(kernel)) predictor_->on_block_start(sm, kernel, control.now());
}

void ShortestFirstPolicy::on_tb_finished(SmId sm, KernelId kernel, TimePs duration_ps,
                                         EngineControl& control) {
  if (!predicts() || !predictor_ || !predictor_->knows(kernel)) return;
  const TimePs now = control.now();
  const bool was_sampled = predictor_->sampled(kernel);
  predictor_->on_block_end_started_at(sm, kernel, now - duration_ps, now);
  bool changed = false;
  if (!was_sampled && predictor_->sampled(kernel)) {
    // First prediction of this kernel anywhere: copy it to the other SMs (Pai 5.1.1), move on to
    // the next queued kernel, and let every SM reconsider.
    predictor_->copy_sample(kernel, sm, now);
    ++stats_.samples_completed;
    advance_sampling(control);
    changed = true;
  }
  if (mode_ == Mode::kSrtfAdaptive) evaluate_sharing(control);
  if (changed) hand_out(control);
}

void ShortestFirstPolicy::on_kernel_finished(KernelId kernel, EngineControl& control) {
  if (predicts() && predictor_) {
    predictor_->on_kernel_end(kernel, control.now());
    if (limited_ == kernel) set_sharing(false, std::nullopt, control);
    advance_sampling(control);
    if (mode_ == Mode::kSrtfAdaptive) evaluate_sharing(control);
  }
  hand_out(control);
}

// --- SRTF/Adaptive ------------------------------------------------------------------------------------

void ShortestFirstPolicy::evaluate_sharing(EngineControl& control) {
  const SmResources& res = control.sm_resources();
  std::vector<Estimate>& est = estimates_;  // reused: this runs after every thread block
  est.clear();
  for (KernelId id : control.active_kernels()) {
    const KernelStatus& k = control.kernel(id);
    if (!k.has_tbs_to_issue()) continue;
    const auto summary = predictor_->summary(id);
    if (!summary) continue;
    Estimate e{id};
    e.n = summary->blocks_left;
    e.t = summary->t;
    e.r = std::max(1.0, static_cast<double>(k.occupancy.tbs_per_sm));
    e.big_t = std::max(1.0, e.n * e.t / e.r);
    est.push_back(e);
  }
  if (est.size() < 2 || res.max_resident_kernels < 2) {
    if (sharing_) set_sharing(false, std::nullopt, control);
    return;
  }
  ++stats_.evaluations;
  std::stable_sort(est.begin(), est.end(),
                   [](const Estimate& a, const Estimate& b) { return a.big_t < b.big_t; });

  const auto unfairness = [](const std::vector<double>& slowdowns) {
    const auto [lo, hi] = std::minmax_element(slowdowns.begin(), slowdowns.end());
    return *hi - *lo;
  };
  // Exclusive (SRTF): one after the other in order of remaining time.
  std::vector<double> exclusive;
  double finish = 0;
  for (const Estimate& e : est) {
    finish += e.big_t;
    exclusive.push_back(finish / e.big_t);
  }
  const double unfair_exclusive = unfairness(exclusive);

  // Shared: the fastest kernel at L blocks per SM, the next beside it (NB1 shared, NB2 alone).
  const Estimate& f = est[0];
  const Estimate& s = est[1];
  const KernelStatus& fk = control.kernel(f.id);
  const KernelStatus& sk = control.kernel(s.id);
  const std::uint32_t limit = std::min(options_.shared_limit, std::max(1U, fk.occupancy.tbs_per_sm));
  const std::uint32_t rs = tbs_alongside(res, sk.occupancy, {{&fk.occupancy, limit}});
  double unfair_shared = std::numeric_limits<double>::infinity();
  if (rs > 0) {
    const double l = limit;
    const double ts1 = f.n * f.t / l;
    const double nb1 = ts1 * rs / s.t;
    double end_f = 0;
    double end_s = 0;
    if (nb1 < s.n) {
      end_f = ts1;
      end_s = ts1 + (s.n - nb1) * s.t / s.r;  // NB2 = N - NB1 blocks alone at full residency
    } else {
      end_s = s.n * s.t / rs;  // the second kernel ends during sharing; the first then runs alone
      const double done_f = end_s * l / f.t;
      end_f = end_s + std::max(0.0, f.n - done_f) * f.t / f.r;
    }
    std::vector<double> shared = {end_f / f.big_t, end_s / s.big_t};
    double later = std::max(end_f, end_s);
    for (std::size_t i = 2; i < est.size(); ++i) {
      later += est[i].big_t;
      shared.push_back(later / est[i].big_t);
    }
    unfair_shared = unfairness(shared);
  }
  const double threshold = options_.unfairness_threshold;
  const bool fairer = unfair_shared < unfair_exclusive;
  const bool want = sharing_ ? fairer && unfair_exclusive >= threshold - kHysteresis
                             : fairer && unfair_exclusive > threshold;
  set_sharing(want, f.id, control);
}

void ShortestFirstPolicy::set_sharing(bool on, std::optional<KernelId> fastest, EngineControl& control) {
  const std::optional<KernelId> target = on ? fastest : std::nullopt;
  if (sharing_ == on && limited_ == target) return;
  const TimePs now = control.now();
  if (limited_) {
    for (std::uint32_t s = 0; s < control.num_sms(); ++s) control.set_residency_limit(SmId{s}, *limited_, 0);
  }
  if (on && !sharing_) ++stats_.sharing_entries;
  if (!on && sharing_) ++stats_.sharing_exits;
  if (on && sharing_) ++stats_.fastest_changes;
  sharing_ = on;
  limited_ = target;
  if (target) {
    limit_ = std::min(options_.shared_limit, std::max(1U, control.kernel(*target).occupancy.tbs_per_sm));
    for (std::uint32_t s = 0; s < control.num_sms(); ++s) {
      control.set_residency_limit(SmId{s}, *target, limit_);
    }
  }
  // Residencies change for every co-running kernel: new slices (Pai 3.4.3-3.4.4).
  predictor_->reslice_all(now);
  hand_out(control);
}

}  // namespace gpumux
