#include "core/workload.h"

#include <map>

namespace gpumux {

const char* to_string(CommandKind kind) {
  switch (kind) {
    case CommandKind::kCpu:
      return "cpu";
    case CommandKind::kHostToDevice:
      return "h2d";
    case CommandKind::kDeviceToHost:
      return "d2h";
    case CommandKind::kKernel:
      return "kernel";
    case CommandKind::kSync:
      return "sync";
    case CommandKind::kJoin:
      return "join";
  }
  return "?";
}

const char* to_string(KernelLaunchMode mode) {
  return mode == KernelLaunchMode::kAsynchronous ? "asynchronous" : "synchronous";
}

void override_tb_rsd(Workload& workload, double rsd_percent) {
  std::map<const KernelDesc*, std::shared_ptr<const KernelDesc>> copies;
  for (ProcessSpec& process : workload.processes) {
    for (StreamSpec& stream : process.streams) {
      for (CommandSpec& command : stream.commands) {
        if (!command.kernel) continue;
        auto& copy = copies[command.kernel.get()];
        if (!copy) {
          auto changed = std::make_shared<KernelDesc>(*command.kernel);
          changed->tb_time.rsd_percent = rsd_percent;
          copy = std::move(changed);
        }
        command.kernel = copy;
      }
    }
  }
  workload.tb_rsd_percent = rsd_percent;
}

std::string split_kernels_over_streams(Workload& workload, std::uint32_t streams) {
  for (const ProcessSpec& process : workload.processes) {
    if (process.streams.size() != 1) return process.name;
  }
  for (ProcessSpec& process : workload.processes) {
    std::vector<StreamSpec> split(streams);
    auto join_all = [&split](const SourceLocation& where) {
      CommandSpec join;
      join.kind = CommandKind::kJoin;
      join.where = where;
      for (StreamSpec& s : split) s.commands.push_back(join);
    };
    std::uint32_t kernels_in_run = 0;  // kernel commands dealt since the last other command
    bool anything_before = false;
    for (const CommandSpec& command : process.streams.front().commands) {
      if (command.kind == CommandKind::kKernel) {
        if (kernels_in_run == 0 && anything_before) join_all(command.where);
        split[kernels_in_run % streams].commands.push_back(command);
        ++kernels_in_run;
      } else {
        if (kernels_in_run > 0) join_all(command.where);
        kernels_in_run = 0;
        split.front().commands.push_back(command);
      }
      anything_before = true;
    }
    process.streams = std::move(split);
  }
  return "";
}

}  // namespace gpumux
