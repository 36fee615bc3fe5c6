// CPU detection and peak estimate on recorded /proc/cpuinfo texts (x86 with topology, ARM
// without), plus a smoke test of detect_cpu() on this machine.
#include <gtest/gtest.h>

#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

constexpr const char* kTwoCoreX86 = R"(processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
physical id	: 0
core id		: 0
cpu MHz		: 2899.998
flags		: fpu sse sse2 avx avx2 fma avx512f avx512bw

processor	: 1
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
physical id	: 0
core id		: 0
cpu MHz		: 2899.998
flags		: fpu sse sse2 avx avx2 fma avx512f avx512bw

processor	: 2
model name	: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
physical id	: 0
core id		: 1
cpu MHz		: 2899.998
flags		: fpu sse sse2 avx avx2 fma avx512f avx512bw
)";

constexpr const char* kArm = R"(processor	: 0
BogoMIPS	: 243.75
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics

processor	: 1
BogoMIPS	: 243.75
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics
)";

TEST(CpuInfo, ParsesX86TopologyFlagsAndClock) {
  const CpuInfo cpu = parse_cpu_info(kTwoCoreX86, 3500000.0);  // cpufreq max in kHz
  EXPECT_EQ(cpu.model, "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz");
  EXPECT_EQ(cpu.logical_cpus, 3);
  EXPECT_EQ(cpu.physical_cores, 2);  // two hyperthreads share core 0
  EXPECT_DOUBLE_EQ(cpu.max_clock_ghz, 3.5);
  EXPECT_EQ(cpu.vector_isa, "avx512");
  // Without cpufreq the current clock is the best figure there is.
  EXPECT_NEAR(parse_cpu_info(kTwoCoreX86, std::nullopt).max_clock_ghz, 2.899998, 1e-9);
}

TEST(CpuInfo, IsaLadder) {
  auto isa = [](const char* flags) {
    return parse_cpu_info(std::string("processor : 0\nflags : ") + flags + "\n", 1e6).vector_isa;
  };
  EXPECT_EQ(isa("sse sse2 avx avx2 fma"), "avx2+fma");
  EXPECT_EQ(isa("sse sse2 avx avx2"), "avx");  // avx2 without fma: no FMA rate
  EXPECT_EQ(isa("sse sse2"), "sse");
  EXPECT_EQ(isa("fpu"), "");
  EXPECT_EQ(parse_cpu_info(kArm, 2.6e6).vector_isa, "neon");
  EXPECT_EQ(parse_cpu_info(kArm, 2.6e6).physical_cores, 2);
}

TEST(CpuPeak, CoresTimesClockTimesFlopsPerCycle) {
  CpuInfo cpu;
  cpu.model = "Test CPU";
  cpu.physical_cores = 2;
  cpu.max_clock_ghz = 3.0;
  cpu.vector_isa = "avx2+fma";
  const auto fp32 = estimate_cpu_peak(cpu, Precision::fp32);
  ASSERT_TRUE(fp32);
  EXPECT_DOUBLE_EQ(fp32->flops_per_s, 2 * 3.0e9 * 32);
  EXPECT_EQ(fp32->chip, "Test CPU");
  EXPECT_EQ(fp32->source.rfind("estimate:", 0), 0u) << fp32->source;
  EXPECT_DOUBLE_EQ(estimate_cpu_peak(cpu, Precision::fp64)->flops_per_s, 2 * 3.0e9 * 16);
  cpu.vector_isa = "avx512";
  EXPECT_DOUBLE_EQ(estimate_cpu_peak(cpu, Precision::fp32)->flops_per_s, 2 * 3.0e9 * 64);
  EXPECT_FALSE(estimate_cpu_peak(cpu, Precision::bf16));  // no honest figure: unknown
  cpu.vector_isa = "";
  EXPECT_FALSE(estimate_cpu_peak(cpu, Precision::fp32));
  cpu.vector_isa = "avx2+fma";
  cpu.max_clock_ghz = 0;
  EXPECT_FALSE(estimate_cpu_peak(cpu, Precision::fp32));
}

TEST(CpuPeak, DetectsThisMachine) {
  const CpuInfo cpu = detect_cpu();
  EXPECT_GT(cpu.logical_cpus, 0);
  EXPECT_GT(cpu.physical_cores, 0);
  EXPECT_LE(cpu.physical_cores, cpu.logical_cpus);
}

}  // namespace
}  // namespace tokbench
