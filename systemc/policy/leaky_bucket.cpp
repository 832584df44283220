#include "policy/leaky_bucket.h"

#include <algorithm>
#include <cmath>

#include "policy/clock_edges.h"

namespace gpumux {

namespace {

using Ref = LeakyBucketReference;

constexpr std::uint32_t kLevelBits = 24;
constexpr std::uint32_t kMaxShare = 255;
constexpr std::uint32_t kOne = 1U << Ref::kFracBits;  ///< rate of one token per cycle
/// Safety net: with at least one active bucket a grant comes within capacity / rate cycles.
constexpr std::uint64_t kMaxCyclesPerGrant = 1U << kLevelBits;

}  // namespace

LeakyBucketPolicy::LeakyBucketPolicy(std::vector<std::uint32_t> shares, bool compensate,
                                     bool hardware_latency)
    : shares_(std::move(shares)), compensate_(compensate), hardware_latency_(hardware_latency) {}

const OptionSpecs& LeakyBucketPolicy::option_specs() {
  static const OptionSpecs specs = {
      OptionSpec::integer_list(
          "shares", 1, kMaxShare, ':',
          "every process takes its workload tokens (the SM budget DSS uses), else 1",
          "share of each process, in workload order; processes past the list as with none"),
      OptionSpec::on_off("compensate", true,
                         "rate compensation: scale each bucket's rate by (shortest mean TB time) / (the "
                         "kernel's mean TB time) so SMs held follow the shares (Liang 4.1)"),
      OptionSpec::choice("latency", {"instant", "hardware"}, "instant",
                         "interleaving cycles: abstract (only the order of thread blocks), or at the GPU's "
                         "core clock (at most one thread block dispatched per cycle)"),
      OptionSpec::integer("gather_ns", 0, 1000000000, 0,
                          "hold the first thread blocks until this long after the first kernel arrives, so "
                          "kernels launched together are interleaved from their first block (as Liang's "
                          "emulation, which merges them into one launch; gpumux profile uses it)"),
  };
  return specs;
}

std::unique_ptr<SchedulingPolicy> LeakyBucketPolicy::create(const OptionValues& options) {
  std::vector<std::uint32_t> shares;
  for (const std::int64_t share : options.integer_list("shares")) {
    shares.push_back(static_cast<std::uint32_t>(share));
  }
  auto policy = std::make_unique<LeakyBucketPolicy>(std::move(shares), options.on("compensate"),
                                                    options.choice("latency") == "hardware");
  policy->gather_ps_ = static_cast<TimePs>(options.integer("gather_ns")) * 1000U;
  return policy;
}

void LeakyBucketPolicy::ensure_model(const EngineControl& control) {
  if (model_) return;
  Ref::Config config;
  config.num_kernels = control.active_capacity();
  config.level_bits = kLevelBits;
  model_ = std::make_unique<Ref>(config);
  buckets_.assign(config.num_kernels, Bucket{});
  clock_mhz_ = control.core_clock_mhz();
}

Ref::Outputs LeakyBucketPolicy::step(const Ref::Inputs& in) {
  ++cycles_;
  ++next_cycle_;
  return model_->step(in);
}

std::uint32_t LeakyBucketPolicy::share_of(KernelId kernel, const EngineControl& control) const {
  if (share_function_) return std::min(share_function_(kernel), kMaxShare);
  const KernelStatus& k = control.kernel(kernel);
  const std::uint32_t p = index(k.process);
  if (p < shares_.size()) return shares_[p];
  // From the workload: the process's `tokens` (its SM budget, as DSS reads it).
  if (k.os_tokens && *k.os_tokens > 0) {
    return std::min<std::uint32_t>(static_cast<std::uint32_t>(*k.os_tokens), kMaxShare);
  }
  return 1U;
}

double LeakyBucketPolicy::mean_tb_ps(KernelId kernel, const EngineControl& control) const {
  const std::uint32_t i = index(kernel);
  if (i < durations_.size() && durations_[i].count > 0) {
    return durations_[i].sum_ps / static_cast<double>(durations_[i].count);
  }
  const KernelDesc* desc = control.kernel(kernel).desc;
  return desc != nullptr && desc->tb_time.mean_ps > 0 ? static_cast<double>(desc->tb_time.mean_ps) : 1.0;
}

bool LeakyBucketPolicy::participates(KernelId kernel, const EngineControl& control) const {
  const KernelStatus& k = control.kernel(kernel);
  return k.active && k.has_tbs_to_issue() && share_of(kernel, control) > 0;
}

void LeakyBucketPolicy::reconfigure(const EngineControl& control) {
  // Participants: kernels in the KSRT with thread blocks left.
  std::vector<std::uint32_t> rate(buckets_.size(), 0);
  double shortest = 0;
  for (const Bucket& b : buckets_) {
    if (!b.kernel || !participates(*b.kernel, control)) continue;
    const double t = mean_tb_ps(*b.kernel, control);
    shortest = shortest == 0 ? t : std::min(shortest, t);
  }
  std::uint64_t capacity = 0;
  for (std::size_t s = 0; s < buckets_.size(); ++s) {
    const Bucket& b = buckets_[s];
    if (!b.kernel || !participates(*b.kernel, control)) continue;
    double r = static_cast<double>(share_of(*b.kernel, control) * kOne);
    if (compensate_) r *= shortest / mean_tb_ps(*b.kernel, control);
    rate[s] = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::lround(r)));
    capacity += rate[s];
  }
  const auto cap = static_cast<std::uint32_t>(std::min<std::uint64_t>(capacity, model_->level_max()));
  for (std::size_t s = 0; s < buckets_.size(); ++s) {
    Bucket& b = buckets_[s];
    const bool active = rate[s] != 0;
    const std::uint32_t want_cap = active ? cap : 0;
    if (active == b.active && want_cap == b.capacity && rate[s] == b.rate) continue;
    // A kernel joining starts with an empty bucket; a rate change keeps the fill.
    step(Ref::Inputs::configure(static_cast<std::uint32_t>(s), active, want_cap, rate[s], !b.active));
    b.active = active;
    b.capacity = want_cap;
    b.rate = rate[s];
    if (pending_ && b.kernel == pending_ && !active) pending_.reset();
  }
}

std::optional<KernelId> LeakyBucketPolicy::head(const EngineControl& control) {
  if (!model_) return std::nullopt;
  if (pending_ && participates(*pending_, control)) return pending_;
  pending_.reset();
  // latency=hardware: the steps below take the cycles from the first edge at or after now (the
  // interleaver waits for demand, so idle time passes without steps).
  if (hardware_latency_) next_cycle_ = std::max(next_cycle_, edge_at(control.now(), clock_mhz_));
  for (std::uint64_t i = 0; i < kMaxCyclesPerGrant; ++i) {
    reconfigure(control);
    if (std::none_of(buckets_.begin(), buckets_.end(), [](const Bucket& b) { return b.active; })) {
      return std::nullopt;
    }
    const Ref::Outputs out = step(Ref::Inputs::tick());
    if (!out.grant_valid) continue;
    const std::optional<KernelId> k = buckets_[out.grant_kernel].kernel;
    if (k && participates(*k, control)) {
      pending_ = k;
      pending_ready_ps_ = hardware_latency_ ? edge_time(next_cycle_ - 1, clock_mhz_) : 0;
      return k;
    }
  }
  throw InvariantViolation("leaky-bucket: no grant within " + std::to_string(kMaxCyclesPerGrant) +
                           " interleaving cycles although kernels have thread blocks");
}

bool LeakyBucketPolicy::gathering(const EngineControl& control) const {
  return gather_until_ps_ && control.now() < *gather_until_ps_;
}

std::optional<KernelId> LeakyBucketPolicy::select_kernel(SmId sm, const EngineControl& control) {
  if (gathering(control)) return std::nullopt;
  const std::optional<KernelId> k = head(control);
  if (k && pending_ready_ps_ > control.now()) {
    // latency=hardware: the grant comes out of the interleaver at a later edge; deal again then.
    control.wake_at(pending_ready_ps_);
    return std::nullopt;
  }
  // Strict interleave order: when the next thread block does not fit here, this SM waits.
  if (!k || !control.can_issue(sm, *k)) return std::nullopt;
  // The SM driver issues what select_kernel returns when can_issue holds: the slot is used.
  pending_.reset();
  return k;
}

void LeakyBucketPolicy::on_kernel_arrival(KernelId kernel, EngineControl& control) {
  ensure_model(control);
  const std::uint32_t slot = control.kernel(kernel).ksrt_slot;
  if (slot >= buckets_.size()) {
    throw InvariantViolation("leaky-bucket: kernel admitted to KSRT entry " + std::to_string(slot) + " of " +
                             std::to_string(buckets_.size()));
  }
  buckets_[slot].kernel = kernel;
  if (!gather_until_ps_) gather_until_ps_ = control.now() + gather_ps_;
  if (gathering(control)) {
    control.wake_at(*gather_until_ps_);  // on_timer deals them
    return;
  }
  reconfigure(control);
  control.deal_thread_blocks();  // one TB per SM per round, so the grant order spreads over the SMs
}

void LeakyBucketPolicy::on_timer(EngineControl& control) {
  if (model_ && !gathering(control)) control.deal_thread_blocks();
}

void LeakyBucketPolicy::on_sm_idle(SmId sm, EngineControl& control) {
  if (model_ && !gathering(control)) control.request_issue(sm);
}

void LeakyBucketPolicy::on_tb_finished(SmId /*sm*/, KernelId kernel, TimePs duration_ps,
                                       EngineControl& /*control*/) {
  const std::uint32_t i = index(kernel);
  if (i >= durations_.size()) durations_.resize(i + 1);
  durations_[i].sum_ps += static_cast<double>(duration_ps);
  ++durations_[i].count;
}

void LeakyBucketPolicy::on_kernel_finished(KernelId kernel, EngineControl& control) {
  if (!model_) return;
  for (Bucket& b : buckets_) {
    if (b.kernel == kernel) b.kernel.reset();
  }
  reconfigure(control);
}

}  // namespace gpumux
