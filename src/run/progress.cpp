// Progress output. The ETA uses the mean time of the iterations so far: crude during warm-up
// (first iterations are slow), good enough once measuring starts.
#include "run/progress.hpp"

#include <fmt/format.h>

namespace tokbench::run {

ProgressPrinter::ProgressPrinter(ProgressOptions options, std::FILE* live_stream, std::FILE* line_stream)
    : options_(options), live_stream_(live_stream), line_stream_(line_stream) {}

void ProgressPrinter::on_iteration(const IterationSample& s) {
  elapsed_seconds_ += s.seconds;
  if (options_.quiet) return;
  const int64_t done = s.index + 1;
  if (options_.live && options_.log_every == 0) {
    const double eta = elapsed_seconds_ / static_cast<double>(done) * static_cast<double>(options_.max_iters - done);
    fmt::print(live_stream_, "\r\x1b[Kiter {}/{} [{}] loss {:.4f} | {:.2f} ms | ETA {:.0f} s", done, options_.max_iters,
               s.warmup ? "warm-up" : "measured", s.loss, s.seconds * 1e3, eta);
    std::fflush(live_stream_);
    live_line_open_ = true;
    return;
  }
  const int64_t every = options_.log_every > 0 ? options_.log_every : 1;
  if (s.index % every == 0 || done == options_.max_iters) {
    fmt::print(line_stream_, "iter {}: loss {:.4f}, iter time: {:.2f}ms\n", s.index, s.loss, s.seconds * 1e3);
    std::fflush(line_stream_);
  }
}

void ProgressPrinter::finish() {
  if (live_line_open_) {
    fmt::print(live_stream_, "\n");
    live_line_open_ = false;
  }
}

}  // namespace tokbench::run
