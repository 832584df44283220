#include "core/workload.h"

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
  }
  return "?";
}

}  // namespace gpumux
