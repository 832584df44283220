#pragma once
// Error types. Bad user input is an InputError (exit code 2) and always names file, line and key;
// a broken model invariant is an InvariantViolation (exit code 1) naming SM, kernel and time.

#include <stdexcept>
#include <string>

namespace gpumux {

/// Where a value came from in a user's file; line is 1-based, 0 when unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

class InputError : public std::runtime_error {
 public:
  InputError(const SourceLocation& where, const std::string& key, const std::string& message);
  /// For errors that are not tied to a file (command-line usage).
  explicit InputError(const std::string& message);
};

class InvariantViolation : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Process exit codes of the gpumux command line.
enum ExitCode : int { kExitOk = 0, kExitInternal = 1, kExitBadInput = 2 };

}  // namespace gpumux
