#include "mem/dram_memory_system.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/processes.h"
#include "mem/memory_port.h"

namespace gpumux {

// ---- LatencyHistogram ----------------------------------------------------------------------------

void LatencyHistogram::add(TimePs latency_ps) {
  if (buckets_.empty()) buckets_.assign(kBuckets, 0);
  const TimePs ns = latency_ps / 1000;
  if (ns < kBuckets) {
    ++buckets_[ns];
  } else {
    over_.push_back(latency_ps);
  }
  ++count_;
  sum_ps_ += static_cast<double>(latency_ps);
}

double LatencyHistogram::mean_ns() const {
  return count_ == 0 ? 0.0 : sum_ps_ / static_cast<double>(count_) / 1000.0;
}

double LatencyHistogram::percentile_ns(double fraction) const {
  if (count_ == 0) return 0.0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(fraction * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (std::size_t ns = 0; ns < buckets_.size(); ++ns) {
    seen += buckets_[ns];
    if (seen >= rank) return static_cast<double>(ns);
  }
  std::vector<TimePs> over = over_;
  std::sort(over.begin(), over.end());
  const std::size_t i = std::min<std::size_t>(rank - seen - 1, over.size() - 1);
  return static_cast<double>(over[i]) / 1000.0;
}

// ---- DramMemorySystem ----------------------------------------------------------------------------

DramMemorySystem::DramMemorySystem(const sc_core::sc_module_name& name, const GpuConfig& gpu)
    : MemoryTarget(name),
      hit_ps_(gpu.cycles_to_ps(gpu.memory.l2.hit_latency_cycles)),
      to_dram_ps_(hit_ps_ / 2),
      from_dram_ps_(hit_ps_ - hit_ps_ / 2),
      line_bytes_(gpu.memory.l2.cache.line_bytes),
      sector_bytes_(gpu.memory.l2.cache.sector_bytes),
      atom_bytes_(dram::atom_bytes(gpu.memory.dram)),
      sectors_per_atom_(std::max<std::uint32_t>(atom_bytes_ / sector_bytes_, 1)),
      dram_(gpu.memory.dram),
      channel_latency_(gpu.memory.dram.channels) {
  cache::CacheConfig slice = gpu.memory.l2.cache;
  slice.capacity_bytes /= gpu.memory.dram.channels;
  slice.write_back = true;
  for (std::uint32_t c = 0; c < gpu.memory.dram.channels; ++c) slices_.emplace_back(slice);
  spawn_method("dram", wake_, [this] { step(); });
}

void DramMemorySystem::blocking_request(std::uint32_t initiator, tlm::tlm_generic_payload& /*payload*/,
                                        sc_core::sc_time& /*delay*/) {
  throw InvariantViolation(std::string(name()) + ": initiator " + std::to_string(initiator) +
                           " called b_transport; the dram memory model answers only the non-blocking "
                           "protocol (mem/memory_port.h)");
}

tlm::tlm_sync_enum DramMemorySystem::request(std::uint32_t initiator, tlm::tlm_generic_payload& payload,
                                             sc_core::sc_time& delay) {
  const TimePs now = sc_core::sc_time_stamp().value();
  if (delay != sc_core::SC_ZERO_TIME) {
    throw InvariantViolation(std::string(name()) + ": a request from initiator " + std::to_string(initiator) +
                             " annotated with a delay; send requests at the time they arrive");
  }
  const std::uint64_t bytes = payload.get_data_length();
  admit(initiator, bytes, now);
  std::uint32_t r = 0;
  if (free_requests_.empty()) {
    r = static_cast<std::uint32_t>(requests_.size());
    requests_.emplace_back();
  } else {
    r = free_requests_.back();
    free_requests_.pop_back();
  }
  // One piece more than the lines, taken back below: the request cannot finish while being split.
  requests_[r] = Request{&payload, initiator, 1, now, now};
  KernelTraffic* traffic = nullptr;
  if (const RequestTag* tag = payload.get_extension<RequestTag>();
      tag != nullptr && tag->kernel != kNoKernelTag) {
    if (tag->kernel >= kernels_.size()) kernels_.resize(tag->kernel + 1);
    traffic = &kernels_[tag->kernel];
    traffic->bytes += bytes;
  }
  const bool is_write = payload.is_write();
  std::uint64_t address = payload.get_address();
  std::uint64_t left = bytes;
  while (left > 0) {
    const std::uint64_t in_line = line_bytes_ - address % line_bytes_;
    const auto piece = static_cast<std::uint32_t>(std::min(left, in_line));
    ++requests_[r].pieces;
    access_line(r, address, piece, is_write, traffic);
    address += piece;
    left -= piece;
  }
  // Only what reached the DRAM can move its next event (hits and posted stores do not).
  if (enqueued_) {
    enqueued_ = false;
    wake_dram();
  }
  Request& req = requests_[r];
  if (--req.pieces == 0) {
    const TimePs done = req.done_ps;
    request_latency_.add(done - now);
    log({now, done, bytes, initiator, is_write});
    free_requests_.push_back(r);
    delay = sc_core::sc_time::from_value(done - now);
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
  return tlm::TLM_ACCEPTED;
}

void DramMemorySystem::access_line(std::uint32_t r, std::uint64_t address, std::uint32_t bytes, bool is_write,
                                   KernelTraffic* traffic) {
  const TimePs now = sc_core::sc_time_stamp().value();
  const std::uint64_t line = address - address % line_bytes_;
  const std::uint32_t channel = dram_.mapping().decode(line).channel;
  cache::SectorCache& slice = slices_[channel];
  const std::uint32_t asked = slice.sector_mask(address, bytes);
  const cache::AccessResult result = slice.access(address, bytes, is_write);
  if (traffic != nullptr) traffic->sectors += static_cast<std::uint64_t>(__builtin_popcount(asked));
  if (result.writeback_mask != 0) {
    ++writebacks_;
    fetch(result.writeback_address, result.writeback_mask, channel, true);
  }
  TimePs done = now + hit_ps_;
  if (is_write) {
    piece_done(r, done);  // posted in L2
    return;
  }
  const auto count = [](std::uint32_t mask) { return static_cast<std::uint64_t>(__builtin_popcount(mask)); };
  if (traffic != nullptr) {
    traffic->sector_hits += count(asked & ~result.miss_sectors);
    traffic->sector_misses += count(result.miss_sectors);
  }
  std::uint32_t missing = 0;
  auto fill = fills_.find(line);
  if (fill != fills_.end()) {
    // Sectors present or merged whose data is still on its way (or not yet scheduled).
    const std::vector<TimePs>& ready = fill->second.ready_ps;
    for (std::uint32_t s = 0; s < ready.size(); ++s) {
      if ((asked & (1U << s)) == 0 || ready[s] == 0) continue;
      if (ready[s] == kNever) {
        missing |= 1U << s;
      } else {
        done = std::max(done, ready[s] + from_dram_ps_);
      }
    }
  }
  if (result.miss_sectors != 0) {
    if (fill == fills_.end()) {
      fill = fills_.emplace(line, LineFill{}).first;
      fill->second.ready_ps.assign(slice.sectors_per_line(), 0);
    }
    for (std::uint32_t s = 0; s < fill->second.ready_ps.size(); ++s) {
      if ((result.miss_sectors & (1U << s)) != 0) fill->second.ready_ps[s] = kNever;
    }
    missing |= result.miss_sectors;
    fetch(line, result.miss_sectors, channel, false);
  }
  if (missing == 0) {
    piece_done(r, done);
    return;
  }
  fill->second.waiters.push_back({r, missing, done});
}

void DramMemorySystem::set_dram_log(DramActivity* log) {
  activity_ = log;
  dram_.set_command_log(log == nullptr ? nullptr : &log->commands);
  if (log == nullptr) return;
  const dram::DramConfig& config = dram_.config();
  log->channels = config.channels;
  log->banks = config.banks;
  log->refresh_ps = config.refresh ? config.timing.tRFC * dram_.clock_period_ps() : 0;
}

void DramMemorySystem::fetch(std::uint64_t line, std::uint32_t sectors, std::uint32_t channel,
                             bool is_write) {
  const TimePs arrival = sc_core::sc_time_stamp().value() + to_dram_ps_;
  const std::uint32_t sectors_per_line = line_bytes_ / sector_bytes_;
  const std::uint32_t atom_mask = sectors_per_atom_ >= 32 ? ~0U : (1U << sectors_per_atom_) - 1;
  // One burst per atom holding any of the sectors (a sector larger than the atom takes several).
  const std::uint32_t bursts_per_sector = std::max<std::uint32_t>(sector_bytes_ / atom_bytes_, 1);
  for (std::uint32_t first = 0; first < sectors_per_line; first += sectors_per_atom_) {
    const std::uint32_t in_atom = sectors & (atom_mask << first);
    if (in_atom == 0) continue;
    for (std::uint32_t k = 0; k < bursts_per_sector; ++k) {
      std::uint32_t id = 0;
      if (free_bursts_.empty()) {
        id = static_cast<std::uint32_t>(bursts_.size());
        bursts_.emplace_back();
      } else {
        id = free_bursts_.back();
        free_bursts_.pop_back();
      }
      // A burst of a sector split into several carries the sector only on its last one.
      const bool last = k + 1 == bursts_per_sector;
      bursts_[id] = Burst{line, last ? in_atom : 0, channel, is_write, true, arrival};
      const std::uint64_t address = line + static_cast<std::uint64_t>(first) * sector_bytes_ +
                                    static_cast<std::uint64_t>(k) * atom_bytes_;
      dram_.enqueue({id, address, is_write, arrival});
      if (activity_ != nullptr) activity_->arrivals.emplace_back(arrival, channel);
      enqueued_ = true;
    }
  }
}

void DramMemorySystem::piece_done(std::uint32_t r, TimePs done_ps) {
  Request& req = requests_[r];
  req.done_ps = std::max(req.done_ps, done_ps);
  if (--req.pieces > 0) return;
  // Answered from the DRAM process (the forward path answers the requests finished while being split).
  request_latency_.add(req.done_ps - req.arrival_ps);
  log({req.arrival_ps, req.done_ps, req.payload->get_data_length(), req.initiator, req.payload->is_write()});
  free_requests_.push_back(r);
  respond(req.initiator, *req.payload, req.done_ps);
}

void DramMemorySystem::on_burst_done(const dram::DramCompletion& c) {
  Burst& live = bursts_.at(c.id);
  if (!live.live) {
    throw InvariantViolation(std::string(name()) + ": DRAM request " + std::to_string(c.id) +
                             " answered twice");
  }
  live.live = false;
  const Burst b = live;
  free_bursts_.push_back(static_cast<std::uint32_t>(c.id));
  if (b.is_write) return;  // write-backs: nobody waits
  channel_latency_[b.channel].add(c.done_ps - b.arrival_ps);
  if (b.sectors == 0) return;
  slices_[b.channel].fill(b.line, b.sectors);
  const auto fill = fills_.find(b.line);
  // A line evicted while its sectors were being fetched (every way of its set waiting for a fill) and
  // missed again sends a second read for the same sectors; the first one's data served every waiter, so
  // the second lands on nothing (the cache counts it as an orphan fill).
  if (fill == fills_.end()) return;
  LineFill& f = fill->second;
  for (std::uint32_t s = 0; s < f.ready_ps.size(); ++s) {
    if ((b.sectors & (1U << s)) != 0) f.ready_ps[s] = c.done_ps;
  }
  landed_.push({c.done_ps, b.line});
  const TimePs back = c.done_ps + from_dram_ps_;
  // Answer the loads this burst completes (in the order they came: deterministic).
  std::vector<Waiter> finished;
  for (auto it = f.waiters.begin(); it != f.waiters.end();) {
    if ((it->sectors & b.sectors) == 0) {
      ++it;
      continue;
    }
    it->done_ps = std::max(it->done_ps, back);
    it->sectors &= ~b.sectors;
    if (it->sectors == 0) {
      finished.push_back(*it);
      it = f.waiters.erase(it);
    } else {
      ++it;
    }
  }
  for (const Waiter& w : finished) piece_done(w.request, w.done_ps);
}

void DramMemorySystem::step() {
  const TimePs now = sc_core::sc_time_stamp().value();
  wake_at_ps_ = kNever;
  completions_.clear();
  dram_.advance(now, completions_);
  for (const dram::DramCompletion& c : completions_) on_burst_done(c);
  // Fill records whose data has landed and that nobody waits on are dropped.
  while (!landed_.empty() && landed_.top().first <= now) {
    const std::uint64_t line = landed_.top().second;
    landed_.pop();
    const auto fill = fills_.find(line);
    if (fill == fills_.end()) continue;
    bool busy = !fill->second.waiters.empty();
    for (TimePs& t : fill->second.ready_ps) {
      if (t != 0 && t != kNever && t <= now) t = 0;
      busy = busy || t != 0;
    }
    if (!busy) fills_.erase(fill);
  }
  wake_dram();
}

void DramMemorySystem::wake_dram() {
  const TimePs now = sc_core::sc_time_stamp().value();
  TimePs next = dram_.next_event_ps();
  // Landed fills are dropped at the DRAM's next wake; one more wake once all have landed.
  if (next == kNever && !landed_.empty()) next = landed_.top().first;
  if (next == kNever || next >= wake_at_ps_) return;
  wake_at_ps_ = std::max(next, now);
  wake_.notify(sc_core::sc_time::from_value(wake_at_ps_ - now));
}

TimePs DramMemorySystem::busy_ps() const {
  TimePs total = 0;
  for (std::uint32_t c = 0; c < dram_.channels(); ++c) total += dram_.channel_stats(c).data_bus_busy_ps;
  return total / dram_.channels();
}

double DramMemorySystem::l2_load_hit_rate() const {
  std::uint64_t hits = 0;
  std::uint64_t all = 0;
  for (const cache::SectorCache& s : slices_) {
    const auto& st = s.stats();
    hits += st.sector_hits + st.sector_merges;
    all += st.sector_hits + st.sector_merges + st.sector_misses;
  }
  return all == 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(all);
}

nlohmann::json DramMemorySystem::details(TimePs end_ps) const {
  nlohmann::json channels = nlohmann::json::array();
  const double seconds = static_cast<double>(std::max<TimePs>(end_ps, 1)) / 1e12;
  std::uint64_t dram_bytes = 0;
  for (std::uint32_t c = 0; c < dram_.channels(); ++c) {
    const dram::ChannelStats& st = dram_.channel_stats(c);
    dram_bytes += (st.reads + st.writes) * dram_.atom_bytes();
    nlohmann::json banks = nlohmann::json::array();
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t conflicts = 0;
    for (const dram::BankStats& b : st.banks) {
      banks.push_back({{"row_hits", b.row_hits},
                       {"row_misses", b.row_misses},
                       {"row_conflicts", b.row_conflicts},
                       {"reads", b.reads},
                       {"writes", b.writes}});
      hits += b.row_hits;
      misses += b.row_misses;
      conflicts += b.row_conflicts;
    }
    channels.push_back(
        {{"channel", c},
         {"reads", st.reads},
         {"writes", st.writes},
         {"row_hits", hits},
         {"row_misses", misses},
         {"row_conflicts", conflicts},
         {"refreshes", st.refreshes},
         {"bandwidth_gb_per_s",
          static_cast<double>((st.reads + st.writes) * dram_.atom_bytes()) / seconds / 1e9},
         {"data_bus_busy_percent", 100.0 * static_cast<double>(st.data_bus_busy_ps) / (seconds * 1e12)},
         {"queue_mean", st.queue_occupancy_integral / (seconds * 1e12)},
         {"queue_max", st.max_queue},
         {"write_drains", st.write_drains},
         {"read_latency_mean_ns", channel_latency_[c].mean_ns()},
         {"read_latency_p99_ns", channel_latency_[c].percentile_ns(0.99)},
         {"banks", banks}});
  }
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t merges = 0;
  std::uint64_t writeback_sectors = 0;
  std::uint64_t dirty_sectors = 0;
  for (const cache::SectorCache& s : slices_) {
    dirty_sectors += s.dirty_sectors();
    hits += s.stats().sector_hits;
    misses += s.stats().sector_misses;
    merges += s.stats().sector_merges;
    writeback_sectors += s.stats().writeback_sectors;
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (std::size_t k = 0; k < kernels_.size(); ++k) {
    const KernelTraffic& t = kernels_[k];
    if (t.bytes == 0) continue;
    const std::uint64_t asked = t.sector_hits + t.sector_misses;
    kernels.push_back({{"kernel", k},
                       {"bytes", t.bytes},
                       {"sector_bytes", t.sectors * sector_bytes_},
                       {"l2_load_hit_rate",
                        asked == 0 ? 0.0 : static_cast<double>(t.sector_hits) / static_cast<double>(asked)}});
  }
  return {{"model", "dram"},
          {"requests", transactions()},
          {"dram_bytes", dram_bytes},
          {"request_latency_mean_ns", request_latency_.mean_ns()},
          {"request_latency_p99_ns", request_latency_.percentile_ns(0.99)},
          {"l2",
           {{"sector_hits", hits},
            {"sector_misses", misses},
            {"sector_merges", merges},
            {"load_hit_rate", l2_load_hit_rate()},
            {"writebacks", writebacks_},
            {"writeback_sectors", writeback_sectors},
            {"dirty_sectors_at_end", dirty_sectors}}},
          {"channels", channels},
          {"kernels", kernels}};
}

}  // namespace gpumux
