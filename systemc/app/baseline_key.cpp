#include "app/baseline_key.h"

#include <elf.h>
#include <link.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include <boost/uuid/detail/sha1.hpp>

#include "config/gpu_loader.h"
#include "config/kernel_library_loader.h"

namespace gpumux {

namespace {

/// The digest of `sha` as 40 lower-case hex digits.
std::string hex_digest(boost::uuids::detail::sha1& sha) {
  boost::uuids::detail::sha1::digest_type digest{};
  sha.get_digest(digest);
  std::string hex;
  for (const unsigned int word : digest) {
    std::array<char, 9> part{};
    std::snprintf(part.data(), part.size(), "%08x", word);
    hex += part.data();
  }
  return hex;
}

/// The GNU build id of the main program (the first object dl_iterate_phdr visits) as hex, or "".
std::string build_id() {
  std::string id;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t /*size*/, void* data) -> int {
        auto* out = static_cast<std::string*>(data);
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& header = info->dlpi_phdr[i];
          if (header.p_type != PT_NOTE) continue;
          // The loader gives the segment's address as an integer (load base + virtual address).
          // NOLINTNEXTLINE(performance-no-int-to-ptr)
          const char* note = reinterpret_cast<const char*>(info->dlpi_addr + header.p_vaddr);
          const char* const end = note + header.p_memsz;
          while (note + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) nhdr{};
            std::memcpy(&nhdr, note, sizeof nhdr);
            const char* const name = note + sizeof nhdr;
            const char* const desc = name + ((nhdr.n_namesz + 3U) & ~3U);
            if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 &&
                desc + nhdr.n_descsz <= end) {
              for (ElfW(Word) b = 0; b < nhdr.n_descsz; ++b) {
                std::array<char, 3> hex{};
                std::snprintf(hex.data(), hex.size(), "%02x", static_cast<unsigned char>(desc[b]));
                out->append(hex.data(), 2);
              }
              return 1;
            }
            note = desc + ((nhdr.n_descsz + 3U) & ~3U);
          }
        }
        return 1;  // only the main program
      },
      &id);
  return id;
}

/// SHA-1 of the executable file, for binaries linked without a build id; "unknown" if unreadable.
std::string executable_hash() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  if (!in) return "unknown";
  boost::uuids::detail::sha1 sha;
  std::vector<char> buffer(1U << 20U);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    sha.process_bytes(buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  return hex_digest(sha);
}

nlohmann::json command_document(const CommandSpec& c) {
  return {{"kind", to_string(c.kind)},
          {"cpu_ps", c.cpu_ps},
          {"bytes", c.bytes},
          {"launches", c.launches},
          {"kernel", c.kernel ? kernel_document(*c.kernel) : nlohmann::json()}};
}

}  // namespace

std::string sha1_hex(const std::string& text) {
  boost::uuids::detail::sha1 sha;
  sha.process_bytes(text.data(), text.size());
  return hex_digest(sha);
}

const std::string& binary_identity() {
  static const std::string identity = [] {
    const std::string id = build_id();
    return std::string("gpumux ") + GPUMUX_VERSION +
           (id.empty() ? " exe " + executable_hash() : " build " + id);
  }();
  return identity;
}

nlohmann::json isolated_process_document(const Workload& workload, const ProcessSpec& process) {
  nlohmann::json streams = nlohmann::json::array();
  for (const StreamSpec& s : process.streams) {
    nlohmann::json commands = nlohmann::json::array();
    for (const CommandSpec& c : s.commands) commands.push_back(command_document(c));
    streams.push_back(std::move(commands));
  }
  nlohmann::json doc = {
      {"tb_duration", workload.tb_duration == TbDurationMode::kFixed ? "fixed" : "profile"},
      {"tb_rsd_percent", workload.tb_rsd_percent ? nlohmann::json(*workload.tb_rsd_percent) : nullptr},
      {"repeat", process.repeat},
      {"streams", std::move(streams)}};
  // Only when not the default, so documents (and the hashes in stats.json) of workloads written
  // before the key existed stay what they were.
  if (workload.kernel_launch != KernelLaunchMode::kSynchronous) {
    doc["kernel_launch"] = to_string(workload.kernel_launch);
  }
  return doc;
}

nlohmann::json workload_document(const Workload& workload) {
  nlohmann::json processes = nlohmann::json::array();
  for (const ProcessSpec& p : workload.processes) {
    processes.push_back({{"name", p.name},
                         {"priority", p.priority},
                         {"tokens", p.tokens ? nlohmann::json(*p.tokens) : nullptr},
                         {"arrival_ps", p.arrival_ps},
                         {"run", isolated_process_document(workload, p)}});
  }
  return {{"name", workload.name},
          {"replay", workload.replay == ReplayMode::kFixed ? "fixed" : "until_all_done"},
          {"replay_limit", workload.replay_limit},
          {"processes", std::move(processes)}};
}

std::string baseline_cache_key(const GpuConfig& gpu, const Workload& alone, std::uint64_t seed,
                               CopyPolicy copy_policy) {
  const ProcessSpec& p = alone.processes.at(0);
  const nlohmann::json key = {
      {"binary", binary_identity()},
      {"gpu", gpu_config_document(gpu)},
      {"seed", seed},
      {"copy_policy", to_string(copy_policy)},
      {"replay", alone.replay == ReplayMode::kFixed ? "fixed" : "until_all_done"},
      {"replay_limit", alone.replay_limit},
      {"process",
       {{"name", p.name},
        {"priority", p.priority},
        {"tokens", p.tokens ? nlohmann::json(*p.tokens) : nullptr},
        {"arrival_ps", p.arrival_ps}}},
      {"run", isolated_process_document(alone, p)},
  };
  return sha1_hex(key.dump());
}

}  // namespace gpumux
