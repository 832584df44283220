#include "fuzz/fuzz_support.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <system_error>

#include "config/gpu_loader.h"
#include "core/error.h"

namespace gpumux::fuzz {

namespace fs = std::filesystem;

namespace {

const fs::path kConfigs = fs::path(GPUMUX_SOURCE_DIR) / "configs";

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "fuzz harness: %s\n", message.c_str());
  std::abort();
}

void link(const fs::path& target, const fs::path& link_path) {
  std::error_code ec;
  fs::create_directory_symlink(target, link_path, ec);
  if (ec) die("cannot link " + link_path.string() + " -> " + target.string() + ": " + ec.message());
}

}  // namespace

InputFile::InputFile(const std::string& kind) {
  // One tree per process (mkdtemp), so concurrent harnesses and ctest -j do not share inputs.
  std::error_code ec;
  fs::create_directories(GPUMUX_FUZZ_SCRATCH_DIR, ec);
  std::string templ = (fs::path(GPUMUX_FUZZ_SCRATCH_DIR) / (kind + "-XXXXXX")).string();
  if (mkdtemp(templ.data()) == nullptr) die("cannot create a scratch folder in " GPUMUX_FUZZ_SCRATCH_DIR);
  root_ = templ;

  // The input lives in root/a/b/configs/<kind>/. Shipped files in nested folders reach the libraries
  // one or two levels further up (configs/workloads/tanasic/ uses ../../kernels/), so seeds taken from
  // them resolve too: every kind is also linked from root/a/b/ and root/a/.
  const fs::path configs = root_ / "a" / "b" / "configs";
  fs::create_directories(configs / kind, ec);
  if (ec) die("cannot create " + (configs / kind).string() + ": " + ec.message());
  for (const auto& entry : fs::directory_iterator(kConfigs)) {
    if (!entry.is_directory()) continue;
    const std::string name = entry.path().filename().string();
    for (const fs::path& at : {configs, root_ / "a" / "b", root_ / "a"}) {
      if (at == configs && name == kind) continue;
      link(entry.path(), at / name);
    }
  }
  for (const auto& entry : fs::directory_iterator(kConfigs / kind)) {
    const fs::path at = configs / kind / entry.path().filename();
    std::error_code link_ec;
    fs::create_symlink(entry.path(), at, link_ec);
    if (link_ec) die("cannot link " + at.string() + ": " + link_ec.message());
  }
  path_ = (configs / kind / "fuzz-input.yaml").string();
}

InputFile::~InputFile() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

const std::string& InputFile::write(const std::uint8_t* data, std::size_t size) const {
  std::ofstream out(path_, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) die("cannot write " + path_);
  return path_;
}

const GpuConfig& kepler_k20c() {
  static const GpuConfig gpu = load_gpu_config((kConfigs / "gpus" / "kepler-k20c.yaml").string());
  return gpu;
}

void run_loader(const std::function<void()>& load) {
  try {
    load();
  } catch (const InputError&) {
    // Bad input, reported as such (exit 2 on the command line): the expected outcome.
  } catch (const std::exception& e) {
    die(std::string("escaped the loader (not an InputError): ") + e.what());
  } catch (...) {
    die("a non-std exception escaped the loader");
  }
}

}  // namespace gpumux::fuzz
