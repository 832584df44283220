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

}  // namespace gpumux
