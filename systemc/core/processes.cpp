#include "core/processes.h"

namespace gpumux {

std::exception_ptr& process_failure() {
  static std::exception_ptr failure;  // one simulation per process: one slot
  return failure;
}

}  // namespace gpumux
