// The local agent behind `tokbench run --nproc-per-node N`, the part of torchrun that runs on
// each node: it starts N copies of one program with torchrun's environment contract (RANK,
// WORLD_SIZE, MASTER_ADDR, ...), relays their output line by line, forwards Ctrl-C, and ends
// the surviving ranks when one fails, because survivors of a failed rank usually sit in a
// collective that will never complete. Torch-free: the standard library and POSIX only, so the
// launcher costs nothing to start and cannot initialise CUDA in the parent before the fork.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace tokbench::distributed {

struct LaunchOptions {
  std::vector<std::string> argv;  // program path + arguments, run unchanged by every local rank (execv, no shell)
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  // 0: a free TCP port on master_addr (only valid when nnodes == 1), bound and listening from
  // before the first rank starts; rank 0 inherits the socket (TOKBENCH_STORE_LISTEN_FD).
  int master_port = 0;
  // After the first rank fails, how long the others get to end on their own before SIGTERM;
  // SIGKILL 5 s after that.
  double failure_grace_seconds = 30;
  // Prefix each line of each rank's output with "[rank R] "; rank 0's STDOUT is passed through
  // unprefixed (it carries the report/JSON).
  // When global rank 0 ends (it reports the job's result), the ranks still running get this
  // long before SIGTERM instead of the whole failure grace; negative: no such rule.
  double lead_exit_grace_seconds = -1;
  bool prefix_output = true;
  std::FILE* out = stdout;  // where rank stdout lines go
  std::FILE* err = stderr;  // where rank stderr lines and launcher messages go
};

struct RankExit {
  int rank = 0;       // global rank
  int exit_code = 0;  // when the process exited normally
  int signal = 0;     // non-zero when killed by a signal
  // The launcher ended it after another rank failed (or after a second SIGINT/SIGTERM).
  bool killed_by_launcher = false;
  double seconds = 0;  // from start to end
};

struct LaunchResult {
  std::vector<RankExit> ranks;  // one per local rank, in rank order
  // The first rank (in time) that exited non-zero or by a signal, not killed by the launcher.
  std::optional<int> first_failed_rank;
  // One line: e.g. "rank 1 was killed by signal 9 (SIGKILL) after 3.2 s" or
  // "rank 0 exited with code 3 after 0.1 s"; empty when no rank failed.
  std::string failure;
  bool interrupted = false;  // the launcher got SIGINT/SIGTERM
  // 0 when all ranks exited 0; else the first failed rank's exit code, or 128+signal. When
  // interrupted and the only non-zero ends were the launcher's kills: 128+the launcher's signal.
  int exit_code = 0;
};

// Starts options.nproc_per_node ranks, relays their output and waits until every one has ended
// and been reaped. Validates first (std::invalid_argument, see validate_launch_options); throws
// std::runtime_error when argv[0] is not executable, no free port can be found, or a pipe or
// fork fails (ranks already started are then killed and reaped before the throw).
//
// While it runs, it owns the process's SIGINT, SIGTERM and SIGCHLD handlers (restored before it
// returns or throws), so only one launch may run in a process at a time (std::logic_error).
LaunchResult launch_ranks(const LaunchOptions& options);

// A free TCP port on addr (bind to port 0, read it back, close). Throws std::runtime_error on failure.
// Another process may take the port before it is bound again: for tests that start ranks as
// threads; launch_ranks does not use it.
int find_free_port(const std::string& addr);

// Validates options (nproc >= 1, nnodes >= 1, 0 <= node_rank < nnodes, port 0..65535, port 0 only
// with nnodes == 1, non-empty argv and master_addr, a finite grace >= 0, non-null out/err);
// throws std::invalid_argument with ONE line naming the option in CLI spelling (--nproc-per-node,
// --nnodes, --node-rank, --master-addr, --master-port), the value and what is valid.
void validate_launch_options(const LaunchOptions& options);

}  // namespace tokbench::distributed
