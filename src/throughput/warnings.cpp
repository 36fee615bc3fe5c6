// The pluggable warning sink (Lightning's rank_zero_warn). The default prints each distinct
// message once, as Python's default warnings filter does; a mutex keeps swaps thread-safe.
#include <iostream>
#include <mutex>
#include <set>
#include <string>

#include "tokbench/throughput.hpp"

namespace tokbench {
namespace {

std::mutex& sink_mutex() {
  static std::mutex m;
  return m;
}

WarningSink& current_sink() {
  static WarningSink sink;
  return sink;
}

void default_sink(std::string_view message) {
  static std::set<std::string, std::less<>> seen;  // guarded by sink_mutex()
  if (seen.find(message) != seen.end()) return;
  seen.emplace(message);
  std::cerr << "tokbench: UserWarning: " << message << '\n';
}

}  // namespace

WarningSink set_warning_sink(WarningSink sink) {
  std::lock_guard lock(sink_mutex());
  WarningSink previous = std::move(current_sink());
  current_sink() = std::move(sink);
  return previous;
}

void emit_warning(std::string_view message) {
  WarningSink sink;
  {
    std::lock_guard lock(sink_mutex());
    if (!current_sink()) {
      default_sink(message);
      return;
    }
    sink = current_sink();  // call a copy outside the lock: a sink may swap sinks itself
  }
  sink(message);
}

}  // namespace tokbench
