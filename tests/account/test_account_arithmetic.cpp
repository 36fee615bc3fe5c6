// The time account's arithmetic (account/time_account.hpp): shares and seconds add up to the
// iteration, the MFU costs and the ideal add up to 100% of the peak, a missing peak leaves the
// costs null; the JSON form reads back to the same account; the waterfall prints each loss.
#include <gtest/gtest.h>

#include <numeric>
#include <sstream>

#include "account/time_account.hpp"
#include "account/time_account_json.hpp"
#include "account/waterfall.hpp"

namespace tokbench::account {
namespace {

// Two profiled iterations of 0.12 s each by their ranges (the profiler's), against a measured
// iteration of 0.1 s; 8 GFLOPs of GEMMs and 2 of attention per iteration, model FLOPs 9 G (one
// GFLOP recomputed), a peak of 200 GFLOP/s.
ProfiledPass sample_pass() {
  ProfiledPass p;
  p.iterations = 2;
  p.range_seconds = 0.24;
  const std::array<double, kCategoryCount> seconds = {0.12, 0.03, 0.02, 0.03, 0.01, 0.015, 0.005, 0, 0, 0.01};
  p.seconds = seconds;
  p.gemm_flops = 16'000'000'000;
  p.attention_flops = 4'000'000'000;
  p.other_by_name = {{"forward", 0.004}, {"aten::some_op", 0.001}};
  return p;
}

AccountInputs sample_inputs() {
  AccountInputs in;
  in.source = "test";
  in.measured_iteration_seconds = 0.1;
  in.profiled_clock_seconds = 0.25;
  in.model_flops_per_iter = 9'000'000'000;
  in.peak_flop_per_s = 200e9;
  in.peak_source = "a test peak";
  return in;
}

TEST(TimeAccount, SharesSecondsAndCostsAddUp) {
  const TimeAccount a = make_time_account(sample_pass(), sample_inputs());
  EXPECT_EQ(a.profiled_iterations, 2);
  EXPECT_DOUBLE_EQ(a.profiled_iteration_seconds, 0.125);
  EXPECT_DOUBLE_EQ(a.profiled_range_seconds, 0.12);
  EXPECT_EQ(a.gemm_flops_per_iter, 8'000'000'000);
  EXPECT_EQ(a.attention_flops_per_iter, 2'000'000'000);
  double shares = 0, seconds = 0, costs = 0;
  for (const Category c : all_categories()) {
    shares += a[c].share;
    seconds += a[c].seconds;
    costs += a[c].mfu_cost.value();
  }
  EXPECT_NEAR(shares, 1.0, 1e-12);
  EXPECT_NEAR(seconds, a.iteration_seconds, 1e-12);
  EXPECT_DOUBLE_EQ(a[Category::gemm].share, 0.5);
  EXPECT_DOUBLE_EQ(a[Category::gemm].seconds, 0.05);
  EXPECT_DOUBLE_EQ(a[Category::gemm].profiled_seconds, 0.06);
  // GEMMs: 0.05 s, 0.04 s of it at the peak -> 10% of the peak lost; attention: 0.0125 s, 0.01 at the peak.
  EXPECT_NEAR(a[Category::gemm].mfu_cost.value(), 0.10, 1e-12);
  EXPECT_NEAR(a[Category::attention].mfu_cost.value(), 0.025, 1e-12);
  EXPECT_NEAR(a[Category::data_host].mfu_cost.value(), a[Category::data_host].share, 1e-12);
  EXPECT_NEAR(a.matmul_seconds_at_ceiling.value(), 0.05, 1e-12);
  EXPECT_NEAR(a.beyond_model_mfu_cost.value(), 0.05, 1e-12);  // 1 GFLOP at 200 GFLOP/s over 0.1 s
  EXPECT_NEAR(a.mfu.value(), 0.45, 1e-12);                      // 9 GFLOPs at the peak: 0.045 s of 0.1
  // From 100% of the peak, every loss, to the MFU.
  EXPECT_NEAR(1.0 - costs - *a.beyond_model_mfu_cost, *a.mfu, 1e-12);
  const auto steps = waterfall_steps(a);
  ASSERT_EQ(steps.size(), kCategoryCount + 1);
  EXPECT_NEAR(steps.back().remaining, *a.mfu, 1e-12);
  ASSERT_EQ(a.other_top.size(), 2u);
  EXPECT_DOUBLE_EQ(a.other_top[0].second, 0.002);
}

TEST(TimeAccount, NoPeakNoCosts) {
  AccountInputs in = sample_inputs();
  in.peak_flop_per_s.reset();
  const TimeAccount a = make_time_account(sample_pass(), in);
  for (const Category c : all_categories()) EXPECT_FALSE(a[c].mfu_cost.has_value());
  EXPECT_FALSE(a.mfu.has_value());
  EXPECT_TRUE(waterfall_steps(a).empty());
  std::ostringstream text;
  write_waterfall(a, text);
  EXPECT_NE(text.str().find("No peak"), std::string::npos);
}

// On many ranks the profiler attributes the waits' ranges to exposed_comm; the account holds the
// step's own measure there, exactly, and the ranges' remainder in other: the sum is unchanged.
TEST(TimeAccount, ExposedCommunicationIsTheStepsMeasure) {
  ProfiledPass pass = sample_pass();
  pass.seconds[index_of(Category::exposed_comm)] = 0.013;  // the waits' ranges, over two iterations
  pass.seconds[index_of(Category::optimizer)] -= 0.013;    // where the waits were before they had ranges
  AccountInputs in = sample_inputs();
  in.exposed_comm_seconds = 0.012;  // the step's timer, inside the ranges
  in.rank = 1;
  const TimeAccount a = make_time_account(pass, in);
  EXPECT_EQ(a[Category::exposed_comm].profiled_seconds, 0.012 / 2);
  EXPECT_EQ(a.exposed_comm_step_seconds, 0.012 / 2);
  EXPECT_DOUBLE_EQ(a.exposed_comm_seen_seconds, 0.0065);
  EXPECT_NEAR(a[Category::other].profiled_seconds, (0.01 + 0.001) / 2, 1e-12);
  EXPECT_NEAR(a[Category::optimizer].profiled_seconds, 0.001, 1e-12);
  double profiled = 0;
  for (const Category c : all_categories()) profiled += a[c].profiled_seconds;
  EXPECT_NEAR(profiled, a.profiled_range_seconds, 1e-12);
  EXPECT_EQ(a.rank, 1);
  // A measure no profile of these iterations can hold is cut to the waits and other.
  in.exposed_comm_seconds = 1.0;
  const TimeAccount b = make_time_account(pass, in);
  EXPECT_NEAR(b[Category::exposed_comm].profiled_seconds, (0.013 + 0.01) / 2, 1e-12);
  EXPECT_EQ(b[Category::other].profiled_seconds, 0.0);
}

TEST(TimeAccount, RefusesAPassWithoutIterations) {
  EXPECT_THROW(make_time_account(ProfiledPass{}, sample_inputs()), std::invalid_argument);
}

TEST(TimeAccountJson, ReadsBackWhatItWrites) {
  const TimeAccount a = make_time_account(sample_pass(), sample_inputs());
  const auto json = to_json(a);
  EXPECT_EQ(json["categories"].size(), kCategoryCount);
  EXPECT_TRUE(json["categories"].contains("data_host"));
  const TimeAccount b = time_account_from_json(nlohmann::ordered_json::parse(json.dump()));
  EXPECT_EQ(to_json(b), json);
  for (const Category c : all_categories()) EXPECT_DOUBLE_EQ(b[c].share, a[c].share);

  AccountInputs in = sample_inputs();
  in.peak_flop_per_s.reset();
  const auto without_peak = to_json(make_time_account(sample_pass(), in));
  EXPECT_TRUE(without_peak["mfu"].is_null());
  EXPECT_TRUE(without_peak["categories"]["gemm"]["mfu_cost"].is_null());
  EXPECT_EQ(to_json(time_account_from_json(without_peak)), without_peak);
}

// On a CUDA device the record carries the device timeline's figures: seconds per profiled
// iteration, counts over the pass; on the CPU "device" is null.
TEST(TimeAccountJson, DeviceFiguresPerIterationAndReadBack) {
  AccountInputs in = sample_inputs();
  EXPECT_TRUE(to_json(make_time_account(sample_pass(), in))["device"].is_null());
  in.device = DeviceFigures{0.2, 1840, 3, 0.002, 0.04};  // busy, activities, unlaunched, their s, hidden comm
  const auto json = to_json(make_time_account(sample_pass(), in));
  EXPECT_DOUBLE_EQ(json["device"]["busy_s"].get<double>(), 0.1);  // two profiled iterations
  EXPECT_DOUBLE_EQ(json["device"]["unlaunched_s"].get<double>(), 0.001);
  EXPECT_EQ(json["device"]["activities"].get<int64_t>(), 1840);
  EXPECT_EQ(json["device"]["unlaunched_activities"].get<int64_t>(), 3);
  EXPECT_EQ(to_json(time_account_from_json(nlohmann::ordered_json::parse(json.dump()))), json);
}

TEST(TimeAccountJson, NamesTheKeyItCannotRead) {
  auto json = to_json(make_time_account(sample_pass(), sample_inputs()));
  json["categories"].erase("loss");
  try {
    (void)time_account_from_json(json);
    FAIL() << "read an account without a loss category";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("loss"), std::string::npos) << e.what();
  }
  json = to_json(make_time_account(sample_pass(), sample_inputs()));
  json["iteration_s"] = "fast";
  EXPECT_THROW((void)time_account_from_json(json), std::invalid_argument);
}

TEST(Waterfall, FromThePeakDownToTheMfu) {
  const TimeAccount a = make_time_account(sample_pass(), sample_inputs());
  std::ostringstream out;
  write_waterfall(a, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("Peak"), std::string::npos) << text;
  EXPECT_NE(text.find("GEMMs below the ceiling"), std::string::npos) << text;
  EXPECT_NE(text.find("10.00%"), std::string::npos) << text;  // the GEMMs' loss
  EXPECT_NE(text.find("matrix FLOPs beyond the model's"), std::string::npos) << text;  // the recomputation
  EXPECT_NE(text.find("= MFU"), std::string::npos) << text;
  EXPECT_NE(text.find("45.00%"), std::string::npos) << text;
  EXPECT_EQ(text.find("exposed communication"), std::string::npos) << text;  // a zero loss has no line
}

}  // namespace
}  // namespace tokbench::account
