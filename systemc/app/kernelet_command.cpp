// gpumux kernelet: what Kernelet's model says of a characterisation (Zhong and He 4.3-4.4, 5.3): each
// kernel's IPC alone predicted beside the pre-execution's (Fig. 7), each pair at the model's balanced ratio
// and at 1:1 predicted beside the measured pair runs (Figs. 8, 9, 12), the model without the uncoalesced
// state (Fig. 10) and without the multiple-scheduler virtual SM (Fig. 11), FindCoSchedule over all the
// kernels, and the pruning counts of Table 6.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "config/gpu_loader.h"
#include "core/error.h"
#include "kernelet/characterisation.h"
#include "kernelet/co_schedule.h"
#include "kernelet/co_schedule_plan.h"
#include "kernelet/markov_model.h"

namespace gpumux {
namespace {

namespace po = boost::program_options;

constexpr const char* kKerneletUsage =
    "usage: gpumux kernelet --profiles FILE --gpu FILE [--alpha-p X] [--alpha-m X] [--json]\n";

// Table 6's grid (Kernelet 5.4): alpha_p 0.1 .. 1.0, alpha_m 0.015 .. 0.15.
constexpr int kTableSixColumns = 10;
constexpr int kTableSixRows = 10;

double mean_absolute_error(const std::vector<double>& predicted, const std::vector<double>& measured) {
  double sum = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i) sum += std::fabs(predicted[i] - measured[i]);
  return predicted.empty() ? 0 : sum / static_cast<double>(predicted.size());
}

/// Pearson correlation; 0 when either side is constant.
double correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  if (x.size() < 2) return 0;
  double mx = 0;
  double my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i] / n;
    my += y[i] / n;
  }
  double sxy = 0;
  double sxx = 0;
  double syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

/// The measured IPCs of `a` and `b` at (na, nb), in that order, if the pair was measured at that ratio.
std::optional<std::pair<double, double>> measured_pair(const kernelet::Characterisation& c,
                                                       const std::string& a, std::uint32_t na,
                                                       const std::string& b, std::uint32_t nb) {
  const kernelet::PairMeasurement* m = c.find_pair(a, na, b, nb);
  if (m == nullptr) return std::nullopt;
  if (m->first == a && m->first_per_sm == na) return std::make_pair(m->first_ipc, m->second_ipc);
  return std::make_pair(m->second_ipc, m->first_ipc);
}

nlohmann::json report(const kernelet::Characterisation& c, const GpuConfig& gpu, double alpha_p,
                      double alpha_m) {
  const kernelet::SmModel sm = kernelet::sm_model_of(c, gpu.sm);
  kernelet::SmModel one_scheduler = sm;  // Fig. 11: the model without the virtual SM
  one_scheduler.peak_ipc_per_scheduler = sm.peak_ipc_per_scheduler * sm.warp_schedulers;
  one_scheduler.warp_schedulers = 1;
  std::vector<kernelet::KernelTraits> traits;
  std::vector<double> alone_model;
  nlohmann::json kernels = nlohmann::json::array();
  std::vector<double> predicted;
  std::vector<double> measured;
  for (const kernelet::KernelCharacter& k : c.kernels) {
    traits.push_back(kernelet::traits_of(k));
    const std::uint32_t tbs = kernelet::tbs_alone(traits.back(), sm);
    alone_model.push_back(tbs == 0 ? 0 : kernelet::alone_ipc(traits.back(), tbs, sm));
    kernelet::KernelTraits coalesced = traits.back();
    coalesced.uncoalesced_share = 0;
    predicted.push_back(alone_model.back());
    measured.push_back(k.ipc);
    kernels.push_back(
        {{"kernel", k.kernel},
         {"pur", k.pur},
         {"mur", k.mur},
         {"memory_ratio", k.memory_ratio},
         {"uncoalesced_share", k.uncoalesced_share},
         {"tbs_per_sm", tbs},
         {"ipc_measured", k.ipc},
         {"ipc_model", alone_model.back()},
         {"ipc_model_coalesced_only", tbs == 0 ? 0 : kernelet::alone_ipc(coalesced, tbs, sm)},
         {"ipc_model_one_scheduler", tbs == 0 ? 0 : kernelet::alone_ipc(traits.back(), tbs, one_scheduler)},
         {"min_slice_tbs", k.min_slice_tbs}});
  }
  nlohmann::json out = {{"gpu", c.gpu},
                        {"sms", c.sms},
                        {"peak_ipc_per_sm", c.model.peak_ipc_per_sm},
                        {"kernels", kernels},
                        {"alone_mean_absolute_error", mean_absolute_error(predicted, measured)},
                        {"alone_correlation", correlation(predicted, measured)}};

  // Every pair at the balanced ratio (Fig. 8) and at 1:1 (Fig. 9), with CP (Fig. 12).
  nlohmann::json pairs = nlohmann::json::array();
  std::vector<double> balanced_predicted;
  std::vector<double> balanced_measured;
  std::vector<double> one_predicted;
  std::vector<double> one_measured;
  std::vector<double> cp_predicted;
  std::vector<double> cp_measured;
  std::vector<double> one_scheduler_predicted;
  for (std::size_t a = 0; a < traits.size(); ++a) {
    for (std::size_t b = a + 1; b < traits.size(); ++b) {
      if (alone_model[a] <= 0 || alone_model[b] <= 0) continue;
      const auto sizes = kernelet::candidate_slice_sizes(traits[a], traits[b], sm);
      if (sizes.empty()) continue;
      const kernelet::PairEvaluation e =
          kernelet::balanced_slice_ratio(traits[a], traits[b], alone_model[a], alone_model[b], sm);
      nlohmann::json p = {{"first", traits[a].name},
                          {"second", traits[b].name},
                          {"balanced", {{"first_per_sm", e.sizes.first}, {"second_per_sm", e.sizes.second}}},
                          {"ipc_model", {e.concurrent_ipc_first, e.concurrent_ipc_second}},
                          {"cp_model", e.profit},
                          {"pruned", kernelet::is_pruned(traits[a], traits[b], {alpha_p, alpha_m})}};
      const kernelet::PairIpc single = kernelet::concurrent_ipc(
          traits[a], std::min(e.sizes.first, kernelet::tbs_alone(traits[a], one_scheduler)), traits[b],
          e.sizes.second, one_scheduler);
      p["ipc_model_one_scheduler"] = {single.first, single.second};
      if (const auto m = measured_pair(c, traits[a].name, e.sizes.first, traits[b].name, e.sizes.second)) {
        p["ipc_measured"] = {m->first, m->second};
        const double cp =
            kernelet::co_scheduling_profit({m->first, m->second}, {c.kernels[a].ipc, c.kernels[b].ipc});
        p["cp_measured"] = cp;
        balanced_predicted.push_back(e.concurrent_ipc_first + e.concurrent_ipc_second);
        balanced_measured.push_back(m->first + m->second);
        one_scheduler_predicted.push_back(single.total());
        cp_predicted.push_back(e.profit);
        cp_measured.push_back(cp);
      }
      if (kernelet::fit_together(traits[a], 1, traits[b], 1, sm)) {
        const kernelet::PairIpc one = kernelet::concurrent_ipc(traits[a], 1, traits[b], 1, sm);
        p["one_to_one"] = {{"ipc_model", {one.first, one.second}}};
        if (const auto m = measured_pair(c, traits[a].name, 1, traits[b].name, 1)) {
          p["one_to_one"]["ipc_measured"] = {m->first, m->second};
          one_predicted.push_back(one.total());
          one_measured.push_back(m->first + m->second);
        }
      }
      pairs.push_back(p);
    }
  }
  out["pairs"] = pairs;
  out["balanced_mean_absolute_error"] = mean_absolute_error(balanced_predicted, balanced_measured);
  out["balanced_correlation"] = correlation(balanced_predicted, balanced_measured);
  out["balanced_one_scheduler_mean_absolute_error"] =
      mean_absolute_error(one_scheduler_predicted, balanced_measured);
  // 1:1 is measured only when it fills the SM (gpumux characterise measures the filling ratios).
  out["one_to_one_mean_absolute_error"] =
      one_predicted.empty() ? nlohmann::json()
                            : nlohmann::json(mean_absolute_error(one_predicted, one_measured));
  out["cp_mean_absolute_error"] = mean_absolute_error(cp_predicted, cp_measured);
  out["cp_correlation"] = correlation(cp_predicted, cp_measured);
  out["pairs_measured"] = balanced_predicted.size();

  // FindCoSchedule over all the kernels (Algorithm 1's first decision with every kernel pending).
  const kernelet::CoSchedule first = kernelet::find_co_schedule(traits, sm, {alpha_p, alpha_m});
  out["first_decision"] = {{"paired", first.paired},
                           {"first", traits[first.kernel_first].name},
                           {"first_per_sm", first.size_first},
                           {"second", first.paired ? traits[first.kernel_second].name : ""},
                           {"second_per_sm", first.size_second},
                           {"cp_model", first.evaluation.profit},
                           {"pairs_pruned", first.pairs_pruned},
                           {"pairs_evaluated", first.pairs_evaluated},
                           {"pruning_relaxed", first.pruning_relaxed}};

  // Table 6: pairs pruned over the alpha grid, by the text's rule (either difference small) and by the rule
  // Table 6's own counts follow (both small).
  nlohmann::json table = nlohmann::json::array();
  for (int row = 1; row <= kTableSixRows; ++row) {
    const double am = 0.015 * row;
    nlohmann::json either = nlohmann::json::array();
    nlohmann::json both = nlohmann::json::array();
    for (int col = 1; col <= kTableSixColumns; ++col) {
      const double ap = 0.1 * col;
      either.push_back(kernelet::count_pruned_pairs(traits, {ap, am, kernelet::PruneRule::kEitherClose}));
      both.push_back(kernelet::count_pruned_pairs(traits, {ap, am, kernelet::PruneRule::kBothClose}));
    }
    table.push_back({{"alpha_m", am}, {"either_close", either}, {"both_close", both}});
  }
  out["table6"] = table;
  return out;
}

void print(const nlohmann::json& r) {
  std::printf("Kernelet model on %s (%u SMs, peak IPC %.2f per SM)\n\n",
              r.at("gpu").get<std::string>().c_str(), r.at("sms").get<unsigned>(),
              r.at("peak_ipc_per_sm").get<double>());
  std::printf("%-12s %8s %8s %8s %8s %12s %10s %12s %12s\n", "kernel", "PUR", "MUR", "Rm", "uncoal",
              "IPC measured", "IPC model", "coalesced", "1 scheduler");
  for (const auto& k : r.at("kernels")) {
    std::printf("%-12s %8.4f %8.4f %8.4f %8.3f %12.3f %10.3f %12.3f %12.3f\n",
                k.at("kernel").get<std::string>().c_str(), k.at("pur").get<double>(),
                k.at("mur").get<double>(), k.at("memory_ratio").get<double>(),
                k.at("uncoalesced_share").get<double>(), k.at("ipc_measured").get<double>(),
                k.at("ipc_model").get<double>(), k.at("ipc_model_coalesced_only").get<double>(),
                k.at("ipc_model_one_scheduler").get<double>());
  }
  std::printf("alone: mean absolute error %.3f IPC, correlation %.2f (Fig. 7)\n\n",
              r.at("alone_mean_absolute_error").get<double>(), r.at("alone_correlation").get<double>());
  std::printf("%-24s %7s %16s %16s %8s %8s %7s\n", "pair", "ratio", "cIPC model", "cIPC measured", "CP model",
              "CP meas.", "pruned");
  for (const auto& p : r.at("pairs")) {
    const std::string name = p.at("first").get<std::string>() + "+" + p.at("second").get<std::string>();
    const std::string ratio = std::to_string(p.at("balanced").at("first_per_sm").get<unsigned>()) + ":" +
                              std::to_string(p.at("balanced").at("second_per_sm").get<unsigned>());
    char measured[40] = "-";
    char cp_measured[16] = "-";
    if (p.contains("ipc_measured")) {
      std::snprintf(measured, sizeof measured, "%.3f+%.3f", p.at("ipc_measured")[0].get<double>(),
                    p.at("ipc_measured")[1].get<double>());
      std::snprintf(cp_measured, sizeof cp_measured, "%.3f", p.at("cp_measured").get<double>());
    }
    std::printf("%-24s %7s %8.3f+%-7.3f %16s %8.3f %8s %7s\n", name.c_str(), ratio.c_str(),
                p.at("ipc_model")[0].get<double>(), p.at("ipc_model")[1].get<double>(), measured,
                p.at("cp_model").get<double>(), cp_measured, p.at("pruned").get<bool>() ? "yes" : "no");
  }
  if (r.at("pairs_measured").get<std::size_t>() > 0) {
    std::printf(
        "balanced ratio: concurrent IPC mean absolute error %.3f, correlation %.2f (Fig. 8); "
        "one scheduler %.3f (Fig. 11)\n",
        r.at("balanced_mean_absolute_error").get<double>(), r.at("balanced_correlation").get<double>(),
        r.at("balanced_one_scheduler_mean_absolute_error").get<double>());
    const nlohmann::json& one = r.at("one_to_one_mean_absolute_error");
    std::printf(
        "1:1: mean absolute error %s (Fig. 9); CP mean absolute error %.3f, correlation %.2f (Fig. 12)\n",
        one.is_null() ? "- (no pair measured at 1:1)" : std::to_string(one.get<double>()).c_str(),
        r.at("cp_mean_absolute_error").get<double>(), r.at("cp_correlation").get<double>());
  }
  const auto& d = r.at("first_decision");
  std::printf("\nFindCoSchedule over all: %s\n",
              d.at("paired").get<bool>() ? (d.at("first").get<std::string>() + ":" +
                                            std::to_string(d.at("first_per_sm").get<unsigned>()) + " + " +
                                            d.at("second").get<std::string>() + ":" +
                                            std::to_string(d.at("second_per_sm").get<unsigned>()) + " (CP " +
                                            std::to_string(d.at("cp_model").get<double>()) + ")")
                                               .c_str()
                                         : (d.at("first").get<std::string>() + " alone").c_str());
  std::printf("\nTable 6, pairs pruned (text's rule: either difference small / both small)\n%8s", "alpha_m");
  for (int col = 1; col <= kTableSixColumns; ++col) std::printf(" %7.1f", 0.1 * col);
  std::printf("\n");
  for (const auto& row : r.at("table6")) {
    std::printf("%8.3f", row.at("alpha_m").get<double>());
    for (int col = 0; col < kTableSixColumns; ++col) {
      std::printf(" %3zu/%-3zu", row.at("either_close")[col].get<std::size_t>(),
                  row.at("both_close")[col].get<std::size_t>());
    }
    std::printf("\n");
  }
}

}  // namespace

int kernelet_command(const std::vector<std::string>& args) {
  po::options_description options("gpumux kernelet options");
  std::string profiles_path;
  std::string gpu_path;
  std::string alpha_p_text = "0.4";
  std::string alpha_m_text = "0.1";
  options.add_options()("help,h", "show this help")("profiles", po::value(&profiles_path),
                                                    "characterisation file (gpumux characterise); required")(
      "gpu", po::value(&gpu_path), "the GPU file it was measured on (its SM resources); required")(
      "alpha-p", po::value(&alpha_p_text)->default_value(alpha_p_text), "PUR pruning threshold (4.3)")(
      "alpha-m", po::value(&alpha_m_text)->default_value(alpha_m_text), "MUR pruning threshold (4.3)")(
      "json", "print the report as JSON (named fields)");
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(args).options(options).run();
    po::store(parsed, vm);
    if (vm.count("help") != 0U) {
      std::cout << kKerneletUsage << '\n' << options << '\n';
      return kExitOk;
    }
    po::notify(vm);
    reject_positional_arguments("kernelet", parsed);
  } catch (const po::error& e) {
    std::cerr << "gpumux kernelet: " << e.what() << '\n' << kKerneletUsage;
    return kExitBadInput;
  }
  for (const char* required : {"profiles", "gpu"}) {
    if (vm.count(required) == 0U) {
      std::cerr << "gpumux kernelet: --" << required << " is required\n" << kKerneletUsage;
      return kExitBadInput;
    }
  }
  const auto threshold = [](const std::string& option, const std::string& text) {
    std::size_t used = 0;
    double value = -1;
    try {
      value = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || !(value >= 0 && value <= 1000)) {
      throw InputError(option + " must be a number from 0 to 1000, not '" + text + "'");
    }
    return value;
  };
  const double alpha_p = threshold("--alpha-p", alpha_p_text);
  const double alpha_m = threshold("--alpha-m", alpha_m_text);
  const kernelet::Characterisation c = kernelet::load_characterisation(profiles_path);
  const GpuConfig gpu = load_gpu_config(gpu_path);
  if (gpu.name != c.gpu || gpu.num_sms != c.sms) {
    throw InputError(profiles_path + " was measured on " + c.gpu + " (" + std::to_string(c.sms) +
                     " SMs), not on " + gpu.name + " (" + gpu_path + ", " + std::to_string(gpu.num_sms) +
                     " SMs)");
  }
  const nlohmann::json r = report(c, gpu, alpha_p, alpha_m);
  if (vm.count("json") != 0U) {
    std::cout << r.dump(2) << '\n';
  } else {
    print(r);
  }
  return kExitOk;
}

}  // namespace gpumux
