#include "app/analysis/registry.h"

#include "core/error.h"

namespace gpumux {

const std::vector<AnalysisInfo>& analysis_registry() {
  static const std::vector<AnalysisInfo> registry = {summary_analysis(),
                                                     tanasic_dss_analysis(),
                                                     tanasic_priority_analysis(),
                                                     pai_table_analysis(),
                                                     awatramani_warp_schedulers_analysis(),
                                                     awatramani_perf_sat_analysis(),
                                                     awatramani_onac_analysis(),
                                                     liang_stm_analysis(),
                                                     kernelet_analysis(),
                                                     awatramani_interleaved_analysis()};
  return registry;
}

const AnalysisInfo* find_analysis(const std::string& name) {
  for (const AnalysisInfo& a : analysis_registry()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::vector<std::string> analysis_names() {
  std::vector<std::string> names;
  for (const AnalysisInfo& a : analysis_registry()) names.push_back(a.name);
  return names;
}

std::vector<ReportRow> experiment_rows(const ExperimentResults& results) {
  const AnalysisInfo* analysis = find_analysis(results.config->analysis);
  if (analysis == nullptr) throw InputError("unknown analysis '" + results.config->analysis + "'");
  std::vector<ReportRow> rows = analysis->analyze(results);
  for (ReportRow& row : rows) {
    for (const PaperEntry& entry : results.config->paper) {
      if (entry.row == row.name) row.paper = entry.value;
    }
  }
  return rows;
}

}  // namespace gpumux
