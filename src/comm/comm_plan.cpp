// Resolution of `tokbench comm`'s options (comm_plan.hpp). The options alone first
// (check_comm_options, which `tokbench` also runs as soon as it reads the line); the machine
// (devices, memory) and the files named last.
#include "comm/comm_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "results/result_store.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::comm {
namespace {

using usage::printable;
using usage::refuse;


// A size check_comm_options accepted, in bytes.
int64_t checked_byte_size(const std::string& text) { return *parse_byte_size(text); }

void resolve_launcher(const CommOptions& o, const machine::MachineInfo& m, CommPlan& plan) {
  if (!m.dist_env_error.empty()) refuse(m.dist_env_error);
  plan.env = m.dist_env;
  if (o.nproc_per_node) {
    plan.env.world_size = *o.nproc_per_node * o.nnodes;
    plan.env.local_world_size = *o.nproc_per_node;
    plan.env.rank = o.node_rank * *o.nproc_per_node;
    plan.env.local_rank = 0;
    plan.env.master_addr = o.master_addr;
  }
  plan.world_size = plan.env.world_size;
  plan.nproc_per_node = plan.env.local_world_size;
  // torchrun, srun and mpirun give every node the same number of ranks.
  plan.nnodes = std::max<int64_t>(1, plan.world_size / std::max<int64_t>(1, plan.nproc_per_node));
}

void resolve_device(const CommOptions& o, const machine::MachineInfo& m, CommPlan& plan) {
  plan.cuda = o.device == "cuda";
  if (plan.cuda && m.cuda_devices.empty())
    refuse(fmt::format("--device cuda cannot run here: no usable CUDA device ({}); valid here: cpu", m.cuda_status));
  if (plan.cuda) {
    const auto devices = static_cast<int64_t>(m.cuda_devices.size());
    if (plan.nproc_per_node > devices)
      refuse(fmt::format("--device cuda with {} ranks per node needs a GPU for each, and {} CUDA device(s) are visible; "
                        "valid: at most {} ranks per node",
                        plan.nproc_per_node, devices, devices));
    plan.device_index = static_cast<int>(plan.env.local_rank);
    plan.device_name = m.cuda_devices[static_cast<size_t>(plan.device_index)].name;
  } else {
    plan.device_name = m.cpu_model;
  }
  plan.backend = o.backend == "nccl" || (o.backend == "auto" && plan.cuda) ? distributed::CommBackend::nccl
                                                                           : distributed::CommBackend::gloo;
}

// The sizes and collectives of options check_comm_options accepted, and the one check that
// needs the world size.
void resolve_sweep(const CommOptions& o, CommPlan& plan) {
  plan.collectives.clear();
  std::size_t start = 0;
  while (start <= o.collectives.size()) {
    const std::size_t comma = std::min(o.collectives.find(',', start), o.collectives.size());
    plan.collectives.push_back(*collective_from_string(o.collectives.substr(start, comma - start)));
    start = comma + 1;
  }
  plan.dtype = o.dtype;
  plan.element_bytes = o.dtype == "float32" ? 4 : 2;
  const int64_t min_bytes = checked_byte_size(o.min_bytes);
  const int64_t max_bytes = checked_byte_size(o.max_bytes.empty() ? (plan.cuda ? "1G" : "64M") : o.max_bytes);
  plan.sizes = size_sweep(min_bytes, max_bytes, o.step_factor);
  // all_gather and reduce_scatter split a size evenly over the ranks; a size too small to give
  // each rank an element is left out of their rows (docs/comm.md), but a sweep that would leave
  // a collective no row at all is a mistake.
  for (Collective c : plan.collectives) {
    if (size_point(c, plan.sizes.back(), plan.element_bytes, plan.world_size).count > 0) continue;
    const bool split = c == Collective::all_gather || c == Collective::reduce_scatter;
    refuse(fmt::format("--max-bytes {}: {} over {} ranks of {} needs at least {} bytes; valid: a larger --max-bytes",
                      byte_size_text(max_bytes), to_string(c), plan.world_size, plan.dtype,
                      split ? plan.world_size * plan.element_bytes : plan.element_bytes));
  }

  plan.iters = o.iters;
  plan.warmup_iters = o.warmup_iters;
  plan.compute_sharing = o.compute_sharing == "on";
  plan.num_threads = o.num_threads;  // bounded by its row (check_comm_options)
  plan.timeout_seconds = o.dist_timeout_s;
}

// The buffers must fit: a rank that runs out of memory halfway through the sweep has wasted it.
void check_memory(const machine::MachineInfo& m, CommPlan& plan) {
  const int64_t per_rank = peak_bytes_per_rank(plan.sizes.back(), plan.element_bytes);
  const auto gb = [](int64_t bytes) { return static_cast<double>(bytes) / 1e9; };
  if (plan.cuda) {
    const int64_t capacity = m.cuda_devices[static_cast<size_t>(plan.device_index)].total_memory_bytes;
    if (capacity > 0 && per_rank > capacity)
      refuse(fmt::format("--max-bytes {} needs about {:.1f} GB per GPU and {} has {:.1f} GB; valid: a smaller --max-bytes",
                        byte_size_text(plan.sizes.back()), gb(per_rank), plan.device_name, gb(capacity)));
    return;
  }
  int64_t available = m.mem_available_bytes;
  if (m.cgroup_available_bytes) available = std::min(available, *m.cgroup_available_bytes);
  const int64_t node = per_rank * plan.nproc_per_node;
  if (available > 0 && node > available)
    refuse(fmt::format("--max-bytes {} needs about {:.1f} GB on this node ({} ranks x {:.1f} GB) and {:.1f} GB is "
                      "available; valid: a smaller --max-bytes",
                      byte_size_text(plan.sizes.back()), gb(node), plan.nproc_per_node, gb(per_rank), gb(available)));
}

void resolve_output(const CommOptions& o, CommPlan& plan) {
  plan.format = &results::format_from_string(o.format);
  plan.output = o.output;
  if (plan.format->file == results::FileUse::required && plan.output.empty())
    refuse(fmt::format("--format {} writes a file: name it with --output FILE (valid without --output: print, csv, "
                      "json, markdown, html)",
                      plan.format->name));
  std::error_code ec;
  auto require_folder = [&ec](const char* option, const std::filesystem::path& path) {
    const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
    if (!std::filesystem::is_directory(folder, ec))
      refuse(fmt::format("{} '{}': the folder '{}' does not exist; valid: a file in an existing folder", option,
                        printable(path.string()), printable(folder.string())));
  };
  if (!plan.output.empty()) {
    require_folder("--output", plan.output);
    if (std::filesystem::is_directory(plan.output, ec))
      refuse(fmt::format("--output '{}' is a folder; valid: a file name", printable(plan.output.string())));
  }
  plan.store = o.store;
  if (!plan.store.empty()) {
    require_folder("--store", plan.store);
    // An existing file must be a tokbench store before anything runs (read-only: nothing is
    // created or changed here); a new one is created when the result is saved.
    if (std::filesystem::exists(plan.store, ec)) {
      try {
        results::ResultStore::open_for_reading(plan.store);
      } catch (const std::invalid_argument& e) {
        refuse(std::string("--store: ") + e.what() + "; valid: a tokbench result store, or a new file");
      }
    }
  }
}

}  // namespace

int64_t peak_bytes_per_rank(int64_t max_bytes, int64_t element_bytes) {
  const int64_t elements = max_bytes / element_bytes;
  return 2 * max_bytes + elements * (8 + 2 * element_bytes);
}

CommPlan resolve_comm(const CommOptions& o, const machine::MachineInfo& m) {
  check_comm_options(o);
  CommPlan plan;
  plan.options = o;
  resolve_launcher(o, m, plan);
  resolve_device(o, m, plan);
  resolve_sweep(o, plan);
  resolve_output(o, plan);
  check_memory(m, plan);
  return plan;
}

}  // namespace tokbench::comm
