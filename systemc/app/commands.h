#pragma once
// The gpumux subcommands. Each returns the process exit code (0 ok, 1 internal error or invariant
// violation, 2 bad input or usage) and reports errors itself on stderr.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/program_options/parsers.hpp>

#include "core/kernel_desc.h"
#include "frontend/copy_policy.h"
#include "policy/registry.h"

namespace gpumux {

/// Largest --jobs: simulations run in parallel, each a process of its own.
inline constexpr std::uint64_t kMaxJobs = 1024;

int run_command(const std::vector<std::string>& args);
int list_command(const std::vector<std::string>& args);
int bench_command(const std::vector<std::string>& args);
int experiment_command(const std::vector<std::string>& args);
/// gpumux phases: the phase analysis of kernel programs (app/phases_command.cpp).
int phases_command(const std::vector<std::string>& args);
/// gpumux profile: Liang 3.2's kernel profiles R[m], B[m] (app/profile_command.cpp).
int profile_command(const std::vector<std::string>& args);
/// gpumux stm: Liang's spatial-temporal schedules of kernel sets (app/stm_command.cpp).
int stm_command(const std::vector<std::string>& args);
/// gpumux characterise: Kernelet's kernel characterisation (app/characterise_command.cpp).
int characterise_command(const std::vector<std::string>& args);
/// gpumux kernelet: Kernelet's model against a characterisation's measurements (app/kernelet_command.cpp).
int kernelet_command(const std::vector<std::string>& args);

/// The kernels of `all` (a library loaded from `file`) named by --kernel, in the order named, each once;
/// all of them when `names` is empty. InputError naming the unknown one, with a did-you-mean.
[[nodiscard]] std::vector<std::shared_ptr<const KernelDesc>> pick_kernels(
    const std::vector<std::shared_ptr<const KernelDesc>>& all, const std::vector<std::string>& names,
    const std::string& file);

/// KEY=VALUE strings (--policy-opt) as a map; InputError on a malformed item.
[[nodiscard]] PolicyOptions parse_policy_options(const std::vector<std::string>& items);

/// "context-switch" or "drain"; InputError otherwise.
[[nodiscard]] PreemptionMechanism parse_preemption(const std::string& text);

/// "fcfs" or "npq" (--copy-policy); InputError otherwise.
[[nodiscard]] CopyPolicy parse_copy_policy(const std::string& text);

/// Applies --sm-model (tb | warp; empty: the GPU file's sm.model) and --warp-scheduler (empty: the
/// GPU file's sm.warp.scheduler; another name drops the file's scheduler_options, which belong to
/// its own scheduler) to `gpu`. InputError for an unknown model or scheduler, or for warp on a GPU
/// whose file has no sm.warp section (naming the file).
void apply_sm_model_options(GpuConfig& gpu, const std::string& sm_model, const std::string& warp_scheduler);
/// --memory-model simple|dram (empty: the GPU file's). InputError for another value, or for dram on a
/// GPU file without memory.dram and memory.l2 sections.
void apply_memory_model_option(GpuConfig& gpu, const std::string& memory_model);
/// --tb-interference on|off (empty: the GPU file's memory.tb_interference). InputError for another value.
void apply_tb_interference_option(GpuConfig& gpu, const std::string& tb_interference);

/// Directory holding gpus/, kernels/, workloads/: $GPUMUX_CONFIG_DIR if set; else the first of the
/// working directory's configs/, the installed share folder (PREFIX/share/gpumux/configs beside
/// PREFIX/bin/gpumux) and the source tree the binary was built from that has a gpus/ folder.
/// InputError naming the places searched when none has.
[[nodiscard]] std::string config_dir();

/// The file at `relative` (e.g. "gpus/kepler-k20c.yaml") in the first of config_dir()'s candidates that
/// holds it: a command's default input is found even when the working directory's configs/ lacks it.
[[nodiscard]] std::string config_file(const std::string& relative);

/// The value of integer option `option` (e.g. "--jobs"): decimal digits only, from `min` to `max`;
/// InputError naming the option and its range otherwise. (Boost.program_options would read "-5"
/// into an unsigned type by wrapping it to a huge value, so options are read as text.)
[[nodiscard]] std::uint64_t parse_integer_option(const std::string& option, const std::string& text,
                                                 std::uint64_t min, std::uint64_t max);

/// InputError naming the first positional argument of `parsed` that no option took ("gpumux run
/// foo"): Boost.program_options would silently drop it.
void reject_positional_arguments(const std::string& command,
                                 const boost::program_options::parsed_options& parsed);

/// Before simulating: creates output directory `dir` (and its parents) when missing and checks a
/// file can be written in it; InputError naming `option` and the path otherwise.
void prepare_output_dir(const std::string& option, const std::string& dir);

/// Before simulating: `path` (of --vcd, --timeline) is not a directory, its directory is created
/// when missing and a file can be written in it; InputError naming `option` and the path otherwise.
void prepare_output_file(const std::string& option, const std::string& path);
/// --vcd FILE: FILE and its GTKWave files can be written; for FILE.fst, vcd2fst is installed.
/// InputError otherwise.
void prepare_waveform_files(const std::string& path);

/// out/<workload name>, gpumux run's default --out; InputError when the name would leave out/
/// (empty, ".", "..", or containing '/' or '\\').
[[nodiscard]] std::string default_output_dir(const std::string& workload_name);

}  // namespace gpumux
