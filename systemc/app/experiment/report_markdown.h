#pragma once
// report.md of an experiment: the description, the setup, the analysis's rows as tables (model beside
// paper), the notes, the workloads and the per-application NTTs.

#include <string>
#include <vector>

#include "app/experiment/results.h"

namespace gpumux {

[[nodiscard]] std::string experiment_report_markdown(const ExperimentResults& results,
                                                     const std::vector<ReportRow>& rows);

}  // namespace gpumux
