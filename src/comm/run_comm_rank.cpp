// One rank of `tokbench comm` (run_comm.hpp): the device binding, process groups and store of
// `tokbench run`'s ranks (distributed/), the measurement (measure_collectives.hpp), and on rank
// 0 the outputs: the report in the chosen format, the stored document, a wrong result as an error.
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <fmt/format.h>

#include <iostream>
#include <optional>

#include "machine/environment.hpp"
#include "comm/comm_result.hpp"
#include "comm/compute_sharing.hpp"
#include "comm/measure_collectives.hpp"
#include "comm/run_comm.hpp"
#include "distributed/device_binding.hpp"
#include "distributed/process_groups.hpp"
#include "results/comm_document_keys.hpp"
#include "results/result_store.hpp"
#include "train/run_status.hpp"

namespace tokbench::comm {

namespace ck = results::comm_document_key;

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// A rank that could not finish says why in one line, with the run's status words and exit
// codes (a timed-out collective is `timeout`, a lost peer `rank_failed`).
int failed(const CommPlan& plan, const std::string& message) {
  const train::RunStatus status = train::status_of_failure(message);
  std::cerr << "tokbench comm: rank " << plan.env.rank << " ended with status " << train::to_string(status) << ": "
            << message << "\n";
  return train::exit_code(status);
}

}  // namespace

int run_comm_rank(const CommPlan& plan) {
  const bool lead = plan.env.rank == 0;
  const c10::Device device =
      plan.cuda ? c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(plan.device_index)) : c10::Device(c10::kCPU);
  // Before any device work: this thread (and every allocation that follows the current device)
  // is on cuda:LOCAL_RANK.
  distributed::bind_rank_device(device);
  if (plan.num_threads > 0) at::set_num_threads(plan.num_threads);
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(plan.timeout_seconds * 1000));
  machine::DistEnv env = plan.env;
  // A process started alone is a world of one: its store takes any free port rather than
  // torchrun's default, which another job on this machine may hold.
  if (env.source == "none") env.master_port = 0;
  std::vector<MeasuredPoint> points;
  std::optional<ComputeSharing> sharing;
  try {
    const distributed::ProcessGroups groups =
        distributed::create_process_groups(distributed::GroupOptions{env, timeout, device, plan.backend, std::nullopt});
    points = measure_collectives(*groups.world, device, plan, [&](Collective c) {
      if (lead)
        std::cerr << "# " << to_string(c) << ": " << plan.sizes.size() << " sizes from "
                  << byte_size_text(plan.sizes.front()) << " to " << byte_size_text(plan.sizes.back()) << "\n";
    });
    keep_slowest_rank(*groups.world, device, points);
    if (!plan.cuda && plan.compute_sharing) sharing = measure_compute_sharing(*groups.world, env.local_world_size);
  } catch (const c10::Error& e) {  // a collective or the rendezvous
    return failed(plan, first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return failed(plan, first_line(e.what()));
  }
  if (!lead) return train::kExitOk;

  nlohmann::ordered_json document = comm_document(
      plan, points, at::get_num_threads(), machine::environment_record(machine::capture_environment(), {plan.device_name}));
  document[ck::compute_sharing] = sharing ? to_json(*sharing) : nlohmann::ordered_json(nullptr);
  if (sharing)
    std::cerr << fmt::format("# compute sharing: one {}-thread GEMM {:.2f} ms alone, {:.2f} ms with {} rank(s) per node "
                             "computing at once ({:.2f}x)\n",
                             sharing->threads_per_rank, sharing->alone_seconds * 1e3, sharing->together_seconds * 1e3,
                             sharing->ranks_per_node, sharing->slowdown);
  if (sharing)
    std::cerr << fmt::format("# beside a collective: the GEMM {:.2f} ms while a {} MiB all-reduce runs ({:.2f} ms alone, "
                             "{:.2f} ms beside it): {:.0f}% of the compute taken, the collective at {:.2f} of its rate; "
                             "covered {} of {}\n",
                             sharing->beside.gemm_seconds * 1e3, sharing->beside.collective_bytes >> 20,
                             sharing->beside.collective_alone_seconds * 1e3,
                             sharing->beside.collective_beside_seconds * 1e3, sharing->beside.steal * 100,
                             sharing->beside.collective_rate, sharing->beside.covered_repeats, sharing->beside.repeats);
  results::write_flat_report(*plan.format, comm_table(document), std::cout, plan.output);
  std::cout << std::flush;
  if (!plan.store.empty()) {
    results::ResultStore store(plan.store);
    const int64_t id = store.save_comm_run(document);
    std::cerr << "# stored as comm benchmark " << id << " in " << plan.store.string() << "\n";
  }
  // A wrong result is an error: its row stays in every output (correct: false) for a look.
  int wrong = 0;
  for (const auto& row : document.at(ck::results))
    if (!row.at(ck::correct).get<bool>()) {
      ++wrong;
      std::cerr << "tokbench comm: error: " << row.at(ck::collective).get<std::string>() << " of "
                << row.at(ck::size_bytes).get<int64_t>() << " bytes gave a wrong result (on at least one rank)\n";
    }
  return wrong == 0 ? train::kExitOk : train::kExitError;
}

}  // namespace tokbench::comm
