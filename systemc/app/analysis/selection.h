#pragma once
// What the analyses share: typed selection of the grid's runs (by role and by the policy an entry of
// `runs:` names, compared whole, never by parsing labels), workload groups by process count, and the
// mean accumulators whose empty value is a null in the report.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/experiment/results.h"

namespace gpumux {

/// The part a run of the grid plays: runs[0] is the baseline every other run is compared against.
enum class RunRole : std::uint8_t {
  kAny,
  kBaseline,   ///< runs[0]
  kUnderTest,  ///< every other run
};

/// Which runs an analysis reads: a role and, optionally, the run's policy (its `policy:`).
struct RunSelector {
  RunRole role = RunRole::kAny;
  std::string policy;  ///< empty: any policy
};

[[nodiscard]] RunRole role_of(std::size_t run);

/// Indices of the runs `selector` matches, in file order.
[[nodiscard]] std::vector<std::size_t> select_runs(const ExperimentConfig& config,
                                                   const RunSelector& selector);

/// The first run `selector` matches, if any.
[[nodiscard]] std::optional<std::size_t> select_run(const ExperimentConfig& config,
                                                    const RunSelector& selector);

/// The GPU run `run` simulates on (ExpandedExperiment::run_gpus: the GPU file with the run's sm_model
/// and warp_scheduler applied); the GPU file's when the grid lists none (hand-made grids in tests).
[[nodiscard]] const GpuConfig& run_gpu(const ExpandedExperiment& grid, std::size_t run);

/// The first run (in file order) on warp-level SMs under warp scheduler `scheduler`, whether the run
/// names it (`warp_scheduler:`) or inherits it from the GPU file; found by the effective setting, never
/// by the label.
[[nodiscard]] std::optional<std::size_t> select_warp_scheduler_run(const ExperimentConfig& config,
                                                                   const ExpandedExperiment& grid,
                                                                   const std::string& scheduler);

/// Process counts of the grid's workloads, ascending.
[[nodiscard]] std::vector<std::size_t> process_counts(const ExpandedExperiment& grid);

/// The name of the group of workloads with `processes` processes in row names: "2proc".
[[nodiscard]] std::string process_count_group(std::size_t processes);

/// Class labels present in the grid (Tanasic's SHORT, MEDIUM, LONG first, in that order).
[[nodiscard]] std::vector<std::string> class_labels(const ExpandedExperiment& grid, bool class1);

/// `text` in lower case (class labels in row names).
[[nodiscard]] std::string lower(std::string text);

/// Pairs (baseline outcome, outcome of `run`) of valid outcomes over the workloads with `count`
/// processes and every seed; `visit(workload, baseline, other)`.
template <typename Visit>
void for_each_pair(const ExperimentResults& r, std::size_t count, std::size_t baseline, std::size_t run,
                   Visit visit) {
  for (std::size_t w = 0; w < r.grid->workloads.size(); ++w) {
    if (r.grid->workloads[w].workload.processes.size() != count) continue;
    for (std::size_t s = 0; s < r.config->seeds.size(); ++s) {
      const RunOutcome* base = r.outcome(w, baseline, s);
      const RunOutcome* other = r.outcome(w, run, s);
      if (base != nullptr && other != nullptr) visit(w, *base, *other);
    }
  }
}

/// A count as a report figure; empty stays empty (a null in the report).
[[nodiscard]] std::optional<double> as_number(const std::optional<std::uint32_t>& v);

/// `v` printed with printf `format` for report.md tables; "-" when there is no value.
[[nodiscard]] std::string number(const std::optional<double>& v, const char* format);

/// Accumulates an arithmetic mean; empty means "no data" (a null in the report).
class Mean {
 public:
  void add(double value) {
    sum_ += value;
    ++count_;
  }
  [[nodiscard]] std::optional<double> value() const {
    if (count_ == 0) return std::nullopt;
    return sum_ / static_cast<double>(count_);
  }

 private:
  double sum_ = 0;
  std::size_t count_ = 0;
};

/// Accumulates a geometric mean of positive values (others are skipped); empty means "no data".
class GeoMean {
 public:
  void add(double value) {
    if (!(value > 0)) return;
    log_sum_ += std::log(value);
    ++count_;
  }
  [[nodiscard]] std::optional<double> value() const {
    if (count_ == 0) return std::nullopt;
    return std::exp(log_sum_ / static_cast<double>(count_));
  }

 private:
  double log_sum_ = 0;
  std::size_t count_ = 0;
};

}  // namespace gpumux
