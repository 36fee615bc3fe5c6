// The peak table and name matching: every device name of docs/throughput.md, "Lightning's
// device-name matching" (worked names and Lightning's own tests), with the correct chip where
// Lightning's substring matching is wrong, Lightning master's values preserved cell by cell,
// and precision parsing.
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <optional>
#include <string>

#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

struct NameCase {
  const char* name;
  std::optional<std::string> chip;  // nullopt: we must not claim to know this device
};

class DeviceNameTest : public ::testing::TestWithParam<NameCase> {};

TEST_P(DeviceNameTest, MatchesExpectedChip) {
  const NameCase& c = GetParam();
  EXPECT_EQ(match_device_chip(c.name), c.chip) << c.name;
  // A known chip always has an fp32 figure (Lightning's mapping test asks for fp32 on all).
  const auto peak = lookup_device_peak(c.name, Precision::fp32);
  EXPECT_EQ(peak.has_value(), c.chip.has_value()) << c.name;
  if (peak) {
    EXPECT_EQ(peak->chip, *c.chip);
  }
}

const NameCase kSpecTable[] = {
    // Worked examples; comments mark where Lightning's answer differs and why ours is right.
    {"NVIDIA H200", "h200 sxm"},          // Lightning: None. A plain H200 is the SXM part.
    {"NVIDIA H200 NVL", "h200 nvl"},      // Lightning: None.
    {"NVIDIA H200 SXM1", "h200 sxm"},
    {"NVIDIA H200 NVL1", "h200 nvl"},
    {"NVIDIA GH200 480GB", "gh200"},      // Lightning: None.
    {"NVIDIA H100 80GB HBM3", "h100 sxm"},
    {"NVIDIA H100 PCIe", "h100 pcie"},
    {"NVIDIA H100 NVL", "h100 nvl"},
    {"NVIDIA H100", std::nullopt},        // SXM or PCIe cannot be told: unknown, as Lightning.
    {"h100-hbm2e", "h100 pcie"},
    {"NVIDIA L4", "l4"},
    {"NVIDIA L40", "l40"},                // Lightning: l4 (substring).
    {"NVIDIA L40S", "l40s"},              // Lightning: l4 (substring).
    {"Tesla L40", "l40"},
    {"NVIDIA GeForce RTX 4090", "rtx 4090"},
    {"NVIDIA GeForce RTX 4090 D", std::nullopt},  // Lightning: rtx 4090; the D has fewer SMs.
    {"NVIDIA GeForce RTX 4080 SUPER", "rtx 4080 super"},
    {"NVIDIA GeForce RTX 4070 Ti SUPER", std::nullopt},
    {"NVIDIA GeForce RTX 3080 Laptop GPU", std::nullopt},  // Lightning: rtx 3080 (desktop).
    {"NVIDIA GeForce RTX 3070 Ti", std::nullopt},
    {"GeForce RTX 3090", "rtx 3090"},     // Lightning: IndexError.
    {"NVIDIA RTX A6000", "a6000"},
    {"NVIDIA RTX A4000", std::nullopt},   // Lightning: a40 (substring).
    {"NVIDIA A100-SXM4-80GB", "a100"},
    {"NVIDIA A100 80GB PCIe", "a100"},
    {"NVIDIA A40", "a40"},
    {"NVIDIA A10G", "a10g"},
    {"NVIDIA A10", "a10"},                // Lightning: None, though its a10g row is the A10 sheet.
    {"Tesla T4", "t4"},
    {"Quadro RTX 5000 with Max-Q Design", "quadro rtx 5000"},  // as Lightning: desktop sheet, an upper bound.
    {"TITAN RTX", "titan rtx"},
    {"Tesla V100-SXM2-32GB", "v100 sxm"},
    {"Tesla V100-PCIE-32GB", "v100 pcie"},
    {"Tesla V100S-PCIE-32GB", "v100s pcie"},
    {"NVIDIA B200", "b200"},              // Lightning: None.
    {"NVIDIA RTX 6000 Ada Generation", std::nullopt},
    // Lightning's test_get_available_flops_cuda_mapping_exists (all non-None in Lightning).
    {"h100-nvl", "h100 nvl"},
    {"h100-hbm3", "h100 sxm"},
    {"NVIDIA GeForce RTX 4080", "rtx 4080"},
    {"NVIDIA A100-SXM4-40GB", "a100"},
    {"NVIDIA GeForce RTX 3090", "rtx 3090"},
    {"NVIDIA GeForce RTX 3090 Ti", "rtx 3090 ti"},
    {"NVIDIA GeForce RTX 3080", "rtx 3080"},
    {"NVIDIA GeForce RTX 3080 Ti", "rtx 3080 ti"},
    {"NVIDIA GeForce RTX 3070", "rtx 3070"},
    {"NVIDIA A6000", "a6000"},
    {"NVIDIA GeForce RTX 2080 SUPER", "rtx 2080 super"},
    {"NVIDIA GeForce RTX 2080 Ti", "rtx 2080 ti"},
    {"NVIDIA GeForce RTX 2080", "rtx 2080"},
    {"NVIDIA GeForce RTX 2070 Super", "rtx 2070 super"},
    {"Tesla V100-SXm2-32GB", "v100 sxm"},
    // Its xfail list: not in any table.
    {"NVIDIA GeForce RTX 3060", std::nullopt},
    {"NVIDIA GeForce RTX 3060 Ti", std::nullopt},
    {"NVIDIA GeForce RTX 3050", std::nullopt},
    {"NVIDIA GeForce RTX 3050 Ti", std::nullopt},
    // Lightning's test_get_available_flops and TPU names.
    {"CocoNut", std::nullopt},
    {"t4", "t4"},
    {"V4", "tpu v4"},
    {"V1", std::nullopt},
    {"v3-8", "tpu v3"},
    // Devices tokbench adds to Lightning's table.
    {"NVIDIA GB200", "gb200"},
    {"NVIDIA GeForce RTX 5090", "rtx 5090"},
    {"AMD Instinct MI300X", "mi300x"},
    {"AMD Instinct MI325X", "mi325x"},
    // Robustness: no crash, no guess.
    {"", std::nullopt},
    {"NVIDIA GeForce", std::nullopt},
    {"NVIDIA GeForce RTX", std::nullopt},
    {"NVIDIA GeForce GTX 1080", std::nullopt},
    {"RTX", std::nullopt},
    {"Tesla V100", std::nullopt},
    {"  nvidia   h200  ", "h200 sxm"},
};
// Readable test names: the device name with non-alphanumerics as '_'; index keeps them unique.
std::string case_name(const ::testing::TestParamInfo<NameCase>& info) {
  std::string name = std::to_string(info.index) + "_";
  for (char c : std::string(info.param.name)) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}
INSTANTIATE_TEST_SUITE_P(SpecNames, DeviceNameTest, ::testing::ValuesIn(kSpecTable), case_name);

TEST(DevicePeaks, EveryTableKeyMatchesItself) {
  for (const std::string& chip : known_device_chips()) EXPECT_EQ(match_device_chip(chip), chip);
}

// Lightning master's _CUDA_FLOPS (docs/throughput.md, "Lightning's peak values"), column by
// column; 0 = key absent. Our keys "h200 sxm"
// and "h200 nvl" are Lightning's "h200 sxm1"/"h200 nvl1".
struct LightningRow {
  const char* name;
  std::array<double, 6> v;  // fp64, fp32, tf32, bf16, fp16, int8
};
constexpr double T = 1e12;
const LightningRow kLightningMaster[] = {
    {"h200 sxm1", {34 * T, 67 * T, 494.5 * T, 989.5 * T, 989.5 * T, 1979 * T}},
    {"h200 nvl1", {30 * T, 60 * T, 420 * T, 840 * T, 840 * T, 1680 * T}},
    {"h100 nvl", {30 * T, 60 * T, 417.5 * T, 835.5 * T, 835.5 * T, 1670.5 * T}},
    {"h100 sxm", {34 * T, 67 * T, 494.5 * T, 989.5 * T, 989.5 * T, 1979 * T}},
    {"h100 pcie", {25.6 * T, 51.2 * T, 378 * T, 756 * T, 756 * T, 1513 * T}},
    {"rtx 4090", {0, 82.6 * T, 82.6 * T, 82.6 * T, 82.6 * T, 660.6 * T}},
    {"rtx 4080", {0, 48.7 * T, 48.7 * T, 48.7 * T, 48.7 * T, 389.9 * T}},
    {"rtx 4080 super", {0, 52.2 * T, 52.2 * T, 52.2 * T, 52.2 * T, 417.6 * T}},
    {"l4", {0, 30.3 * T, 60 * T, 121 * T, 121 * T, 242 * T}},
    {"l40", {0, 90.5 * T, 90.5 * T, 181 * T, 181 * T, 362 * T}},
    {"a100", {9.7 * T, 19.5 * T, 156 * T, 312 * T, 312 * T, 624 * T}},
    {"a6000", {0, 38.7 * T, 77.4 * T, 38.7 * T, 38.7 * T, 309.7 * T}},
    {"a40", {0, 37.4 * T, 74.8 * T, 149.7 * T, 149.7 * T, 299.3 * T}},
    {"a10g", {0, 31.2 * T, 62.5 * T, 125 * T, 125 * T, 250 * T}},
    {"rtx 3090 ti", {0, 40 * T, 40 * T, 40 * T, 40 * T, 320 * T}},
    {"rtx 3090", {0, 35.6 * T, 35.6 * T, 35.6 * T, 35.6 * T, 284 * T}},
    {"rtx 3080 ti", {0, 34.1 * T, 34.1 * T, 34.1 * T, 34.1 * T, 272.8 * T}},
    {"rtx 3080", {0, 29.8 * T, 29.8 * T, 29.8 * T, 29.8 * T, 238 * T}},
    {"rtx 3070", {0, 20.3 * T, 20.3 * T, 20.3 * T, 20.3 * T, 162.6 * T}},
    {"t4", {0, 8.1 * T, 0, 0, 65 * T, 130 * T}},
    {"quadro rtx 5000", {0, 11.2 * T, 0, 0, 89.2 * T, 0}},
    {"rtx 2080 super", {0, 11.2 * T, 0, 0, 22.3 * T, 178.4 * T}},
    {"rtx 2080 ti", {0, 14.2 * T, 0, 0, 28.5 * T, 227.7 * T}},
    {"rtx 2080", {0, 10.6 * T, 0, 0, 21.2 * T, 169.6 * T}},
    {"rtx 2070 super", {0, 9.1 * T, 0, 0, 18.1 * T, 145 * T}},
    {"titan rtx", {0, 16.3 * T, 0, 0, 32.6 * T, 261 * T}},
    {"v100 sxm", {7.8 * T, 15.7 * T, 0, 0, 125 * T, 0}},
    {"v100 pcie", {7 * T, 14 * T, 0, 0, 112 * T, 0}},
    {"v100s pcie", {8.2 * T, 16.4 * T, 0, 0, 130 * T, 0}},
};

TEST(DevicePeaks, LightningMasterValuesPreserved) {
  constexpr Precision cols[] = {Precision::fp64, Precision::fp32, Precision::tf32,
                                Precision::bf16, Precision::fp16, Precision::int8};
  for (const auto& row : kLightningMaster) {
    for (std::size_t i = 0; i < 6; ++i) {
      const auto peak = lookup_device_peak(row.name, cols[i]);
      if (row.v[i] == 0) {
        EXPECT_FALSE(peak.has_value()) << row.name << " " << to_string(cols[i]);
      } else {
        ASSERT_TRUE(peak.has_value()) << row.name << " " << to_string(cols[i]);
        // Lightning returns int(value): compare at that resolution.
        EXPECT_EQ(static_cast<int64_t>(peak->flops_per_s), static_cast<int64_t>(row.v[i]))
            << row.name << " " << to_string(cols[i]);
      }
    }
  }
}

TEST(DevicePeaks, LightningGetAvailableFlopsCases) {
  EXPECT_EQ(lookup_device_peak("NVIDIA H100 PCIe", Precision::bf16)->flops_per_s, 756e12);
  EXPECT_FALSE(lookup_device_peak("CocoNut", Precision::bf16).has_value());
  EXPECT_FALSE(lookup_device_peak("t4", Precision::bf16).has_value());  // T4 has no bf16
  EXPECT_EQ(lookup_device_peak("V4", Precision::bf16)->flops_per_s, 275e12);
  EXPECT_FALSE(lookup_device_peak("V1", Precision::bf16).has_value());
  EXPECT_EQ(lookup_device_peak("v3-8", Precision::bf16)->flops_per_s, 123e12);
}

TEST(DevicePeaks, NewDevicesAndFp8) {
  const auto h200 = lookup_device_peak("NVIDIA H200", Precision::bf16);
  ASSERT_TRUE(h200);
  EXPECT_EQ(h200->flops_per_s, 989.5e12);
  EXPECT_NE(h200->source.find("H200 datasheet"), std::string::npos);
  EXPECT_EQ(lookup_device_peak("NVIDIA H200", Precision::fp8)->flops_per_s, 1979e12);
  EXPECT_EQ(lookup_device_peak("NVIDIA H200 NVL", Precision::bf16)->flops_per_s, 840e12);
  EXPECT_EQ(lookup_device_peak("NVIDIA B200", Precision::bf16)->flops_per_s, 2.25e15);
  EXPECT_EQ(lookup_device_peak("NVIDIA GB200", Precision::bf16)->flops_per_s, 2.5e15);
  EXPECT_EQ(lookup_device_peak("NVIDIA L40S", Precision::bf16)->flops_per_s, 362.05e12);
  EXPECT_EQ(lookup_device_peak("AMD Instinct MI300X", Precision::bf16)->flops_per_s, 1307.4e12);
  EXPECT_EQ(lookup_device_peak("AMD Instinct MI325X", Precision::fp8)->flops_per_s, 2614.9e12);
  EXPECT_EQ(lookup_device_peak("NVIDIA H100 NVL", Precision::fp8)->flops_per_s, 1670.5e12);
  // tf32 and fp32 are distinct lookups: the caller chooses.
  EXPECT_EQ(lookup_device_peak("NVIDIA A100-SXM4-80GB", Precision::fp32)->flops_per_s, 19.5e12);
  EXPECT_EQ(lookup_device_peak("NVIDIA A100-SXM4-80GB", Precision::tf32)->flops_per_s, 156e12);
  EXPECT_FALSE(lookup_device_peak("NVIDIA A100-SXM4-80GB", Precision::fp8));  // no fp8 on Ampere
  EXPECT_FALSE(lookup_device_peak("NVIDIA GeForce RTX 4090", Precision::fp64));
  for (const std::string& chip : known_device_chips()) {
    const auto p = lookup_device_peak(chip, Precision::fp32);
    ASSERT_TRUE(p) << chip;
    EXPECT_FALSE(p->source.empty()) << chip;
  }
}

TEST(Precision, NamesRoundTripAndAliases) {
  for (Precision p : kAllPrecisions) EXPECT_EQ(precision_from_string(to_string(p)), p);
  EXPECT_EQ(precision_from_string("bf16-mixed"), Precision::bf16);
  EXPECT_EQ(precision_from_string("torch.bfloat16"), Precision::bf16);
  EXPECT_EQ(precision_from_string("16-mixed"), Precision::fp16);
  EXPECT_EQ(precision_from_string("32-true"), Precision::fp32);
  EXPECT_EQ(precision_from_string("tfloat32"), Precision::tf32);
  EXPECT_EQ(precision_from_string("FP8"), Precision::fp8);
  EXPECT_EQ(precision_from_string("transformer-engine"), Precision::fp8);
  EXPECT_EQ(precision_from_string("int4"), std::nullopt);
  EXPECT_EQ(precision_from_string(""), std::nullopt);
}

TEST(Mfu, UnknownPeakIsExplicit) {
  EXPECT_EQ(mfu(50e12, 100e12), 0.5);
  EXPECT_EQ(mfu(50e12, std::nullopt), std::nullopt);
  EXPECT_EQ(mfu(50e12, 0.0), std::nullopt);
  EXPECT_EQ(mfu(50e12, -1.0), std::nullopt);
}

}  // namespace
}  // namespace tokbench
