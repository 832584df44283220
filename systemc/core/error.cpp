#include "core/error.h"

namespace gpumux {
namespace {
std::string format_input_error(const SourceLocation& where, const std::string& key,
                               const std::string& message) {
  std::string text = where.file.empty() ? std::string("<input>") : where.file;
  if (where.line > 0) {
    text += ":" + std::to_string(where.line);
    if (where.column > 0) text += ":" + std::to_string(where.column);
  }
  text += ": ";
  if (!key.empty()) text += "'" + key + "': ";
  return text + message;
}
}  // namespace

InputError::InputError(const SourceLocation& where, const std::string& key, const std::string& message)
    : std::runtime_error(format_input_error(where, key, message)) {}

InputError::InputError(const std::string& message) : std::runtime_error(message) {}

}  // namespace gpumux
