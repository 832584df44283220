#include "predict/simple_slicing.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpumux {

TimePs eq2_remaining(const SliceState& s, std::uint32_t residency) {
  if (s.t == 0 || s.done_blocks >= s.total_blocks) return 0;
  const std::uint64_t left = s.total_blocks - s.done_blocks;
  return left * s.t / std::max(1U, residency);
}

SimpleSlicingPredictor::SimpleSlicingPredictor(std::uint32_t num_sms, std::uint32_t block_slots,
                                               Options options)
    : num_sms_(std::max(1U, num_sms)), block_slots_(std::max(1U, block_slots)), options_(options) {}

SimpleSlicingPredictor::KernelEntry* SimpleSlicingPredictor::find(KernelId kernel) {
  return index(kernel) < kernels_.size() ? kernels_[index(kernel)].get() : nullptr;
}

const SimpleSlicingPredictor::KernelEntry* SimpleSlicingPredictor::find(KernelId kernel) const {
  return index(kernel) < kernels_.size() ? kernels_[index(kernel)].get() : nullptr;
}

SimpleSlicingPredictor::KernelEntry& SimpleSlicingPredictor::entry(KernelId kernel) {
  KernelEntry* e = find(kernel);
  if (e == nullptr) {
    throw std::logic_error("Simple Slicing predictor: kernel #" + std::to_string(index(kernel)) +
                           " was not launched");
  }
  return *e;
}

void SimpleSlicingPredictor::bring_up_to_date(SliceState& s, TimePs now) const {
  // Active_Kernel_Cycles grows on every cycle the kernel has a block (a warp) on the SM.
  if (s.running > 0 && now > s.last_event) s.active_kernel_cycles += now - s.last_event;
  s.last_event = now;
}

void SimpleSlicingPredictor::start_slice(SliceState& s, TimePs now) const {
  ++s.slices;
  s.reslice = true;
  s.slice_start = now;
}

void SimpleSlicingPredictor::on_launch(KernelId kernel, std::uint32_t blocks, std::uint32_t residency,
                                       TimePs now) {
  if (knows(kernel)) return;
  // Kernel launches mark slice boundaries for every running kernel (Pai 4).
  reslice_all(now);
  KernelEntry e;
  e.blocks = blocks;
  e.residency = std::max(1U, residency);
  SliceState s;
  s.total_blocks = (blocks + num_sms_ - 1) / num_sms_;  // Algorithm 1 line 3: ceil(Kernel.Blocks / N_SM)
  s.resident_blocks = e.residency;                      // line 2: Kernel.Residency
  s.block_start.assign(block_slots_, kNever);
  s.reslice = true;  // line 4
  s.slice_start = now;
  s.last_event = now;
  e.sms.assign(num_sms_, s);
  if (kernels_.size() <= index(kernel)) kernels_.resize(index(kernel) + 1);
  kernels_[index(kernel)] = std::make_unique<KernelEntry>(std::move(e));
  live_.push_back(kernel);
}

std::uint32_t SimpleSlicingPredictor::on_block_start(SmId sm, KernelId kernel, TimePs now) {
  KernelEntry& e = entry(kernel);
  SliceState& s = e.sms.at(index(sm));
  bring_up_to_date(s, now);
  auto slot = std::find(s.block_start.begin(), s.block_start.end(), kNever);
  if (slot == s.block_start.end()) slot = s.block_start.insert(s.block_start.end(), kNever);
  *slot = now;  // Algorithm 1 line 9
  ++s.running;
  // Residency change (3.4.3): the kernel now has more blocks here than t was sampled with.
  if (s.own_sample && s.running > s.resident_blocks && options_.residency == ResidencyRule::kObserved) {
    start_slice(s, now);
  }
  return static_cast<std::uint32_t>(slot - s.block_start.begin());
}

void SimpleSlicingPredictor::on_block_end(SmId sm, KernelId kernel, std::uint32_t blkindex, TimePs now) {
  KernelEntry& e = entry(kernel);
  const SliceState& s = e.sms.at(index(sm));
  if (blkindex >= s.block_start.size() || s.block_start[blkindex] == kNever) {
    throw std::logic_error("Simple Slicing predictor: no block in slot " + std::to_string(blkindex));
  }
  end_block(sm, kernel, e, blkindex, s.block_start[blkindex], now);
}

void SimpleSlicingPredictor::on_block_end_started_at(SmId sm, KernelId kernel, TimePs start, TimePs now) {
  KernelEntry& e = entry(kernel);
  const SliceState& s = e.sms.at(index(sm));
  std::optional<std::uint32_t> slot;
  for (std::uint32_t i = 0; i < s.block_start.size(); ++i) {
    if (s.block_start[i] == start) {
      slot = i;
      break;
    }
  }
  end_block(sm, kernel, e, slot, start, now);
}

void SimpleSlicingPredictor::end_block(SmId sm, KernelId kernel, KernelEntry& e,
                                       std::optional<std::uint32_t> slot, TimePs start, TimePs now) {
  (void)kernel;
  SliceState& s = e.sms.at(index(sm));
  remove_from_summary(e, s);
  bring_up_to_date(s, now);
  const std::uint32_t resident_with_this = std::max(1U, s.running);
  if (slot) {
    s.block_start[*slot] = kNever;
    if (s.running > 0) --s.running;
  }
  ++s.done_blocks;  // Algorithm 1 line 11
  ++e.total_blocks_done;
  bool sampled_now = false;
  if (s.reslice && (options_.sample == SampleRule::kFirstToEnd || start >= s.slice_start)) {
    s.t = std::max<TimePs>(1, now - start);  // line 13: t = clock() - Block_Start[blkindex]
    if (options_.residency == ResidencyRule::kObserved) s.resident_blocks = resident_with_this;
    s.own_sample = true;
    ++s.samples;
    sampled_now = true;
    e.sampled = true;
  }
  if (s.t != 0) {  // else no sample yet on this SM: no prediction
    predict(s);
    if (sampled_now) {
      s.reslice = false;  // "Reslice is set to false after every prediction"
      if (s.samples == 1) s.first_prediction = s.pred_cycles;
      s.last_slice_prediction = s.pred_cycles;
    }
  }
  add_to_summary(e, s);
}

void SimpleSlicingPredictor::remove_from_summary(KernelEntry& e, const SliceState& s) {
  if (!s.has_prediction) return;
  e.sum_left -= s.done_blocks >= s.total_blocks ? 0 : s.total_blocks - s.done_blocks;
  e.sum_t -= s.t;
  --e.predicted_sms;
}

void SimpleSlicingPredictor::add_to_summary(KernelEntry& e, const SliceState& s) {
  if (!s.has_prediction) return;
  e.sum_left += s.done_blocks >= s.total_blocks ? 0 : s.total_blocks - s.done_blocks;
  e.sum_t += s.t;
  ++e.predicted_sms;
}

std::optional<SimpleSlicingPredictor::Summary> SimpleSlicingPredictor::summary(KernelId kernel) const {
  const KernelEntry* found = find(kernel);
  if (found == nullptr || found->predicted_sms == 0) return std::nullopt;
  const KernelEntry& e = *found;
  const auto n = static_cast<double>(e.predicted_sms);
  return Summary{e.predicted_sms, static_cast<double>(e.sum_left) / n, static_cast<double>(e.sum_t) / n};
}

void SimpleSlicingPredictor::predict(SliceState& s) {
  // Eq. 2.
  s.remaining = eq2_remaining(s, s.resident_blocks);
  s.pred_cycles = s.active_kernel_cycles + s.remaining;
  s.has_prediction = true;
}

void SimpleSlicingPredictor::on_kernel_end(KernelId kernel, TimePs now) {
  KernelEntry* e = find(kernel);
  if (e == nullptr) return;
  if (options_.record) {
    for (std::uint32_t sm = 0; sm < num_sms_; ++sm) {
      SliceState& s = e->sms[sm];
      bring_up_to_date(s, now);
      if (s.done_blocks == 0) continue;  // the kernel never ran here
      records_.push_back({kernel, SmId{sm}, s.first_prediction, s.last_slice_prediction,
                          s.active_kernel_cycles, s.slices, s.samples});
    }
  }
  kernels_[index(kernel)].reset();
  live_.erase(std::find(live_.begin(), live_.end(), kernel));
  // Kernel endings mark slice boundaries for every running kernel (Algorithm 1 lines 5-7).
  reslice_all(now);
}

void SimpleSlicingPredictor::reslice(SmId sm, KernelId kernel, TimePs now) {
  KernelEntry* e = find(kernel);
  if (e == nullptr) return;
  SliceState& s = e->sms.at(index(sm));
  bring_up_to_date(s, now);
  start_slice(s, now);
}

void SimpleSlicingPredictor::reslice_all(TimePs now) {
  for (KernelId k : live_) {
    for (SliceState& s : kernels_[index(k)]->sms) {
      bring_up_to_date(s, now);
      start_slice(s, now);
    }
  }
}

void SimpleSlicingPredictor::copy_sample(KernelId kernel, SmId from, TimePs now) {
  KernelEntry& e = entry(kernel);
  const SliceState source = e.sms.at(index(from));
  if (source.t == 0) return;
  for (std::uint32_t sm = 0; sm < num_sms_; ++sm) {
    SliceState& s = e.sms[sm];
    if (sm == index(from) || s.own_sample) continue;
    remove_from_summary(e, s);
    bring_up_to_date(s, now);
    s.t = source.t;
    s.resident_blocks = source.resident_blocks;
    predict(s);  // an initial prediction; Reslice stays set, so this SM's own first sample replaces it
    add_to_summary(e, s);
  }
}

const SliceState* SimpleSlicingPredictor::state(SmId sm, KernelId kernel) const {
  const KernelEntry* e = find(kernel);
  if (e == nullptr || index(sm) >= e->sms.size()) return nullptr;
  return &e->sms[index(sm)];
}

std::optional<TimePs> SimpleSlicingPredictor::remaining(SmId sm, KernelId kernel) const {
  const SliceState* s = state(sm, kernel);
  if (s == nullptr || !s->has_prediction) return std::nullopt;
  return s->remaining;
}

bool SimpleSlicingPredictor::sampled(KernelId kernel) const {
  const KernelEntry* e = find(kernel);
  return e != nullptr && e->sampled;
}

std::uint32_t SimpleSlicingPredictor::total_blocks_done(KernelId kernel) const {
  const KernelEntry* e = find(kernel);
  return e == nullptr ? 0 : e->total_blocks_done;
}

}  // namespace gpumux
