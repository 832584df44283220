#pragma once
// One line of progress on stderr, rewritten in place (\r), for runs long enough to need it. Callers
// decide whether it is wanted (a terminal and not --quiet) and what it says; this class keeps the
// clock and ends the line when it goes out of scope, so the next output starts on a fresh line.

#include <chrono>
#include <cstdio>
#include <string>

namespace gpumux {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled), start_(std::chrono::steady_clock::now()) {}
  ~ProgressLine() {
    if (printed_) std::fprintf(stderr, "\n");
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  [[nodiscard]] bool enabled() const { return enabled_; }
  /// Wall-clock seconds since construction.
  [[nodiscard]] double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  /// Replaces the line with "[gpumux] text" (nothing when disabled).
  void show(const std::string& text) {
    if (!enabled_) return;
    std::fprintf(stderr, "\r[gpumux] %s      ", text.c_str());
    std::fflush(stderr);
    printed_ = true;
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
  bool printed_ = false;
};

}  // namespace gpumux
