#pragma once
// report.json of an experiment: what was run (experiment, grid) and what came out (the analysis's rows,
// every simulation's metrics), each record serialised by named fields.

#include <vector>

#include <nlohmann/json.hpp>

#include "app/experiment/results.h"

namespace gpumux {

/// report.json's top-level "schema_version": raised whenever a field is renamed, removed or changes
/// meaning (adding a field keeps it).
inline constexpr int kReportSchemaVersion = 1;

/// report.json: schema_version, gpumux_version, experiment, description, analysis, gpu, grid, rows[]
/// {name, model, paper, unit} and runs[] (per-simulation metrics).
[[nodiscard]] nlohmann::json experiment_report_json(const ExperimentResults& results,
                                                    const std::vector<ReportRow>& rows);

}  // namespace gpumux
