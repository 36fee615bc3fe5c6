// The datasheet peak-FLOPs table and device-name matching. Every figure is a dense (no
// sparsity) per-device peak; rows present in Lightning master's _CUDA_FLOPS keep its values so
// MFU agrees with Lightning, new rows cite their datasheet. Names are matched on whole,
// normalised tokens (never substrings) and anything ambiguous is "unknown" (nullopt).
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

constexpr double T = 1e12;   // tera
constexpr double kNo = 0.0;  // the device has no such precision (or no published figure)

struct PeakRow {
  const char* chip;
  // Indexed by Precision: fp64, fp32, tf32, bf16, fp16, fp8, int8. FLOP/s (OP/s for int8).
  std::array<double, 7> peak;
  const char* source;
};

// fp64 is the non-tensor (vector) rate, as in Lightning's table. Lightning has no fp8 column
// (it maps Transformer Engine to int8); our fp8 figures are the datasheets' dense FP8 rates.
constexpr PeakRow kTable[] = {
    // --- Hopper. Lightning master (PR #21743) dense values; its keys were "h200 sxm1"/"h200 nvl1".
    // https://nvdam.widen.net/s/nb5zzzsjdf/hpc-datasheet-sc23-h200-datasheet-3002446
    {"h200 sxm", {34 * T, 67 * T, 494.5 * T, 989.5 * T, 989.5 * T, 1979 * T, 1979 * T},
     "NVIDIA H200 datasheet (nvdam.widen.net/s/nb5zzzsjdf), H200 SXM, dense"},
    // Same datasheet; Lightning master rounds the NVL row (datasheet: 835.5 BF16, 1670.5 FP8
    // dense). We keep Lightning's values so MFU matches it.
    {"h200 nvl", {30 * T, 60 * T, 420 * T, 840 * T, 840 * T, 1680 * T, 1680 * T},
     "NVIDIA H200 datasheet (nvdam.widen.net/s/nb5zzzsjdf), H200 NVL, dense (Lightning master values)"},
    // https://resources.nvidia.com/en-us-gpu-resources/h100-datasheet-24306
    {"h100 nvl", {30 * T, 60 * T, 417.5 * T, 835.5 * T, 835.5 * T, 1670.5 * T, 1670.5 * T},
     "NVIDIA H100 datasheet (resources.nvidia.com/en-us-gpu-resources/h100-datasheet-24306), H100 NVL, dense"},
    {"h100 sxm", {34 * T, 67 * T, 494.5 * T, 989.5 * T, 989.5 * T, 1979 * T, 1979 * T},
     "NVIDIA H100 datasheet (resources.nvidia.com/en-us-gpu-resources/h100-datasheet-24306), H100 SXM, dense"},
    {"h100 pcie", {25.6 * T, 51.2 * T, 378 * T, 756 * T, 756 * T, 1513 * T, 1513 * T},
     "NVIDIA H100 datasheet (resources.nvidia.com/en-us-gpu-resources/h100-datasheet-24306), H100 PCIe, dense"},
    // NVIDIA GH200 Grace Hopper Superchip datasheet, H100 GPU figures (dense column).
    {"gh200", {34 * T, 67 * T, 494 * T, 990 * T, 990 * T, 1979 * T, 1979 * T},
     "NVIDIA GH200 Grace Hopper Superchip datasheet, GPU, dense"},
    // --- Blackwell. NVIDIA HGX B200 datasheet (8-GPU totals, sparse for tensor rows), per GPU
    // and halved for dense: FP64 296/8, FP32 600/8, TF32 18/8/2 PF, BF16 36/8/2, FP8 72/8/2.
    {"b200", {37 * T, 75 * T, 1125 * T, 2250 * T, 2250 * T, 4500 * T, 4500 * T},
     "NVIDIA HGX B200 datasheet (nvidia.com/en-us/data-center/hgx), per GPU, dense"},
    // NVIDIA GB200 NVL72 datasheet (72-GPU totals, sparse for tensor rows), per GPU, dense.
    {"gb200", {40 * T, 80 * T, 1250 * T, 2500 * T, 2500 * T, 5000 * T, 5000 * T},
     "NVIDIA GB200 NVL72 datasheet (nvidia.com/en-us/data-center/gb200-nvl72), per GPU, dense"},
    // NVIDIA RTX Blackwell GPU architecture whitepaper, appendix (GeForce RTX 5090): tensor
    // rates with FP32 accumulate, dense; FP32 is the shader rate. No fp64 figure published.
    {"rtx 5090", {kNo, 104.8 * T, 104.8 * T, 209.5 * T, 209.5 * T, 419 * T, 838 * T},
     "NVIDIA RTX Blackwell GPU architecture whitepaper, GeForce RTX 5090, dense"},
    // --- Ada. Lightning master values (Ada whitepaper). Its GeForce bf16/fp16 columns hold the
    // non-tensor FP16 rate; kept for parity. fp8 (ours): FP8 with FP32 accumulate, dense, which
    // the whitepaper gives as half the dense INT8 rate on GeForce Ada.
    {"rtx 4090", {kNo, 82.6 * T, 82.6 * T, 82.6 * T, 82.6 * T, 330.3 * T, 660.6 * T},
     "NVIDIA Ada GPU architecture whitepaper, GeForce RTX 4090 (Lightning master values)"},
    {"rtx 4080", {kNo, 48.7 * T, 48.7 * T, 48.7 * T, 48.7 * T, 194.95 * T, 389.9 * T},
     "NVIDIA Ada GPU architecture whitepaper, GeForce RTX 4080 (Lightning master values)"},
    {"rtx 4080 super", {kNo, 52.2 * T, 52.2 * T, 52.2 * T, 52.2 * T, 208.8 * T, 417.6 * T},
     "NVIDIA GeForce RTX 4080 SUPER specifications (Lightning master values)"},
    // NVIDIA L4 datasheet (sparse figures halved: TF32 120, BF16 242, FP8 485, INT8 485).
    {"l4", {kNo, 30.3 * T, 60 * T, 121 * T, 121 * T, 242.5 * T, 242 * T},
     "NVIDIA L4 datasheet, dense (Lightning master values; fp8 ours)"},
    // NVIDIA L40 datasheet: FP8 362 | 724 sparse.
    {"l40", {kNo, 90.5 * T, 90.5 * T, 181 * T, 181 * T, 362 * T, 362 * T},
     "NVIDIA L40 datasheet, dense (Lightning master values; fp8 ours)"},
    // NVIDIA L40S datasheet: FP32 91.6, TF32 183 | 366, BF16/FP16 362.05 | 733, FP8/INT8 733 | 1466.
    {"l40s", {kNo, 91.6 * T, 183 * T, 362.05 * T, 362.05 * T, 733 * T, 733 * T},
     "NVIDIA L40S datasheet, dense"},
    // --- Ampere. A100 datasheet ("sxm and pcie have same flop counts"); no fp8 on Ampere.
    {"a100", {9.7 * T, 19.5 * T, 156 * T, 312 * T, 312 * T, kNo, 624 * T},
     "NVIDIA A100 datasheet, dense (Lightning master values)"},
    {"a6000", {kNo, 38.7 * T, 77.4 * T, 38.7 * T, 38.7 * T, kNo, 309.7 * T},
     "NVIDIA RTX A6000 datasheet (Lightning master values)"},
    {"a40", {kNo, 37.4 * T, 74.8 * T, 149.7 * T, 149.7 * T, kNo, 299.3 * T},
     "NVIDIA A40 datasheet, dense (Lightning master values)"},
    // Lightning's a10g row is the A10 datasheet; the A10 itself gets the same figures.
    {"a10g", {kNo, 31.2 * T, 62.5 * T, 125 * T, 125 * T, kNo, 250 * T},
     "NVIDIA A10 datasheet, dense (Lightning master values for a10g)"},
    {"a10", {kNo, 31.2 * T, 62.5 * T, 125 * T, 125 * T, kNo, 250 * T},
     "NVIDIA A10 datasheet, dense"},
    // GA102 whitepaper (Lightning master values).
    {"rtx 3090 ti", {kNo, 40 * T, 40 * T, 40 * T, 40 * T, kNo, 320 * T},
     "NVIDIA GA102 whitepaper, GeForce RTX 3090 Ti (Lightning master values)"},
    {"rtx 3090", {kNo, 35.6 * T, 35.6 * T, 35.6 * T, 35.6 * T, kNo, 284 * T},
     "NVIDIA GA102 whitepaper, GeForce RTX 3090 (Lightning master values)"},
    {"rtx 3080 ti", {kNo, 34.1 * T, 34.1 * T, 34.1 * T, 34.1 * T, kNo, 272.8 * T},
     "NVIDIA GA102 whitepaper, GeForce RTX 3080 Ti (Lightning master values)"},
    {"rtx 3080", {kNo, 29.8 * T, 29.8 * T, 29.8 * T, 29.8 * T, kNo, 238 * T},
     "NVIDIA GA102 whitepaper, GeForce RTX 3080 (Lightning master values)"},
    {"rtx 3070", {kNo, 20.3 * T, 20.3 * T, 20.3 * T, 20.3 * T, kNo, 162.6 * T},
     "NVIDIA GA102 whitepaper, GeForce RTX 3070 (Lightning master values)"},
    // --- Turing and Volta: no bf16/tf32 hardware.
    {"t4", {kNo, 8.1 * T, kNo, kNo, 65 * T, kNo, 130 * T},
     "NVIDIA T4 datasheet (Lightning master values)"},
    {"quadro rtx 5000", {kNo, 11.2 * T, kNo, kNo, 89.2 * T, kNo, kNo},
     "NVIDIA Quadro RTX 5000 datasheet (Lightning master values)"},
    {"rtx 2080 super", {kNo, 11.2 * T, kNo, kNo, 22.3 * T, kNo, 178.4 * T},
     "NVIDIA Turing whitepaper, GeForce RTX 2080 SUPER (Lightning master values)"},
    {"rtx 2080 ti", {kNo, 14.2 * T, kNo, kNo, 28.5 * T, kNo, 227.7 * T},
     "NVIDIA Turing whitepaper, GeForce RTX 2080 Ti (Lightning master values)"},
    {"rtx 2080", {kNo, 10.6 * T, kNo, kNo, 21.2 * T, kNo, 169.6 * T},
     "NVIDIA Turing whitepaper, GeForce RTX 2080 (Lightning master values)"},
    {"rtx 2070 super", {kNo, 9.1 * T, kNo, kNo, 18.1 * T, kNo, 145 * T},
     "NVIDIA Turing whitepaper, GeForce RTX 2070 SUPER (Lightning master values)"},
    {"titan rtx", {kNo, 16.3 * T, kNo, kNo, 32.6 * T, kNo, 261 * T},
     "NVIDIA TITAN RTX specifications (Lightning master values)"},
    {"v100 sxm", {7.8 * T, 15.7 * T, kNo, kNo, 125 * T, kNo, kNo},
     "NVIDIA V100 datasheet, SXM2 (Lightning master values)"},
    {"v100 pcie", {7 * T, 14 * T, kNo, kNo, 112 * T, kNo, kNo},
     "NVIDIA V100 datasheet, PCIe (Lightning master values)"},
    {"v100s pcie", {8.2 * T, 16.4 * T, kNo, kNo, 130 * T, kNo, kNo},
     "NVIDIA V100S datasheet, PCIe (Lightning master values)"},
    // --- AMD CDNA3. AMD Instinct MI300X / MI325X data sheets (amd.com), dense: FP64 vector
    // 81.7, FP32 163.4, TF32 653.7, FP16/BF16 1307.4, FP8/INT8 2614.9.
    {"mi300x", {81.7 * T, 163.4 * T, 653.7 * T, 1307.4 * T, 1307.4 * T, 2614.9 * T, 2614.9 * T},
     "AMD Instinct MI300X data sheet, dense"},
    {"mi325x", {81.7 * T, 163.4 * T, 653.7 * T, 1307.4 * T, 1307.4 * T, 2614.9 * T, 2614.9 * T},
     "AMD Instinct MI325X data sheet, dense"},
    // --- Google TPU (Lightning's _TPU_FLOPS): one bf16 figure that Lightning returns for every
    // dtype; we give it for the float dtypes that run on the bf16 MXU and nothing else.
    {"tpu v2", {kNo, 45 * T, 45 * T, 45 * T, 45 * T, kNo, kNo}, "Google Cloud TPU v2 (Lightning values)"},
    {"tpu v3", {kNo, 123 * T, 123 * T, 123 * T, 123 * T, kNo, kNo}, "Google Cloud TPU v3 (Lightning values)"},
    {"tpu v4", {kNo, 275 * T, 275 * T, 275 * T, 275 * T, kNo, kNo}, "Google Cloud TPU v4 (Lightning values)"},
    {"tpu v5litepod", {kNo, 197 * T, 197 * T, 197 * T, 197 * T, kNo, kNo},
     "Google Cloud TPU v5e (Lightning values)"},
};

const PeakRow* find_row(std::string_view chip) {
  for (const auto& row : kTable)
    if (chip == row.chip) return &row;
  return nullptr;
}

// Lowercase and split on anything that is not a letter or digit: "NVIDIA A100-SXM4-80GB" ->
// {nvidia, a100, sxm4, 80gb}.
std::vector<std::string> tokenize(std::string_view name) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      current.push_back(static_cast<char>(std::tolower(u)));
    } else if (!current.empty()) {
      tokens.push_back(std::move(current));
      current.clear();
    }
  }
  if (!current.empty()) tokens.push_back(std::move(current));
  return tokens;
}

bool is_number(const std::string& token) {
  return !token.empty() && std::all_of(token.begin(), token.end(),
                                       [](unsigned char c) { return std::isdigit(c); });
}

// GeForce-style "RTX <number> [Ti] [SUPER]"; any other word (Laptop, D, Max-Q, Mobile) names a
// different, slower part, so it is unknown rather than the desktop card's figure.
std::optional<std::string> match_numbered_rtx(const std::vector<std::string>& tokens) {
  auto rtx = std::find(tokens.begin(), tokens.end(), "rtx");
  if (rtx == tokens.end() || rtx + 1 == tokens.end() || !is_number(*(rtx + 1)))
    return std::nullopt;
  std::string key = "rtx " + *(rtx + 1);
  bool ti = false, super = false;
  for (auto it = rtx + 2; it != tokens.end(); ++it) {
    if (*it == "ti") {
      ti = true;
    } else if (*it == "super") {
      super = true;
    } else {
      return std::nullopt;
    }
  }
  for (auto it = tokens.begin(); it != rtx; ++it)
    if (*it != "nvidia" && *it != "geforce") return std::nullopt;
  if (ti) key += " ti";
  if (super) key += " super";
  if (find_row(key) == nullptr) return std::nullopt;
  return key;
}

// Lightning's TPU names are the env's TYPE ("V4") or ACCELERATOR_TYPE ("v3-8"); we also take
// "TPU v4". Only a generation token plus optional "tpu" and a core count is accepted.
std::optional<std::string> match_tpu(const std::vector<std::string>& tokens) {
  std::optional<std::string> generation;
  for (const auto& t : tokens) {
    if (t == "tpu" || is_number(t)) continue;
    if (generation.has_value()) return std::nullopt;
    generation = t;
  }
  if (!generation.has_value()) return std::nullopt;
  const std::string key = "tpu " + *generation;
  if (find_row(key) == nullptr) return std::nullopt;
  return key;
}

}  // namespace

std::optional<std::string> match_device_chip(std::string_view device_name) {
  const std::vector<std::string> tokens = tokenize(device_name);
  auto has = [&tokens](std::string_view t) {
    return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
  };
  if (has("gh200")) return "gh200";
  if (has("gb200")) return "gb200";
  if (has("b200")) return "b200";
  // No H200 PCIe exists; torch reports "NVIDIA H200" for the SXM part, "... NVL" for the NVL.
  if (has("h200")) return (has("nvl") || has("nvl1")) ? "h200 nvl" : "h200 sxm";
  if (has("h100")) {
    if (has("nvl") || has("nvl1")) return "h100 nvl";
    if (has("pcie") || has("hbm2e")) return "h100 pcie";
    if (has("hbm3") || has("sxm") || has("sxm5")) return "h100 sxm";
    return std::nullopt;  // a bare "NVIDIA H100" could be SXM or PCIe: do not guess
  }
  if (has("l40s")) return "l40s";
  if (has("l40")) return "l40";
  if (has("l4")) return "l4";
  if (has("a100")) return "a100";
  if (has("a6000")) return "a6000";
  if (has("a40")) return "a40";
  if (has("a10g")) return "a10g";
  if (has("a10")) return "a10";
  if (has("t4")) return "t4";
  // Max-Q parts included, as Lightning's own mapping test requires: the row is the desktop
  // card's datasheet, an upper bound for the lower-clocked Max-Q part (MFU reads low, not high).
  if (has("quadro") && has("rtx") && has("5000")) return "quadro rtx 5000";
  if (has("titan") && has("rtx")) return "titan rtx";
  if (has("v100s")) return "v100s pcie";  // V100S ships only as PCIe
  if (has("v100")) {
    if (has("sxm") || has("sxm2") || has("sxm3")) return "v100 sxm";
    if (has("pcie")) return "v100 pcie";
    return std::nullopt;
  }
  if (has("mi300x")) return "mi300x";
  if (has("mi325x")) return "mi325x";
  if (auto rtx = match_numbered_rtx(tokens)) return rtx;
  return match_tpu(tokens);
}

std::optional<DevicePeak> lookup_device_peak(std::string_view device_name, Precision precision) {
  const std::optional<std::string> chip = match_device_chip(device_name);
  if (!chip.has_value()) return std::nullopt;
  const PeakRow* row = find_row(*chip);
  if (row == nullptr) return std::nullopt;
  const double value = row->peak[static_cast<std::size_t>(precision)];
  if (value == kNo) return std::nullopt;
  return DevicePeak{*chip, value, row->source};
}

std::vector<std::string> known_device_chips() {
  std::vector<std::string> chips;
  for (const auto& row : kTable) chips.emplace_back(row.chip);
  return chips;
}

}  // namespace tokbench
