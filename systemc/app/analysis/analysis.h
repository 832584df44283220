#pragma once
// An analysis of an experiment grid: a plain function from the per-simulation outcomes to the rows of
// the report (name, model value, paper value, unit), with a name, a one-line summary and the method
// report.md prints. Every analysis lists the same rows whether or not the grid has been simulated
// (values are null where there is no data), so the `paper:` keys of a file are checked before any
// simulation. One file per paper defines each; registry.cpp lists them by name.

#include <functional>
#include <string>
#include <vector>

#include "app/experiment/results.h"

namespace gpumux {

struct AnalysisInfo {
  std::string name;
  std::string summary;  ///< one line, with the paper section it reproduces
  std::string method;   ///< how each row is computed (printed in report.md)
  std::function<std::vector<ReportRow>(const ExperimentResults&)> analyze;
  /// Whether the rows read STP, ANTT or NTT, which need every process's isolated baseline; false: the
  /// grid simulates no baselines (an analysis of single-kernel runs, whose figures are the runs' own).
  bool isolated_baselines = true;
  /// report.md's results tables; empty: the generic tables of the rows (report_markdown.cpp).
  std::function<std::string(const ExperimentResults&, const std::vector<ReportRow>&)> tables{};
};

// The analyses, one per file (registry.cpp lists them).
[[nodiscard]] AnalysisInfo summary_analysis();           ///< summary.cpp
[[nodiscard]] AnalysisInfo tanasic_dss_analysis();       ///< tanasic_dss.cpp (Tanasic 4.4, Fig. 7)
[[nodiscard]] AnalysisInfo tanasic_priority_analysis();  ///< tanasic_priority.cpp (Tanasic 4.2-4.3)
[[nodiscard]] AnalysisInfo pai_table_analysis();         ///< pai_table.cpp (Pai Tables 5-6)
/// awatramani_warp_schedulers.cpp (Awatramani 3.5, Figs. 3.7-3.8)
[[nodiscard]] AnalysisInfo awatramani_warp_schedulers_analysis();
/// awatramani_perf_sat.cpp (Awatramani 4.3.3, Table 4.2, Figs. 4.5-4.7)
[[nodiscard]] AnalysisInfo awatramani_perf_sat_analysis();
/// awatramani_onac.cpp (Awatramani 4.4.3-4.4.4, Table 4.4, Figs. 4.14-4.16)
[[nodiscard]] AnalysisInfo awatramani_onac_analysis();
[[nodiscard]] AnalysisInfo liang_stm_analysis();  ///< liang_stm.cpp (Liang 6, Fig. 7)
[[nodiscard]] AnalysisInfo kernelet_analysis();   ///< kernelet.cpp (Kernelet 5.4, Figs. 13-14)
/// awatramani_interleaved.cpp (Awatramani 5.5, Table 5.2, Fig. 5.10)
[[nodiscard]] AnalysisInfo awatramani_interleaved_analysis();

}  // namespace gpumux
