#pragma once
// The `pai-table` experiment analysis (Pai et al. Tables 5 and 6): geometric means of STP, ANTT and
// StrictF fairness per run label, grouped by the part of the workload name after '@' (e.g. "25pct",
// the second kernel's arrival offset; no group when the names have none), plus two derived rows: the
// share of the FIFO-to-SJF STP gap SRTF closes and SRTF/Adaptive's STP relative to SRTF.

#include <vector>

#include "app/experiment_analysis.h"

namespace gpumux {

[[nodiscard]] std::vector<ReportRow> analyze_pai_table(const ExperimentResults& results);

/// The registry entry (experiment_analysis.cpp lists it).
[[nodiscard]] AnalysisInfo pai_table_analysis();

}  // namespace gpumux
