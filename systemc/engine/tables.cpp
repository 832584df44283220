#include "engine/tables.h"

namespace gpumux {

const char* to_string(SmState state) {
  switch (state) {
    case SmState::kIdle:
      return "idle";
    case SmState::kRunning:
      return "running";
    case SmState::kReserved:
      return "reserved";
  }
  return "?";
}

}  // namespace gpumux
