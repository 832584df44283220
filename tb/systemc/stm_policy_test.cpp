// Liang's spatial-temporal multitasking in the simulator: the dummy-kernel profiler (app/kernel_profiler.h,
// 3.2) measures what the leaky bucket gives a kernel with m SMs, and the stm policy (policy/stm.h) runs the
// phases and SM allocations its profiles call for, or stops with an input error when they cannot be used.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "app/kernel_profiler.h"
#include "common/scratch_file.h"
#include "common/test_support.h"
#include "core/error.h"
#include "policy/registry.h"
#include "stm/kernel_profile.h"
#include "stm/schedule.h"
#include "top/simulation.h"

namespace gpumux {
namespace {

constexpr double kUsInNs = 1000.0;

/// One thread block per SM (2048 threads), 10 us each, fixed: R[m] = ceil(tbs / m) x 10 us exactly.
std::shared_ptr<KernelDesc> kernel(const std::string& name, std::uint32_t tbs) {
  return test::kernel(name, tbs, 10.0, 2048, 8192);
}

GpuConfig k20c_fixed() { return test::k20c(); }

/// The kernels, one process each, all submitted at once on the 13-SM K20c, fixed thread-block times.
SimulationSpec spec_of(const std::vector<std::shared_ptr<KernelDesc>>& kernels,
                       const PolicyOptions& options) {
  SimulationSpec spec;
  spec.gpu = k20c_fixed();
  spec.policy = "stm";
  spec.policy_options = options;
  spec.workload.name = "stm";
  spec.workload.tb_duration = TbDurationMode::kFixed;
  for (const auto& k : kernels) {
    spec.workload.processes.push_back(test::process(k->name, {StreamSpec{{test::launch(k)}}}));
  }
  return spec;
}

/// A profile whose latency is ceil(tbs / min(m, saturation)) x 10 us: it stops scaling at `saturation` SMs;
/// it asks `gb_per_s` with any number of SMs.
stm::KernelProfile profile(const std::string& name, std::uint32_t tbs, std::uint32_t saturation,
                           std::uint32_t sms, double gb_per_s = 0) {
  stm::KernelProfile p;
  p.kernel = name;
  p.thread_blocks = tbs;
  p.tb_latency_ns = 10 * kUsInNs;
  for (std::uint32_t m = 1; m <= sms; ++m) {
    const std::uint32_t used = std::min(m, saturation);
    p.latency_ns.push_back(std::ceil(static_cast<double>(tbs) / used) * 10 * kUsInNs);
    p.bandwidth_gb_per_s.push_back(gb_per_s);
  }
  return p;
}

std::string write_profiles(const std::string& file, std::vector<stm::KernelProfile> kernels,
                           std::uint32_t sms = 13) {
  stm::ProfileSet set;
  set.gpu = "test";
  set.sms = sms;
  set.peak_bandwidth_gb_per_s = 208;
  set.sm_model = "tb";
  set.memory_model = "simple";
  set.kernels = std::move(kernels);
  std::string path = test::scratch_path(file);
  stm::write_profile_file(path, set);
  return path;
}

double time_us(const KernelRecord& k) { return static_cast<double>(k.end_ps - k.start_ps) / 1e6; }

const KernelRecord& record(const RunResult& r, const std::string& name) {
  for (const KernelRecord& k : r.kernels) {
    if (k.name == name) return k;
  }
  throw std::runtime_error("no kernel " + name);
}

TEST(StmProfiler, DummyThreadBlocksLeaveTheKernelMSms) {
  EXPECT_EQ(dummy_thread_blocks(130, 13, 13), 0U);
  EXPECT_EQ(dummy_thread_blocks(130, 13, 1), 1560U);  // 130 x 12
  EXPECT_EQ(dummy_thread_blocks(130, 13, 5), 208U);   // ceil(130 x 8 / 5)
  EXPECT_EQ(dummy_thread_blocks(7, 15, 4), 20U);      // ceil(7 x 11 / 4) = ceil(19.25)
  EXPECT_THROW((void)dummy_thread_blocks(7, 15, 0), InputError);
  EXPECT_THROW((void)dummy_thread_blocks(7, 15, 16), InputError);
}

TEST(StmProfiler, DummyKernelHasTheKernelsFootprintAndNoMemoryTraffic) {
  auto k = kernel("K", 130);
  k->memory.bytes_per_tb = 4096;
  const auto d = dummy_kernel(*k, k20c_fixed(), 208, 12345, 0);
  EXPECT_EQ(d->thread_blocks, 208U);
  EXPECT_EQ(d->threads_per_tb, k->threads_per_tb);
  EXPECT_EQ(d->registers_per_tb, k->registers_per_tb);
  EXPECT_EQ(d->shared_memory_per_tb, k->shared_memory_per_tb);
  EXPECT_EQ(d->tb_time.mean_ps, 12345U);
  EXPECT_EQ(d->memory.bytes_per_tb, 0.0);
  EXPECT_EQ(d->program, nullptr);  // TB-level GPU
}

TEST(StmProfiler, MeasuresWhatTheKernelGetsWithMSms) {
  // 130 blocks of 10 us, one per SM: with m SMs the kernel takes ceil(130 / m) rounds. The leaky bucket
  // keeps the kernel's share of the dispatches within one block of m / 13 (4.1), so within a round or two.
  auto k = kernel("K", 130);
  k->memory.bytes_per_tb = 1e6;  // 1 MB per block: B[m] = 130 MB / R[m]
  ProfilerOptions options;
  options.jobs = 2;
  GpuConfig gpu = k20c_fixed();
  const stm::ProfileSet p = profile_kernels(gpu, {k}, options, nullptr);
  ASSERT_EQ(p.kernels.size(), 1U);
  const stm::KernelProfile& r = p.kernels[0];
  ASSERT_EQ(r.latency_ns.size(), 13U);
  EXPECT_EQ(p.sms, 13U);
  EXPECT_EQ(r.thread_blocks, 130U);
  EXPECT_NEAR(r.tb_latency_ns, 10 * kUsInNs, 1.0);
  EXPECT_NEAR(r.R(13), 100 * kUsInNs, 1.0);  // alone: 10 rounds
  for (std::uint32_t m = 1; m < 13; ++m) {
    const double rounds = std::ceil(130.0 / m);
    EXPECT_GE(r.R(m), (rounds - 1) * 10 * kUsInNs) << "m = " << m;
    EXPECT_LE(r.R(m), (rounds + 2) * 10 * kUsInNs) << "m = " << m;
    EXPECT_NEAR(r.B(m), 130e6 / r.R(m), 1e-6 * r.B(m)) << "m = " << m;  // bytes / ns = GB/s
  }
  EXPECT_GT(r.R(1), 10 * r.R(13));  // scales with SMs: nothing in this kernel saturates
}

TEST(StmProfiler, MemoryBoundKernelSaturatesTheBandwidth) {
  // 200 GB/s per block on the 208 GB/s K20c, TB-level interference on (Eq. 3 applied continuously): alone on
  // 13 SMs the GPU moves its 260 MB at the peak, 1.25 ms, each block stretched to 125 us. With fewer SMs
  // the kernel is slower, but never faster than the peak allows, and its bandwidth never exceeds it.
  auto k = kernel("K", 130);
  k->memory.bytes_per_tb = 2e6;  // 2 MB in 10 us
  GpuConfig gpu = k20c_fixed();
  gpu.memory.tb_interference = true;
  ProfilerOptions options;
  options.jobs = 2;
  const stm::ProfileSet p = profile_kernels(gpu, {k}, options, nullptr);
  const stm::KernelProfile& r = p.kernels.at(0);
  EXPECT_NEAR(r.R(13), 1.25e6, 1e3);
  EXPECT_NEAR(r.tb_latency_ns, 125e3, 1e2);
  EXPECT_NEAR(r.B(13), 208.0, 0.5);
  for (std::uint32_t m = 1; m <= 13; ++m) {
    EXPECT_GE(r.R(m), 1.25e6 - 1e3) << "m = " << m;
    EXPECT_LE(r.B(m), 208.0 + 1e-6) << "m = " << m;
    EXPECT_NEAR(r.B(m) * r.R(m), 260e6, 1e3) << "m = " << m;  // GB/s x ns = bytes
    if (m > 1) {
      EXPECT_LT(r.R(m), r.R(m - 1)) << "m = " << m;
    }
  }
}

TEST(StmPolicy, CoRunsASaturatingKernelBesideAScalingOne) {
  // M stops scaling at 3 SMs; L scales linearly. The heuristic puts them in one phase, and the leaky bucket
  // gives L the SMs it was allotted: its 130 blocks take ceil(130 / sms) rounds of 10 us, where alone on
  // 13 SMs they take 10.
  const std::string profiles =
      write_profiles("stm_corun.yaml", {profile("M", 130, 3, 13), profile("L", 130, 13, 13)});
  const stm::ProfileSet set = stm::load_profile_file(profiles);
  const stm::Schedule plan = stm::stm_schedule(set, stm::all_kernels(set));
  ASSERT_EQ(plan.phases.size(), 1U) << stm::to_string(set, plan);
  ASSERT_EQ(plan.phases[0].size(), 2U) << stm::to_string(set, plan);
  const std::uint32_t l_sms = plan.phases[0][0].kernel == 1 ? plan.phases[0][0].sms : plan.phases[0][1].sms;
  ASSERT_LT(l_sms, 13U);

  const RunResult r = simulate(spec_of({kernel("M", 130), kernel("L", 130)}, {{"profiles", profiles}}));
  const KernelRecord& m = record(r, "M");
  const KernelRecord& l = record(r, "L");
  EXPECT_EQ(m.start_ps, l.start_ps);
  const double rounds = std::ceil(130.0 / l_sms);
  EXPECT_GE(time_us(l), (rounds - 1) * 10.0) << "L on " << l_sms << " SMs";
  EXPECT_LE(time_us(l), (rounds + 1) * 10.0) << "L on " << l_sms << " SMs";
  EXPECT_GT(time_us(l), 100.0);  // it did not have the whole GPU
}

TEST(StmPolicy, RunsScalingKernelsOneAfterAnother) {
  // Both scale linearly: no allocation beats sequential (imp <= 0), so each phase is one kernel on all 13
  // SMs, in arrival order. With advance=finished the second starts when the first has finished.
  const std::string profiles =
      write_profiles("stm_seq.yaml", {profile("A", 130, 13, 13), profile("B", 130, 13, 13)});
  const RunResult r = simulate(
      spec_of({kernel("A", 130), kernel("B", 130)}, {{"profiles", profiles}, {"advance", "finished"}}));
  const KernelRecord& a = record(r, "A");
  const KernelRecord& b = record(r, "B");
  const KernelRecord& first = a.start_ps <= b.start_ps ? a : b;
  const KernelRecord& second = a.start_ps <= b.start_ps ? b : a;
  EXPECT_NEAR(time_us(first), 100.0, 0.01);
  EXPECT_NEAR(time_us(second), 100.0, 0.01);
  EXPECT_GE(second.start_ps, first.end_ps);
  // advance=issued (the default): the second phase begins once the first has issued its last block. With
  // 132 blocks the first kernel's last round holds 2, so 11 SMs start the second kernel 10 us earlier. (Each
  // asks 150 of the 208 GB/s, so Eq. 3 keeps them apart: together they would fill that last round.)
  const std::string profiles132 =
      write_profiles("stm_seq132.yaml", {profile("A", 132, 13, 13, 150), profile("B", 132, 13, 13, 150)});
  const RunResult finished = simulate(
      spec_of({kernel("A", 132), kernel("B", 132)}, {{"profiles", profiles132}, {"advance", "finished"}}));
  const RunResult issued =
      simulate(spec_of({kernel("A", 132), kernel("B", 132)}, {{"profiles", profiles132}}));
  EXPECT_EQ(finished.end_ps - issued.end_ps, 10'000'000U);  // 220 us against 230 us
  for (const RunResult* run : {&finished, &issued}) {
    const KernelRecord& a2 = record(*run, "A");
    const KernelRecord& b2 = record(*run, "B");
    const KernelRecord& first2 = a2.start_ps <= b2.start_ps ? a2 : b2;
    const KernelRecord& second2 = a2.start_ps <= b2.start_ps ? b2 : a2;
    if (run == &issued) {
      EXPECT_EQ(first2.end_ps - second2.start_ps, 10'000'000U);  // the overlap: one round
    } else {
      EXPECT_EQ(second2.start_ps, first2.end_ps);
    }
  }
}

TEST(StmPolicy, UnusableProfilesAreInputErrors) {
  EXPECT_THROW((void)create_policy("stm"), InputError);  // profiles= is required
  try {
    (void)create_policy("stm", {{"profiles", "/nonexistent/profiles.yaml"}});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/profiles.yaml"), std::string::npos) << e.what();
  }
  // A kernel without a profile stops the run (exit 2 in gpumux run), naming the file and the kernel.
  const std::string only_a = write_profiles("stm_only_a.yaml", {profile("A", 130, 13, 13)});
  try {
    (void)simulate(spec_of({kernel("A", 130), kernel("Bx", 130)}, {{"profiles", only_a}}));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("stm_only_a.yaml"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'Bx'"), std::string::npos) << e.what();
  }
  // Profiles of another GPU (15 SMs) on the 13-SM K20c.
  const std::string other = write_profiles("stm_15.yaml", {profile("A", 130, 15, 15)}, 15);
  try {
    (void)simulate(spec_of({kernel("A", 130)}, {{"profiles", other}}));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("15 SMs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpumux
