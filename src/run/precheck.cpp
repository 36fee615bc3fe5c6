// precheck.hpp: the run's own option parser and resolve_run, against this machine or an imagined node.
#include "run/precheck.hpp"

#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "run/run_options.hpp"
#include "machine/machine_info.hpp"
#include "run/resolve.hpp"

namespace tokbench::run {
namespace {

// The node as the first rank of the job will see it, minus what cannot be known from here.
machine::MachineInfo imagined_node(const RunOptions& o, const RankLayout& layout) {
  machine::MachineInfo m;
  m.cpu_model = "(the Slurm node's CPU)";
  m.dist_env.source = "slurm";
  m.dist_env.world_size = layout.nodes * layout.ranks_per_node;
  m.dist_env.local_world_size = layout.ranks_per_node;
  if (o.device.rfind("cuda", 0) == 0) {
    // Enough GPUs for the ranks of a node and any cuda:N asked for; memory 0 skips the fit
    // check, the name matches no peak table entry, compute capability allows bf16.
    std::size_t count = static_cast<std::size_t>(layout.ranks_per_node);
    if (o.device.size() > 5) {
      try {
        count = std::max(count, static_cast<std::size_t>(std::stoul(o.device.substr(5))) + 1);
      } catch (const std::exception&) {
      }  // resolve_run names the bad value
    }
    for (std::size_t i = 0; i < count; ++i) {
      cuda::CudaDeviceInfo gpu;
      gpu.index = static_cast<int>(i);
      gpu.name = "(the Slurm node's GPU)";
      gpu.compute_capability_major = 9;
      m.cuda_devices.push_back(gpu);
    }
    m.cuda_status = "ok";
  } else {
    m.cuda_status = "not probed (checked away from the node)";
  }
  return m;
}

}  // namespace

namespace {

// Parses the arguments as `tokbench run` does and resolves them against `machine` (built from
// the parsed options); the one line the run would print, or empty.
template <typename MachineOf>
std::string check(const std::vector<std::string>& run_arguments, MachineOf machine_of) {
  CLI::App app{"tokbench run (checked before it runs)", "tokbench run"};
  RunOptions options;
  add_bench_options(app, options);
  std::vector<std::string> args{"tokbench"};
  args.insert(args.end(), run_arguments.begin(), run_arguments.end());
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  // The same first words as the real run's messages (cli/main.cpp), so rows read alike.
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return std::string("tokbench: ") + e.what() + " (see --help)";
  }
  try {
    RunPlan plan = resolve_run(options, machine_of(options));
  } catch (const std::invalid_argument& e) {
    return std::string("tokbench: ") + e.what();
  }
  return "";
}

}  // namespace

std::string precheck_run_options(const std::vector<std::string>& run_arguments, const RankLayout& layout) {
  return check(run_arguments, [&](const RunOptions& o) { return imagined_node(o, layout); });
}

std::string precheck_run_here(const std::vector<std::string>& run_arguments, const machine::MachineInfo& here) {
  return check(run_arguments, [&](const RunOptions&) { return here; });
}

}  // namespace tokbench::run
