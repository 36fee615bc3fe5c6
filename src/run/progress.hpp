// Progress display during a run: on a terminal (stderr is a TTY) one live line rewritten with
// '\r' (iteration i/N, warm-up or measured, loss, iteration time, ETA); otherwise, or with
// --log-every N, plain lines in the reference's format "iter {i}: loss {:.4f}, iter time: {:.2f}ms".
#pragma once

#include <cstdint>
#include <cstdio>

#include "run/metrics.hpp"

namespace tokbench::run {

struct ProgressOptions {
  int64_t max_iters = 0;
  int64_t warmup_iters = 0;
  int64_t log_every = 0;  // 0: live line on a TTY, every iteration otherwise
  bool quiet = false;
  bool live = false;      // the caller decides (isatty)
};

class ProgressPrinter {
 public:
  ProgressPrinter(ProgressOptions options, std::FILE* live_stream, std::FILE* line_stream);
  void on_iteration(const IterationSample& sample);
  void finish();  // ends a live line

 private:
  ProgressOptions options_;
  std::FILE* live_stream_;
  std::FILE* line_stream_;
  double elapsed_seconds_ = 0;
  bool live_line_open_ = false;
};

}  // namespace tokbench::run
