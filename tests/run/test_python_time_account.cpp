// The Python executors' events line (run/python_time_account.hpp): read into the same
// ProfiledEvent records tokbench's own pass makes and attributed by the same rules; a line that
// does not read as the protocol says gives no account at all, and says why.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "account/category.hpp"
#include "run/python_time_account.hpp"

namespace tokbench::run {
namespace {

using nlohmann::json;

// One iteration: the loss range with a log-softmax inside, an addmm with shapes, and an
// autograd node (backward flag) whose forward operator is the addmm (sequence number 7).
json line() {
  return json::parse(R"({
    "clock_seconds": 0.002,
    "names": ["tokbench::iteration", "tokbench::loss", "aten::_log_softmax", "aten::addmm", "AddmmBackward0",
              "aten::mm"],
    "shapes": [[[4], [2, 3], [3, 4], [], []], [[2, 3], [3, 4]]],
    "events": [[0, 0, 1000, 5, -1, 0, -1],
               [1, 0, 300, 5, -1, 0, -1],
               [2, 100, 300, 5, -1, 0, -1],
               [3, 300, 600, 5, 7, 0, 0],
               [4, 600, 1000, 5, 7, 1, -1],
               [5, 650, 950, 5, -1, 0, 1]]
  })");
}

double ms(const train::ProfiledTimeAccount& a, account::Category c) {
  return a.pass.seconds[account::index_of(c)] * 1e3;
}

TEST(PythonTimeAccount, EventsReadAndAttributedByTheSameRules) {
  const auto read = read_python_time_account(line());
  ASSERT_TRUE(std::holds_alternative<train::ProfiledTimeAccount>(read)) << std::get<std::string>(read);
  const auto& a = std::get<train::ProfiledTimeAccount>(read);
  EXPECT_EQ(a.source, "torch_profiler_cpu");
  EXPECT_DOUBLE_EQ(a.clock_seconds, 0.002);
  EXPECT_EQ(a.pass.iterations, 1);
  EXPECT_NEAR(ms(a, account::Category::loss), 300e-6, 1e-12);
  // The addmm's 300 ns, the node's own 100 ns (its forward operator's category) and the mm's 300.
  EXPECT_NEAR(ms(a, account::Category::gemm), 700e-6, 1e-12);
  EXPECT_EQ(a.pass.gemm_flops, 2 * (2 * 2 * 3 * 4));  // two 2x3 · 3x4 products
  EXPECT_EQ(a.pass.uncounted_matmuls, 0);
}

TEST(PythonTimeAccount, AMalformedLineGivesNoAccountAndSaysWhy) {
  auto why = [](const json& j) {
    const auto read = read_python_time_account(j);
    return std::holds_alternative<std::string>(read) ? std::get<std::string>(read) : std::string();
  };
  EXPECT_NE(why(json{{"error", "RuntimeError: boom"}}).find("RuntimeError: boom"), std::string::npos);
  json bad_name = line();
  bad_name["events"][2][0] = 17;  // no such name
  EXPECT_NE(why(bad_name).find("outside its table"), std::string::npos);
  json bad_shape = line();
  bad_shape["events"][3][6] = 2;  // no such shape list
  EXPECT_NE(why(bad_shape).find("outside its table"), std::string::npos);
  json short_row = line();
  short_row["events"][1] = json::array({1, 0, 300});
  EXPECT_NE(why(short_row).find("7-field"), std::string::npos);
  json no_clock = line();
  no_clock.erase("clock_seconds");
  EXPECT_FALSE(why(no_clock).empty());
  json text_time = line();
  text_time["events"][0][1] = "0";
  EXPECT_FALSE(why(text_time).empty());
}

// On many ranks: the flags say which events are ranges (their gaps can be waits) and which are
// Gloo's asynchronous collectives; the loop's gap while one flies is exposed communication, and
// the account says the profiler measured it.
TEST(PythonTimeAccount, FlagsMarkRangesAndCollectivesInFlight) {
  const json j = json::parse(R"({
    "clock_seconds": 0.002,
    "names": ["tokbench::iteration", "backward", "c10d::allreduce_", "gloo:all_reduce"],
    "shapes": [],
    "events": [[0, 0, 1000, 5, -1, 2, -1],
               [1, 0, 1000, 5, -1, 2, -1],
               [2, 100, 150, 5, -1, 0, -1],
               [3, 150, 850, 9, -1, 4, -1]]
  })");
  const auto read = read_python_time_account(j);
  ASSERT_TRUE(std::holds_alternative<train::ProfiledTimeAccount>(read)) << std::get<std::string>(read);
  const auto& a = std::get<train::ProfiledTimeAccount>(read);
  EXPECT_EQ(a.exposed_comm_source, "profiler");
  EXPECT_NEAR(ms(a, account::Category::exposed_comm), (50 + 700) * 1e-6, 1e-12);  // the issue, then the wait
  EXPECT_NEAR(ms(a, account::Category::other), 250e-6, 1e-12);
  EXPECT_NEAR(a.pass.comm_in_flight_seconds, 700e-9, 1e-15);
  json bad_flags = j;
  bad_flags["events"][3][5] = 8;  // no such flag
  const auto refused = read_python_time_account(bad_flags);
  ASSERT_TRUE(std::holds_alternative<std::string>(refused));
  EXPECT_NE(std::get<std::string>(refused).find("flags 8"), std::string::npos);
}

// On a CUDA device the child also sends the runtime calls and the device's activities: the
// categories are the device timeline's (account/device_timeline.hpp), each kernel in the
// category of the host operator around its launch, NCCL's time alone exposed communication.
json cuda_line() {
  return json::parse(R"({
    "clock_seconds": 0.000001,
    "names": ["tokbench::iteration", "forward", "aten::mm", "sm90_gemm_kernel", "ncclDevKernel_AllReduce"],
    "shapes": [[[2, 3], [3, 4]]],
    "events": [[0, 0, 1000, 5, -1, 2, -1],
               [1, 60, 640, 5, -1, 2, -1],
               [2, 100, 200, 5, 3, 0, 0]],
    "launches": [[11, 150, 5], [12, 650, 5]],
    "device_events": [[3, 300, 600, 7, 11], [4, 700, 800, 13, 12]]
  })");
}

TEST(PythonTimeAccount, OnCudaTheDevicesTimelineIsRead) {
  const auto read = read_python_time_account(cuda_line());
  ASSERT_TRUE(std::holds_alternative<train::ProfiledTimeAccount>(read)) << std::get<std::string>(read);
  const auto& a = std::get<train::ProfiledTimeAccount>(read);
  EXPECT_EQ(a.source, "torch_profiler_cuda");
  EXPECT_EQ(a.exposed_comm_source, "device_timeline");
  ASSERT_TRUE(a.device.has_value());
  EXPECT_EQ(a.device->activities, 2);
  EXPECT_EQ(a.device->unlaunched_activities, 0);
  EXPECT_NEAR(a.device->busy_seconds, 400e-9, 1e-15);
  EXPECT_NEAR(ms(a, account::Category::gemm), 300e-6, 1e-12);          // the kernel aten::mm launched
  EXPECT_NEAR(ms(a, account::Category::exposed_comm), 100e-6, 1e-12);  // NCCL with nothing beside it
  double total = 0;
  for (const double seconds : a.pass.seconds) total += seconds;
  EXPECT_NEAR(total, 1000e-9, 1e-15);  // the device's idle time is in the categories too
  EXPECT_GT(a.pass.seconds[account::index_of(account::Category::device_idle)], 0);
  EXPECT_EQ(a.pass.gemm_flops, 2 * 2 * 3 * 4);  // from the host operator's shapes
}

TEST(PythonTimeAccount, OnCudaAMalformedDeviceEventGivesNoAccount) {
  auto why = [](const json& j) {
    const auto read = read_python_time_account(j);
    return std::holds_alternative<std::string>(read) ? std::get<std::string>(read) : std::string();
  };
  json short_row = cuda_line();
  short_row["device_events"][0] = json::array({3, 300, 600});
  EXPECT_NE(why(short_row).find("5-field"), std::string::npos);
  json bad_name = cuda_line();
  bad_name["device_events"][1][0] = 9;
  EXPECT_NE(why(bad_name).find("outside its table"), std::string::npos);
  json short_launch = cuda_line();
  short_launch["launches"][0] = json::array({11, 150});
  EXPECT_NE(why(short_launch).find("3-field"), std::string::npos);
  json no_launches = cuda_line();
  no_launches.erase("launches");
  EXPECT_FALSE(why(no_launches).empty());
}

}  // namespace
}  // namespace tokbench::run
