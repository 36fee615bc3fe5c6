// The device timeline's attribution (device_timeline.hpp).
#include "account/device_timeline.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <unordered_map>

#include "account/op_rules.hpp"
#include "account/range_names.hpp"

namespace tokbench::account {
namespace {

// A stretch of one host thread's time and the innermost event that held it.
struct HostSegment {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  Category category = Category::other;
  const std::string* name = nullptr;
};

// Each host thread's time as a flat sequence of segments, each the self time of its innermost
// event: the question "which category was the host in at instant t" is a binary search.
class HostTimeline {
 public:
  explicit HostTimeline(const std::vector<ClassifiedEvent>& events) {
    // classify_events lists each thread's events together, in pre-order.
    std::size_t begin = 0;
    while (begin < events.size()) {
      std::size_t end = begin;
      while (end < events.size() && events[end].thread == events[begin].thread) ++end;
      flatten(events, begin, end, segments_[events[begin].thread]);
      begin = end;
    }
  }

  const HostSegment* at(uint64_t thread, int64_t t) const {
    const auto it = segments_.find(thread);
    if (it == segments_.end()) return nullptr;
    const std::vector<HostSegment>& s = it->second;
    auto after = std::upper_bound(s.begin(), s.end(), t, [](int64_t v, const HostSegment& g) { return v < g.start_ns; });
    if (after == s.begin()) return nullptr;
    const HostSegment& g = *std::prev(after);
    return t < g.end_ns ? &g : nullptr;
  }

  // The segments of `thread` that overlap [a, b), in order.
  template <class Fn>
  void each_overlapping(uint64_t thread, int64_t a, int64_t b, Fn fn) const {
    const auto it = segments_.find(thread);
    if (it == segments_.end()) return;
    const std::vector<HostSegment>& s = it->second;
    auto g = std::upper_bound(s.begin(), s.end(), a, [](int64_t v, const HostSegment& x) { return v < x.start_ns; });
    if (g != s.begin()) --g;
    for (; g != s.end() && g->start_ns < b; ++g)
      if (g->end_ns > a) fn(*g);
  }

 private:
  static void flatten(const std::vector<ClassifiedEvent>& events, std::size_t begin, std::size_t end,
                      std::vector<HostSegment>& out) {
    std::vector<const ClassifiedEvent*> stack;
    int64_t cursor = 0;
    auto emit = [&](int64_t until) {
      if (!stack.empty() && until > cursor)
        out.push_back({cursor, until, stack.back()->category, &stack.back()->name});
      cursor = std::max(cursor, until);
    };
    for (std::size_t i = begin; i < end; ++i) {
      const ClassifiedEvent& e = events[i];
      // The walk nested each event under the open one it started inside (depth says so).
      while (static_cast<int>(stack.size()) > e.depth) {
        emit(stack.back()->end_ns);
        stack.pop_back();
      }
      emit(e.start_ns);
      cursor = std::max(cursor, e.start_ns);
      stack.push_back(&e);
    }
    while (!stack.empty()) {
      emit(stack.back()->end_ns);
      stack.pop_back();
    }
  }

  std::unordered_map<uint64_t, std::vector<HostSegment>> segments_;
};

// Where one device activity's time goes.
struct Home {
  Category category = Category::other;
  const std::string* name = nullptr;  // for other_by_name: the launching host event's, else the activity's
  bool launched = false;              // its launch was found inside a host event
  bool communication = false;
};

}  // namespace

bool is_communication_kernel(const std::string& name) {
  if (name.size() < 4) return false;
  std::string head = name.substr(0, 4);
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return head == "nccl";
}

DevicePass attribute_device_timeline(const std::vector<ProfiledEvent>& host, const std::vector<LaunchCall>& launches,
                                     std::vector<DeviceActivity> activities) {
  DevicePass out;
  const ClassifiedEvents classified = classify_events(host);
  if (classified.events.empty()) return out;
  const uint64_t loop_thread = classified.events.front().thread;
  std::vector<std::pair<int64_t, int64_t>> iterations;
  for (const ClassifiedEvent& e : classified.events)
    if (e.thread == loop_thread && e.depth == 0) iterations.emplace_back(e.start_ns, e.end_ns);
  const HostTimeline timeline(classified.events);

  std::unordered_map<uint64_t, const LaunchCall*> launch_of;
  for (const LaunchCall& l : launches)
    if (l.correlation_id != 0) launch_of.emplace(l.correlation_id, &l);

  std::erase_if(activities, [](const DeviceActivity& a) { return a.end_ns <= a.start_ns; });
  std::stable_sort(activities.begin(), activities.end(), [](const DeviceActivity& a, const DeviceActivity& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns < b.end_ns;
  });
  std::vector<Home> homes(activities.size());
  for (std::size_t i = 0; i < activities.size(); ++i) {
    Home& h = homes[i];
    h.communication = is_communication_kernel(activities[i].name);
    h.name = &activities[i].name;
    const auto l = launch_of.find(activities[i].correlation_id);
    if (l != launch_of.end()) {
      if (const HostSegment* g = timeline.at(l->second->thread, l->second->start_ns))
        h = {g->category, g->name, true, h.communication};
    }
    // The launching host event says nothing (a compiled graph's range, a fusion's call, the
    // framework's glue) or no launch is known: the kernel's own name decides where it can.
    if (h.category == Category::other && !h.communication) {
      if (const auto by_name = category_of_kernel(activities[i].name)) h.category = *by_name;
    }
  }

  std::array<int64_t, kCategoryCount> ns{};
  std::map<std::string, int64_t> other_ns;
  int64_t busy_ns = 0, hidden_comm_ns = 0, unlaunched_ns = 0, range_ns = 0;
  std::vector<bool> seen(activities.size(), false);
  auto give = [&](Category c, const std::string& name, int64_t amount) {
    ns[index_of(c)] += amount;
    if (c == Category::other) other_ns[name] += amount;
  };

  for (const auto& [start, end] : iterations) {
    range_ns += end - start;
    // The activities' starts and ends inside this range, in time order.
    struct Edge {
      int64_t t;
      bool opens;
      std::size_t index;
    };
    std::vector<Edge> edges;
    for (std::size_t i = 0; i < activities.size() && activities[i].start_ns < end; ++i) {
      const int64_t a = std::max(activities[i].start_ns, start), b = std::min(activities[i].end_ns, end);
      if (a >= b) continue;
      seen[i] = true;
      edges.push_back({a, true, i});
      edges.push_back({b, false, i});
    }
    std::stable_sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) { return x.t < y.t; });

    std::vector<std::size_t> compute;  // running compute activities, earliest started first
    int64_t comm = 0;                  // running communication kernels
    auto account = [&](int64_t a, int64_t b) {
      const int64_t length = b - a;
      if (length <= 0) return;
      if (!compute.empty()) {
        const int64_t k = static_cast<int64_t>(compute.size());
        for (int64_t j = 0; j < k; ++j) {
          const Home& h = homes[compute[static_cast<std::size_t>(j)]];
          const int64_t share = length / k + (j < length % k ? 1 : 0);
          give(h.category, *h.name, share);
          if (!h.launched) unlaunched_ns += share;
        }
        busy_ns += length;
        if (comm > 0) hidden_comm_ns += length;
      } else if (comm > 0) {
        ns[index_of(Category::exposed_comm)] += length;
        busy_ns += length;
      } else {
        // Idle: data_host while the host is in data_host's work, else the device waits for launches.
        int64_t covered = 0;
        timeline.each_overlapping(loop_thread, a, b, [&](const HostSegment& g) {
          const int64_t piece = std::min(b, g.end_ns) - std::max(a, g.start_ns);
          covered += piece;
          ns[index_of(g.category == Category::data_host ? Category::data_host : Category::device_idle)] += piece;
        });
        ns[index_of(Category::device_idle)] += length - covered;
      }
    };
    int64_t cursor = start;
    for (const Edge& edge : edges) {
      account(cursor, edge.t);
      cursor = std::max(cursor, edge.t);
      if (homes[edge.index].communication) {
        comm += edge.opens ? 1 : -1;
      } else if (edge.opens) {
        compute.push_back(edge.index);  // activities are sorted by start, so this keeps the order
      } else {
        std::erase(compute, edge.index);
      }
    }
    account(cursor, end);
  }

  ProfiledPass& pass = out.pass;
  pass.iterations = static_cast<int64_t>(iterations.size());
  pass.range_seconds = static_cast<double>(range_ns) * 1e-9;
  for (const Category c : all_categories()) pass.seconds[index_of(c)] = static_cast<double>(ns[index_of(c)]) * 1e-9;
  pass.gemm_flops = classified.gemm_flops;
  pass.attention_flops = classified.attention_flops;
  pass.uncounted_matmuls = classified.uncounted_matmuls;
  pass.events = static_cast<int64_t>(classified.events.size());
  for (const auto& [name, amount] : other_ns) pass.other_by_name.emplace_back(name, static_cast<double>(amount) * 1e-9);
  std::sort(pass.other_by_name.begin(), pass.other_by_name.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });

  DeviceFigures& d = out.device;
  d.busy_seconds = static_cast<double>(busy_ns) * 1e-9;
  d.hidden_comm_seconds = static_cast<double>(hidden_comm_ns) * 1e-9;
  d.unlaunched_seconds = static_cast<double>(unlaunched_ns) * 1e-9;
  for (std::size_t i = 0; i < activities.size(); ++i) {
    if (!seen[i]) continue;
    ++d.activities;
    if (!homes[i].launched) ++d.unlaunched_activities;
  }
  return out;
}

}  // namespace tokbench::account
