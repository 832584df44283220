#include "app/experiment/check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "app/analysis/registry.h"
#include "config/yaml_reader.h"
#include "core/error.h"
#include "policy/registry.h"

namespace gpumux {

void validate_experiment(const ExperimentConfig& config, const ExpandedExperiment& grid) {
  if (find_analysis(config.analysis) == nullptr) {
    std::string message = "unknown analysis '" + config.analysis + "'";
    if (const std::string hint = config::closest_name(config.analysis, analysis_names()); !hint.empty()) {
      message += " (did you mean '" + hint + "'?)";
    }
    throw InputError(config.analysis_where, "analysis",
                     message + "; known: " + config::join_choices(analysis_names()));
  }
  for (const ExperimentRun& run : config.runs) {
    try {
      (void)create_policy(run.policy, run.options);
    } catch (const InputError& e) {
      throw InputError(run.where, run.key, e.what());
    }
  }
  ExperimentResults dry;
  dry.config = &config;
  dry.grid = &grid;
  dry.outcomes.assign(grid.points.size(), std::nullopt);
  std::vector<std::string> names;
  for (const ReportRow& row : find_analysis(config.analysis)->analyze(dry)) names.push_back(row.name);
  for (const PaperEntry& entry : config.paper) {
    if (std::find(names.begin(), names.end(), entry.row) == names.end()) {
      std::string message = "analysis " + config.analysis + " has no row '" + entry.row + "'";
      if (const std::string hint = config::closest_name(entry.row, names); !hint.empty()) {
        message += " (did you mean '" + hint + "'?)";
      }
      if (!names.empty()) message += "; its rows look like '" + names.front() + "'";
      throw InputError(entry.where, "paper." + entry.row, message);
    }
  }
}

}  // namespace gpumux
