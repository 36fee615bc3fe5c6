// --probes-from's reader (src/predict/machine_probes.cpp): an earlier prediction's copy rate and
// AdamW costs come back as written, the record predict writes round-trips, and a document
// without them is refused in one line naming the option.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "predict/machine_probes.hpp"
#include "predict/memory_rate.hpp"

namespace tokbench::predict {
namespace {

nlohmann::json prediction_doc(const nlohmann::json& memory_rate, const nlohmann::json& optimizer) {
  nlohmann::json p = {{"step_copies", {{"bytes_per_iteration", 1000}, {"ms", 1.0}}}, {"optimizer", optimizer}};
  if (!memory_rate.is_null()) p["step_copies"]["memory_rate"] = memory_rate;
  return {{"runs", nlohmann::json::array({{{"status", "predicted"}, {"prediction", p}}})}};
}

std::string refusal(const nlohmann::json& doc) {
  try {
    machine_probes_from_prediction(doc, "earlier.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(MachineProbes, AnEarlierPredictionsCopyRateAndCostsAreReusedAsWritten) {
  const MachineProbes p = machine_probes_from_prediction(
      prediction_doc({{"alone_GBps", 17.0}, {"together_GBps", 9.5}, {"ranks", 2}, {"pair_slowdown", 1.8}},
                     {{"per_tensor_us", 1.5}, {"per_element_ns", 0.43}, {"costs_from", "AdamW probe"}}),
      "earlier.json");
  EXPECT_DOUBLE_EQ(p.memory_rate.alone_bytes_per_s, 17e9);
  EXPECT_DOUBLE_EQ(p.memory_rate.together_bytes_per_s, 9.5e9);
  EXPECT_EQ(p.memory_rate.ranks, 2);
  EXPECT_DOUBLE_EQ(p.memory_rate.sharing_slowdown(), 1.8);
  EXPECT_NE(p.memory_rate.source.find("earlier.json"), std::string::npos);
  ASSERT_TRUE(p.optimizer_cost.has_value());
  EXPECT_DOUBLE_EQ(p.optimizer_cost->per_tensor_seconds, 1.5e-6);
  EXPECT_DOUBLE_EQ(p.optimizer_cost->per_element_seconds, 0.43e-9);
  EXPECT_NE(p.optimizer_cost->source.find("AdamW probe"), std::string::npos);
}

TEST(MachineProbes, WhatPredictWritesReadsBackToTheSameRate) {
  MemoryRate rate;
  rate.alone_bytes_per_s = 16.25e9;
  rate.together_bytes_per_s = 8.5e9;
  rate.ranks = 4;
  rate.pair_slowdown = 2.25;
  rate.source = "probe";
  const MachineProbes p =
      machine_probes_from_prediction(prediction_doc(nlohmann::json::parse(to_json(rate).dump()), nullptr), "p.json");
  EXPECT_DOUBLE_EQ(p.memory_rate.alone_bytes_per_s, rate.alone_bytes_per_s);
  EXPECT_DOUBLE_EQ(p.memory_rate.together_bytes_per_s, rate.together_bytes_per_s);
  EXPECT_EQ(p.memory_rate.ranks, 4);
  EXPECT_DOUBLE_EQ(p.memory_rate.sharing_slowdown(), 2.25);
  EXPECT_FALSE(p.optimizer_cost.has_value()) << "no costs recorded: none reused (the elements alone, as without a probe)";
}

TEST(MachineProbes, ACostTheProbeClampedToZeroIsReusedAsZero) {
  const nlohmann::json rate = {{"alone_GBps", 17.0}, {"together_GBps", 9.5}, {"ranks", 2}};
  const MachineProbes p = machine_probes_from_prediction(
      prediction_doc(rate, {{"per_tensor_us", 0.0}, {"per_element_ns", 0.43}, {"costs_from", "probe"}}), "p.json");
  ASSERT_TRUE(p.optimizer_cost.has_value());
  EXPECT_EQ(p.optimizer_cost->per_tensor_seconds, 0.0);
  EXPECT_DOUBLE_EQ(p.optimizer_cost->per_element_seconds, 0.43e-9);
  const MachineProbes none = machine_probes_from_prediction(
      prediction_doc(rate, {{"per_tensor_us", nullptr}, {"per_element_ns", 0.43}}), "p.json");
  EXPECT_FALSE(none.optimizer_cost.has_value()) << "a cost not recorded: neither is reused";
}

TEST(MachineProbes, ADocumentWithoutAMeasuredCopyRateIsRefusedNamingTheOption) {
  EXPECT_NE(refusal({{"runs", nlohmann::json::array({{{"status", "ok"}}})}}).find("holds no prediction"),
            std::string::npos);
  EXPECT_NE(refusal(prediction_doc(nullptr, nullptr)).find("no step_copies.memory_rate"), std::string::npos);
  EXPECT_NE(refusal(prediction_doc({{"alone_GBps", 17.0}, {"together_GBps", 0}, {"ranks", 2}}, nullptr))
                .find("together_GBps"),
            std::string::npos);
  const std::string why = refusal(nlohmann::json::array());
  EXPECT_EQ(why.rfind("--probes-from 'earlier.json'", 0), 0u) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << "one line";
}

}  // namespace
}  // namespace tokbench::predict
