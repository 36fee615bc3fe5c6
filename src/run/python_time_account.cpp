// python_time_account.hpp. The line is checked as it is read: a malformed event (an index out
// of its table, a field of the wrong type) makes the whole account unavailable rather than
// silently wrong.
#include "run/python_time_account.hpp"

#include <fmt/format.h>

#include <vector>

#include "account/device_timeline.hpp"
#include "account/profiled_pass.hpp"
#include "run/python_protocol_keys.hpp"

namespace tokbench::run {
namespace {

using json = nlohmann::json;
namespace pk = python_protocol_key;

// The source the record names: torch.profiler over the Python step, host events only or, on a
// CUDA device, with the device's timeline.
constexpr const char* kSource = "torch_profiler_cpu";
constexpr const char* kCudaSource = "torch_profiler_cuda";
constexpr std::size_t kFields = 7;  // name, start_ns, end_ns, thread, sequence_nr, flags, shapes
// The flags field's bits (python/tokbench_python_step.py, profiled_events).
constexpr int64_t kBackwardNode = 1;  // an autograd node's evaluation
constexpr int64_t kNamedRange = 2;    // a record_function range (USER_SCOPE), not an operator
constexpr int64_t kAsynchronous = 4;  // an asynchronous event (a collective on Gloo's threads)

account::ProfiledEvent read_event(const json& row, const std::vector<std::string>& names,
                                  const std::vector<account::Shapes>& shapes) {
  if (!row.is_array() || row.size() != kFields) throw std::invalid_argument("an event is not a 7-field array");
  const auto name = row[0].get<int64_t>();
  const auto shape = row[6].get<int64_t>();
  if (name < 0 || name >= static_cast<int64_t>(names.size()) || shape < -1 ||
      shape >= static_cast<int64_t>(shapes.size()))
    throw std::invalid_argument("an event's name or shapes index is outside its table");
  account::ProfiledEvent e;
  e.name = names[static_cast<std::size_t>(name)];
  e.start_ns = row[1].get<int64_t>();
  e.end_ns = row[2].get<int64_t>();
  e.thread = row[3].get<uint64_t>();
  e.sequence_nr = row[4].get<int64_t>();
  const auto flags = row[5].get<int64_t>();
  if (flags < 0 || flags > (kBackwardNode | kNamedRange | kAsynchronous))
    throw std::invalid_argument(fmt::format("an event's flags {} are not a combination of 1, 2 and 4", flags));
  e.backward_node = (flags & kBackwardNode) != 0;
  e.named_range = (flags & kNamedRange) != 0;
  e.asynchronous = (flags & kAsynchronous) != 0;
  if (shape >= 0) e.input_shapes = shapes[static_cast<std::size_t>(shape)];
  return e;
}

// [correlation_id, start_ns, thread]: a CUDA runtime or driver call.
account::LaunchCall read_launch(const json& row) {
  if (!row.is_array() || row.size() != 3) throw std::invalid_argument("a launch is not a 3-field array");
  return {row[0].get<uint64_t>(), row[1].get<int64_t>(), row[2].get<uint64_t>()};
}

// [name, start_ns, end_ns, stream, correlation_id]: a kernel, copy or fill on the run's device.
account::DeviceActivity read_device_event(const json& row, const std::vector<std::string>& names) {
  if (!row.is_array() || row.size() != 5) throw std::invalid_argument("a device event is not a 5-field array");
  const auto name = row[0].get<int64_t>();
  if (name < 0 || name >= static_cast<int64_t>(names.size()))
    throw std::invalid_argument("a device event's name index is outside its table");
  return {names[static_cast<std::size_t>(name)], row[1].get<int64_t>(), row[2].get<int64_t>(), row[3].get<int64_t>(),
          row[4].get<uint64_t>()};
}

}  // namespace

std::variant<train::ProfiledTimeAccount, std::string> read_python_time_account(const json& line) {
  if (line.contains(pk::error)) return "the profiled pass failed: " + line.value(pk::error, std::string("?"));
  try {
    const auto names = line.at(pk::names).get<std::vector<std::string>>();
    const auto shapes = line.at(pk::shapes).get<std::vector<account::Shapes>>();
    std::vector<account::ProfiledEvent> events;
    events.reserve(line.at(pk::events).size());
    for (const json& row : line.at(pk::events)) events.push_back(read_event(row, names, shapes));
    train::ProfiledTimeAccount out;
    out.clock_seconds = line.at(pk::clock_seconds).get<double>();
    if (line.contains(pk::device_events)) {
      // On a CUDA device: the device's timeline, as tokbench's own pass reads it
      // (src/train/time_account_pass.cpp), and NCCL's exposed time from it.
      std::vector<account::LaunchCall> launches;
      for (const json& row : line.at(pk::launches)) launches.push_back(read_launch(row));
      std::vector<account::DeviceActivity> activities;
      for (const json& row : line.at(pk::device_events)) activities.push_back(read_device_event(row, names));
      account::DevicePass timeline = account::attribute_device_timeline(events, launches, std::move(activities));
      out.source = kCudaSource;
      out.pass = std::move(timeline.pass);
      out.device = timeline.device;
      out.exposed_comm_source = account::kExposedCommFromDeviceTimeline;
      return out;
    }
    out.source = kSource;
    // The Python steps have no timer around their waits: exposed communication is what the
    // attribution reads from the collectives' operators and asynchronous events.
    out.exposed_comm_source = account::kExposedCommFromProfiler;
    out.pass = account::attribute_events(std::move(events));
    return out;
  } catch (const std::exception& e) {  // nlohmann's type and range errors, and read_event's
    return fmt::format("the Python step's events could not be read: {}", e.what());
  }
}

}  // namespace tokbench::run
