#include "program/program_parser.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <cctype>
#include <charconv>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

namespace gpumux::program {

namespace {

using config::YamlMap;
using config::YamlNode;

struct OpInfo {
  const char* name;
  Op op;
  bool writes;  ///< has `rD <-`
  bool reads;   ///< reads at least one register
  bool bytes;   ///< takes a size (NB) and an access pattern
};

constexpr std::array<OpInfo, 7> kOps = {{
    {"alu", Op::kAlu, true, true, false},
    {"sfu", Op::kSfu, true, true, false},
    {"lds", Op::kSharedLoad, true, true, false},
    {"sts", Op::kSharedStore, false, true, false},
    {"ldg", Op::kGlobalLoad, true, true, true},
    {"stg", Op::kGlobalStore, false, true, true},
    {"bar", Op::kBarrier, false, false, false},
}};

[[nodiscard]] bool in_load(const OpInfo& info) { return info.op == Op::kGlobalLoad; }

/// What the operands of an op look like, for messages.
std::string shape(const OpInfo& info) {
  std::string text = info.name;
  if (info.writes) text += " rD <-";
  if (info.reads) text += " rS[, rS...]";
  if (info.bytes) {
    text += in_load(info) ? " NB [coalesced|scattered [within MB]|broadcast]"
                          : " NB [coalesced|scattered [within MB]]";
  }
  return text;
}

/// Splits an instruction into tokens: words, ',' and '<-' (which need no surrounding spaces).
std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> tokens;
  std::string word;
  const auto flush = [&] {
    if (!word.empty()) tokens.push_back(std::move(word));
    word.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t') {
      flush();
    } else if (c == ',') {
      flush();
      tokens.emplace_back(",");
    } else if (c == '<' && i + 1 < text.size() && text[i + 1] == '-') {
      flush();
      tokens.emplace_back("<-");
      ++i;
    } else {
      word += c;
    }
  }
  flush();
  return tokens;
}

/// "r0" .. "r254", no leading zeros; nullopt otherwise.
std::optional<Reg> parse_register(const std::string& token) {
  if (token.size() < 2 || token.size() > 4 || token[0] != 'r') return std::nullopt;
  if (token.size() > 2 && token[1] == '0') return std::nullopt;
  unsigned value = 0;
  const char* first = token.data() + 1;
  const char* last = token.data() + token.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end != last || value > kMaxRegister) return std::nullopt;
  return static_cast<Reg>(value);
}

std::string register_problem(const std::string& token) {
  if (token == "," || token == "<-") return "expected a register (r0 .. r254), got '" + token + "'";
  return "malformed operand '" + token + "': a register is r0 .. r" + std::to_string(kMaxRegister);
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kCap = std::uint64_t{1} << 62U;
  return std::min(kCap, a + b);  // both operands are at most kCap: no wrap
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  constexpr std::uint64_t kCap = std::uint64_t{1} << 62U;
  if (a != 0 && b > kCap / a) return kCap;
  return std::min(kCap, a * b);
}

/// A quantity that depends on a warp's index in its thread block only through per-warp trip-count
/// lists (each indexed by warp modulo its length), so it is periodic: value(w) = v[w % period].
/// The period never exceeds the warps of a thread block (beyond that, the entries are the warps
/// themselves), so the entries are exactly the values some warp sees.
class PerWarp {
 public:
  explicit PerWarp(std::uint64_t value) : values_{value} {}
  PerWarp(const std::vector<std::uint32_t>& trips, std::uint32_t warps) {
    const std::size_t period = std::min<std::size_t>(trips.size(), warps);
    values_.assign(trips.begin(), trips.begin() + static_cast<std::ptrdiff_t>(period));
    collapse();
  }

  [[nodiscard]] std::uint64_t at(std::size_t warp) const { return values_[warp % values_.size()]; }
  [[nodiscard]] std::size_t period() const { return values_.size(); }
  [[nodiscard]] bool uniform() const { return values_.size() == 1; }
  [[nodiscard]] std::uint64_t max() const { return *std::max_element(values_.begin(), values_.end()); }
  /// The warp with the largest value (the first one).
  [[nodiscard]] std::size_t argmax() const {
    return static_cast<std::size_t>(std::max_element(values_.begin(), values_.end()) - values_.begin());
  }

  template <typename Combine>
  [[nodiscard]] PerWarp combine(const PerWarp& other, std::uint32_t warps, Combine f) const {
    std::uint64_t period = std::lcm<std::uint64_t>(period_u64(), other.period_u64());
    period = std::min<std::uint64_t>(period, std::max<std::uint32_t>(warps, 1));
    PerWarp out(0);
    out.values_.resize(static_cast<std::size_t>(period));
    for (std::size_t w = 0; w < out.values_.size(); ++w) out.values_[w] = f(at(w), other.at(w));
    out.collapse();
    return out;
  }

 private:
  [[nodiscard]] std::uint64_t period_u64() const { return values_.size(); }
  void collapse() {
    if (std::all_of(values_.begin(), values_.end(), [&](std::uint64_t v) { return v == values_.front(); })) {
      values_.resize(1);
    }
  }
  std::vector<std::uint64_t> values_;
};

std::string trips_text(const std::vector<std::uint32_t>& trips) {
  std::string text;
  for (std::size_t i = 0; i < trips.size(); ++i) text += (i == 0 ? "" : ",") + std::to_string(trips[i]);
  return text;
}

class Compiler {
 public:
  Compiler(Program& program, std::uint32_t warps)
      : program_(program), warps_(std::max<std::uint32_t>(warps, 1)) {
    for (Reg r = 0; r < kLiveInRegisters; ++r) written_.set(r);
  }

  /// A list of instructions and loops; returns how many instructions each warp executes in it.
  PerWarp sequence(const YamlNode& list, const char* what) {
    if (!list.is_list()) {
      list.fail("expected a list of instructions and loops, got " + list.describe());
    }
    const std::vector<YamlNode> items = list.as_list(false);
    if (items.empty()) list.fail(std::string(what) + " needs at least one instruction");
    std::uint64_t straight = 0;  // instructions outside loops: once per warp
    PerWarp loops(0);
    for (const YamlNode& item : items) {
      if (item.is_map()) {
        const PerWarp count = loop(item);
        loops = loops.combine(count, warps_, saturating_add);
      } else if (item.is_list() || item.is_null()) {
        item.fail("expected an instruction (a string) or a loop ({loop: N, body: [...]}), got " +
                  item.describe());
      } else {
        instruction(item);
        ++straight;
      }
    }
    return loops.combine(PerWarp(straight), warps_, saturating_add);
  }

  void finish(const YamlNode& node, const PerWarp& count) {
    check_dynamic(node, count, "the program");
    program_.dynamic_instructions = count.at(0);
  }

 private:
  void emit(const YamlNode& where, Instruction instruction) {
    if (program_.code.size() >= kMaxStaticInstructions) {
      where.fail("a program may have at most " + std::to_string(kMaxStaticInstructions) +
                 " instructions (loop ends included)");
    }
    instruction.line = static_cast<std::uint32_t>(std::max(where.where().line, 0));
    program_.code.push_back(std::move(instruction));
  }

  void instruction(const YamlNode& item) {
    const std::string text = item.as_string();
    if (text.find_first_of("\r\n") != std::string::npos) {
      item.fail("an instruction is one line; give each instruction its own list item");
    }
    ParsedInstruction parsed = parse_instruction(text);
    if (!parsed.error.empty()) item.fail(parsed.error);
    Instruction& in = parsed.instruction;
    // A register must hold a value before it is read: in program order, the order in which a warp
    // first reaches each instruction (a loop body's first pass included), so a value carried around
    // a loop must be written before the loop too.
    for (const Reg r : in.reads) {
      if (!written_.test(r)) {
        std::vector<std::string> live_in;
        for (Reg l = 0; l < kLiveInRegisters; ++l) live_in.push_back("r" + std::to_string(l));
        item.fail("reads r" + std::to_string(r) + " before any instruction writes it (only " +
                  config::join_choices(live_in, " and ") +
                  " are live-in: the thread's index in its block and the block's index)");
      }
      note_register(r);
    }
    if (in.write != kNoReg) {
      written_.set(in.write);
      note_register(in.write);
    }
    if (in.op == Op::kBarrier) check_barrier(item);
    emit(item, std::move(in));
  }

  void note_register(Reg r) { program_.registers = std::max<std::uint32_t>(program_.registers, r + 1U); }

  /// CUDA requires every thread of a block to reach each __syncthreads (CUDA C Programming Guide,
  /// "Synchronization Functions"); a barrier that some warps pass more often than others would wait
  /// forever. How often warp w passes a barrier is the product of its enclosing loops' trip counts
  /// for w, compared exactly over the warps of a thread block.
  void check_barrier(const YamlNode& item) const {
    const PerWarp& times = frames_.empty() ? kOnce : frames_.back().executions;
    if (times.uniform()) return;
    std::size_t other = 1;
    while (times.at(other) == times.at(0)) ++other;  // not uniform: some warp differs from warp 0
    item.fail("warps of a thread block reach this barrier a different number of times (warp 0: " +
              std::to_string(times.at(0)) + ", warp " + std::to_string(other) + ": " +
              std::to_string(times.at(other)) +
              ") because an enclosing loop's per-warp trip counts differ; every warp must reach every "
              "barrier equally often");
  }

  std::vector<std::uint32_t> trips(const YamlNode& node) const {
    const auto one = [](const YamlNode& value) -> std::uint32_t {
      const std::int64_t n = value.as_int();
      if (n < 1) {
        value.fail("a loop runs its body at least once: the trip count must be at least 1, got " +
                   std::to_string(n));
      }
      if (n > kMaxTripCount) {
        value.fail("a trip count may be at most " + std::to_string(kMaxTripCount) + ", got " +
                   std::to_string(n));
      }
      return static_cast<std::uint32_t>(n);
    };
    if (!node.is_list()) return {one(node)};
    const std::vector<YamlNode> items = node.as_list(false);
    if (items.empty()) node.fail("a per-warp trip-count list needs at least one entry");
    if (items.size() > kMaxPerWarpTripCounts) {
      node.fail("a per-warp trip-count list may have at most " + std::to_string(kMaxPerWarpTripCounts) +
                " entries, got " + std::to_string(items.size()));
    }
    std::vector<std::uint32_t> counts;
    counts.reserve(items.size());
    for (const YamlNode& item : items) counts.push_back(one(item));
    return counts;
  }

  PerWarp loop(const YamlNode& item) {
    const YamlMap m(item, {"loop", "body"});
    const YamlNode loop_node = m.required("loop");
    const std::vector<std::uint32_t> counts = trips(loop_node);
    if (frames_.size() >= kMaxLoopDepth) {
      loop_node.fail("loops may nest at most " + std::to_string(kMaxLoopDepth) + " deep");
    }
    const auto depth = static_cast<std::uint8_t>(frames_.size());
    const PerWarp per_warp(counts, warps_);
    const PerWarp& outer = frames_.empty() ? kOnce : frames_.back().executions;
    frames_.push_back(Frame{outer.combine(per_warp, warps_, saturating_mul)});
    const auto target = static_cast<std::uint32_t>(program_.code.size());
    const PerWarp body = sequence(m.required("body"), "a loop body");
    frames_.pop_back();

    Instruction back;
    back.op = Op::kLoopBack;
    back.target = target;
    back.depth = depth;
    back.trip_counts = counts;
    emit(loop_node, std::move(back));
    program_.loop_depth = std::max<std::uint32_t>(program_.loop_depth, depth + 1U);

    // Each iteration runs the body and the loop-back once.
    const PerWarp per_iteration = body.combine(PerWarp(1), warps_, saturating_add);
    PerWarp count = per_warp.combine(per_iteration, warps_, saturating_mul);
    check_dynamic(loop_node, count, "this loop");
    return count;
  }

  static void check_dynamic(const YamlNode& node, const PerWarp& count, const char* what) {
    if (count.max() <= kMaxDynamicInstructions) return;
    const std::uint64_t n = count.max();
    const std::string amount = n >= (std::uint64_t{1} << 62U) ? "more than 4e18" : std::to_string(n);
    node.fail(std::string(what) + " executes " + amount + " instructions per warp (warp " +
              std::to_string(count.argmax()) + "), beyond the limit of " +
              std::to_string(kMaxDynamicInstructions));
  }

  struct Frame {
    PerWarp executions;  ///< how often each warp runs the loop's body
  };

  inline static const PerWarp kOnce{1};
  Program& program_;
  std::uint32_t warps_;
  std::bitset<256> written_;
  std::vector<Frame> frames_;
};

}  // namespace

const char* op_name(Op op) {
  for (const OpInfo& info : kOps) {
    if (info.op == op) return info.name;
  }
  return "loop";
}

ParsedInstruction parse_instruction(std::string_view text) {
  ParsedInstruction result;
  Instruction& in = result.instruction;
  const std::vector<std::string> tokens = tokenize(text);
  if (tokens.empty()) {
    result.error = "an empty instruction";
    return result;
  }
  const auto info =
      std::find_if(kOps.begin(), kOps.end(), [&](const OpInfo& i) { return tokens[0] == i.name; });
  if (info == kOps.end()) {
    std::vector<std::string> names;
    names.reserve(kOps.size());
    for (const OpInfo& i : kOps) names.emplace_back(i.name);
    const std::string guess = config::closest_name(tokens[0], names);
    result.error = "unknown op '" + tokens[0] + "'" +
                   (guess.empty() ? "" : " (did you mean '" + guess + "'?)") + "; ops are " +
                   config::join_choices(names, " and ");
    return result;
  }
  in.op = info->op;
  const std::string form = " (" + shape(*info) + ")";
  std::size_t i = 1;
  const auto next = [&]() -> std::string { return i < tokens.size() ? tokens[i] : std::string(); };
  const auto fail = [&](const std::string& message) {
    result.error = message;
    return result;
  };

  if (info->writes) {
    const std::string dest = next();
    if (dest.empty()) return fail(std::string(info->name) + " needs a register to write" + form);
    const auto reg = parse_register(dest);
    if (!reg) return fail(register_problem(dest) + form);
    in.write = *reg;
    ++i;
    if (next() != "<-") {
      return fail("expected '<-' after " + dest + (next().empty() ? "" : ", got '" + next() + "'") + form);
    }
    ++i;
  }
  if (info->reads) {
    while (true) {
      const std::string source = next();
      if (source.empty()) {
        return fail(std::string(info->name) + " needs at least one register to read" + form);
      }
      if (source == "<-") {
        return fail(std::string(info->name) + " writes no register: list only the registers it reads" + form);
      }
      const auto reg = parse_register(source);
      if (!reg) return fail(register_problem(source) + form);
      if (in.reads.size() == kMaxSources) {
        return fail("an instruction reads at most " + std::to_string(kMaxSources) + " registers");
      }
      in.reads.push_back(*reg);
      ++i;
      if (next() != ",") break;
      ++i;
    }
    if (next() == "<-") {
      return fail(std::string(info->name) + " writes no register: list only the registers it reads" + form);
    }
  }
  if (info->bytes) {
    const std::string size = next();
    if (size.empty()) {
      return fail(std::string(info->name) + " needs the bytes the warp moves, e.g. 128B" + form);
    }
    std::uint64_t bytes = 0;
    const char* first = size.data();
    const char* last = size.data() + size.size();
    const auto [end, ec] = std::from_chars(first, last, bytes);
    if (end == first || end + 1 != last || *end != 'B') {
      return fail("malformed size '" + size + "': bytes per warp are written like 128B" + form);
    }
    if (ec == std::errc::result_out_of_range || bytes == 0 || bytes > kMaxAccessBytes) {
      return fail("bytes per warp must be between 1 and " + std::to_string(kMaxAccessBytes) +
                  " (1 MiB), got " + size);
    }
    in.bytes = static_cast<std::uint32_t>(bytes);
    ++i;
    if (next() == "coalesced") {
      ++i;
    } else if (next() == "scattered") {
      in.access = Access::kScattered;
      ++i;
      if (next() == "within") {
        ++i;
        const std::string extent = next();
        std::uint64_t table = 0;
        const char* from = extent.data();
        const char* to = extent.data() + extent.size();
        const auto [stop, error] = std::from_chars(from, to, table);
        if (extent.empty() || stop == from || stop + 1 != to || *stop != 'B') {
          return fail(
              "'scattered within' needs the bytes of the table the threads index, written like "
              "324800B, got '" +
              extent + "'" + form);
        }
        if (error == std::errc::result_out_of_range || table == 0 || table > kMaxScatterBytes) {
          return fail("'scattered within' takes between 1 and " + std::to_string(kMaxScatterBytes) +
                      " bytes (32 GiB), got " + extent);
        }
        in.scatter_bytes = table;
        ++i;
      }
    } else if (next() == "broadcast") {
      if (in.op != Op::kGlobalLoad) {
        return fail(
            "broadcast is an access pattern of loads (every warp of the thread block reads the same "
            "bytes); a store is coalesced or scattered" +
            form);
      }
      in.access = Access::kBroadcast;
      ++i;
    }
  }
  if (i < tokens.size()) {
    std::string extra = "unexpected '" + tokens[i] + "'";
    if (info->bytes && i + 1 == tokens.size()) {
      extra += in_load(*info) ? " (the access pattern is coalesced, scattered or broadcast)"
                              : " (the access pattern is coalesced or scattered)";
    }
    return fail(extra + form);
  }
  return result;
}

std::string to_text(const Instruction& in) {
  std::string text = op_name(in.op);
  if (in.op == Op::kLoopBack) {
    return text + " -> pc " + std::to_string(in.target) + " depth " + std::to_string(in.depth) + " trips " +
           trips_text(in.trip_counts);
  }
  if (in.write != kNoReg) text += " r" + std::to_string(in.write) + " <-";
  for (std::size_t i = 0; i < in.reads.size(); ++i) {
    text += (i == 0 ? " r" : ", r") + std::to_string(in.reads[i]);
  }
  if (in.op == Op::kGlobalLoad || in.op == Op::kGlobalStore) {
    const char* pattern = in.access == Access::kScattered   ? "scattered"
                          : in.access == Access::kBroadcast ? "broadcast"
                                                            : "coalesced";
    text += " " + std::to_string(in.bytes) + "B " + pattern;
    if (in.scatter_bytes != 0) text += " within " + std::to_string(in.scatter_bytes) + "B";
  }
  return text;
}

Program compile_program(const YamlNode& node, std::uint32_t warps_per_tb) {
  Program program;
  const SourceLocation where = node.where();
  program.source = where.file + ":" + std::to_string(where.line);
  Compiler compiler(program, warps_per_tb);
  const PerWarp count = compiler.sequence(node, "a program");
  compiler.finish(node, count);
  return program;
}

}  // namespace gpumux::program
