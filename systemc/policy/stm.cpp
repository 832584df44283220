#include "policy/stm.h"

#include <algorithm>

#include "config/yaml_reader.h"
#include "core/error.h"
#include "stm/schedule.h"

namespace gpumux {

StmPolicy::StmPolicy(std::string profile_path, stm::ProfileSet profiles, TimePs window_ps, bool compensate,
                     Search search, Advance advance)
    : profile_path_(std::move(profile_path)),
      profiles_(std::move(profiles)),
      window_ps_(window_ps),
      search_(search),
      advance_(advance),
      interleaver_({}, compensate) {
  interleaver_.set_share_function([this](KernelId kernel) { return share_of(kernel); });
}

const OptionSpecs& StmPolicy::option_specs() {
  static const OptionSpecs specs = {
      OptionSpec::path(
          "profiles", "required: the run stops with an error",
          "profile file of the kernels (gpumux profile writes it; docs/config.md \"Profile files\")"),
      OptionSpec::integer("window_ns", 0, 1000000000, 1000,
                          "after the first kernel arrives, wait this long for the others submitted with it "
                          "before scheduling (0: schedule at each arrival)"),
      OptionSpec::on_off("compensate", true,
                         "leaky-bucket rate compensation, so the SMs each kernel holds follow its allocation "
                         "(Liang 4.1)"),
      OptionSpec::choice(
          "search", {"heuristic", "exhaustive"}, "heuristic",
          "heuristic: Liang's STM (Algorithm 1, dp_select); exhaustive: the best schedule by the "
          "estimate over every set partition and SM allocation (Algorithms 2-3, con_lat as the "
          "oracle)"),
      OptionSpec::choice("advance", {"issued", "finished"}, "issued",
                         "the next phase starts when every thread block of the current one is issued (4.1's "
                         "phase order) or has finished (3.1's non-overlapping phases)"),
  };
  return specs;
}

std::unique_ptr<SchedulingPolicy> StmPolicy::create(const OptionValues& options) {
  const std::string& path = options.text("profiles");
  if (path.empty()) {
    throw InputError(
        "policy stm: option profiles=FILE is required (the kernels' profiles; gpumux profile --gpu G "
        "--kernels K "
        "--out FILE writes them, docs/user-guide.md \"Spatial-temporal multitasking\")");
  }
  stm::ProfileSet profiles = stm::load_profile_file(path);
  const Search search = options.choice("search") == "exhaustive" ? Search::kExhaustive : Search::kHeuristic;
  const Advance advance = options.choice("advance") == "finished" ? Advance::kFinished : Advance::kIssued;
  return std::make_unique<StmPolicy>(path, std::move(profiles),
                                     static_cast<TimePs>(options.integer("window_ns")) * 1000U,
                                     options.on("compensate"), search, advance);
}

std::uint32_t StmPolicy::share_of(KernelId kernel) const {
  const std::uint32_t i = index(kernel);
  return i < shares_.size() ? shares_[i] : 0U;
}

bool StmPolicy::phase_done(const Phase& phase, const EngineControl& control) const {
  return std::all_of(phase.kernels.begin(), phase.kernels.end(), [&](const auto& entry) {
    const KernelStatus& k = control.kernel(entry.first);
    return advance_ == Advance::kIssued ? !k.has_tbs_to_issue() : k.finished();
  });
}

void StmPolicy::set_shares() {
  std::fill(shares_.begin(), shares_.end(), 0U);
  if (current_ >= phases_.size()) return;
  for (const auto& [kernel, sms] : phases_[current_].kernels) {
    if (index(kernel) >= shares_.size()) shares_.resize(index(kernel) + 1, 0U);
    shares_[index(kernel)] = sms;
  }
}

bool StmPolicy::schedule_running(const EngineControl& control) const {
  return std::any_of(phases_.begin(), phases_.end(), [&](const Phase& p) {
    return std::any_of(p.kernels.begin(), p.kernels.end(),
                       [&](const auto& entry) { return !control.kernel(entry.first).finished(); });
  });
}

bool StmPolicy::advance_phases(const EngineControl& control) {
  const std::size_t before = current_;
  while (current_ < phases_.size() && phase_done(phases_[current_], control)) ++current_;
  if (current_ == before) return false;
  set_shares();
  return true;
}

void StmPolicy::plan(EngineControl& control) {
  if (waiting_.empty()) return;
  if (profiles_.sms != control.num_sms()) {
    throw InputError(profile_path_ + ": the profiles were measured on " + std::to_string(profiles_.sms) +
                     " SMs (" + profiles_.gpu + "), this GPU has " + std::to_string(control.num_sms()) +
                     "; profile the kernels on this GPU (gpumux profile)");
  }
  std::vector<std::string> names;
  names.reserve(waiting_.size());
  for (const KernelId k : waiting_) {
    const std::string& name = control.kernel(k).desc->name;
    if (profiles_.find(name) == nullptr) {
      std::vector<std::string> known;
      for (const stm::KernelProfile& p : profiles_.kernels) known.push_back(p.kernel);
      const std::string guess = config::closest_name(name, known);
      throw InputError(profile_path_ + ": no profile of kernel '" + name + "'" +
                       (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                       "; gpumux profile --kernel " + name + " measures one");
    }
    names.push_back(name);
  }
  // Positions 0..n-1 of `set` are the waiting kernels in arrival order (Algorithm 1's k_1..k_n).
  const stm::ProfileSet set = stm::profiles_for(profiles_, names);
  const std::vector<std::size_t> all = stm::all_kernels(set);
  const stm::Schedule schedule =
      search_ == Search::kExhaustive ? stm::exhaustive_optimum(set, all).best : stm::stm_schedule(set, all);
  decisions_.push_back(stm::to_string(set, schedule));
  phases_.clear();
  for (const stm::Configuration& c : schedule.phases) {
    Phase phase;
    for (const stm::Allocation& a : c) phase.kernels.emplace_back(waiting_.at(a.kernel), a.sms);
    phases_.push_back(std::move(phase));
  }
  waiting_.clear();
  // Phase 0's shares, then past any phase already done.
  current_ = 0;
  set_shares();
  advance_phases(control);
  control.deal_thread_blocks();
}

void StmPolicy::on_kernel_arrival(KernelId kernel, EngineControl& control) {
  interleaver_.on_kernel_arrival(kernel, control);  // its bucket; share 0 until a schedule gives it SMs
  waiting_.push_back(kernel);
  // Scheduled when the running schedule ends, or when the window closes.
  if (schedule_running(control) || window_end_ps_) return;
  if (window_ps_ == 0) {
    plan(control);
    return;
  }
  window_end_ps_ = control.now() + window_ps_;
  control.wake_at(*window_end_ps_);
}

void StmPolicy::on_timer(EngineControl& control) {
  if (window_end_ps_ && control.now() >= *window_end_ps_) {
    window_end_ps_.reset();
    plan(control);
    return;
  }
  control.deal_thread_blocks();  // a phase began inside select_kernel: hand its blocks to idle SMs
}

std::optional<KernelId> StmPolicy::select_kernel(SmId sm, const EngineControl& control) {
  // The current phase may have issued its last thread block: the next phase's kernels take over, and
  // SMs left idle meanwhile are dealt blocks from on_timer (select_kernel takes no actions).
  if (advance_ == Advance::kIssued && advance_phases(control)) control.wake_at(control.now());
  return interleaver_.select_kernel(sm, control);
}

void StmPolicy::on_sm_idle(SmId sm, EngineControl& control) { interleaver_.on_sm_idle(sm, control); }

void StmPolicy::on_tb_finished(SmId sm, KernelId kernel, TimePs duration_ps, EngineControl& control) {
  interleaver_.on_tb_finished(sm, kernel, duration_ps, control);
}

void StmPolicy::on_kernel_finished(KernelId kernel, EngineControl& control) {
  interleaver_.on_kernel_finished(kernel, control);
  const bool advanced = advance_phases(control);
  if (!schedule_running(control) && !waiting_.empty() && !window_end_ps_) {
    phases_.clear();
    plan(control);  // kernels that arrived while the schedule ran
    return;
  }
  if (advanced) control.deal_thread_blocks();
}

}  // namespace gpumux
