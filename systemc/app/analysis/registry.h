#pragma once
// The analyses by name: an experiment file names one (`analysis:`).

#include <string>
#include <vector>

#include "app/analysis/analysis.h"

namespace gpumux {

[[nodiscard]] const std::vector<AnalysisInfo>& analysis_registry();
[[nodiscard]] const AnalysisInfo* find_analysis(const std::string& name);
[[nodiscard]] std::vector<std::string> analysis_names();

/// The rows of the experiment's analysis, each with its `paper:` figure (null where the file gives
/// none). InputError when the analysis is unknown.
[[nodiscard]] std::vector<ReportRow> experiment_rows(const ExperimentResults& results);

}  // namespace gpumux
