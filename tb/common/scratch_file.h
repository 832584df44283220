#pragma once
// Scratch files for tests. Each test process writes into its own directory under gtest's temporary
// directory, which is removed with everything in it when the process exits: ctest runs leave nothing
// behind in /tmp, and test processes running side by side never share a file.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace gpumux::test {

/// The path of `name` in this process's scratch directory (created on first use, removed at exit).
inline std::string scratch_path(const std::string& name) {
  struct Directory {
    pid_t owner = ::getpid();
    std::filesystem::path path =
        std::filesystem::path(testing::TempDir()) / ("gpumux-test-" + std::to_string(owner));
    Directory() { std::filesystem::create_directories(path); }
    Directory(const Directory&) = delete;
    Directory& operator=(const Directory&) = delete;
    Directory(Directory&&) = delete;
    Directory& operator=(Directory&&) = delete;
    // A death test's child that calls exit() runs this too: only the process that made it removes it.
    ~Directory() {
      if (::getpid() != owner) return;
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Directory directory;
  return (directory.path / name).string();
}

}  // namespace gpumux::test
