// A sweep row's options as a prediction's target (target_from_run_options.hpp).
#include "predict/target_from_run_options.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace tokbench::predict {
namespace {

int64_t whole(const std::string& option, const std::string& value) {
  try {
    std::size_t used = 0;
    const long long n = std::stoll(value, &used);
    if (used == value.size()) return n;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(fmt::format("--{} '{}' is not a whole number", option, value));
}

double number(const std::string& option, const std::string& value) {
  try {
    std::size_t used = 0;
    const double x = std::stod(value, &used);
    if (used == value.size()) return x;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(fmt::format("--{} '{}' is not a number", option, value));
}

}  // namespace

TargetOptions target_from_run_options(const std::vector<std::pair<std::string, std::string>>& options) {
  TargetOptions t;
  for (const auto& [option, value] : options) {
    if (option == "nproc-per-node") t.nproc_per_node = whole(option, value);
    else if (option == "nnodes") t.nnodes = whole(option, value);
    else if (option == "distributed-mode") t.distributed_mode = value;
    else if (option == "shard-mode") t.shard_mode = value;
    else if (option == "bucketing-mode") t.bucketing_mode = value;
    else if (option == "sharding-size") t.sharding_size = whole(option, value);
    else if (option == "global-batch-size") t.global_batch_size = whole(option, value);
    else if (option == "micro-batch-size") t.micro_batch_size = whole(option, value);
    else if (option == "ddp-bucket-size") t.ddp_bucket_size_mb = number(option, value);
    else if (option == "fsdp-bucket-params") t.fsdp_bucket_params = number(option, value);
    else if (option == "num-threads") t.num_threads = whole(option, value);
  }
  // The run ignores the threshold (with a warning) unless its units are cut by size: so does
  // its prediction, which would otherwise refuse it.
  if (t.bucketing_mode != "size") t.fsdp_bucket_params.reset();
  // A row that does not name a rank count runs on one node's one rank, as `tokbench run` does.
  if (!t.nnodes) t.nnodes = 1;
  if (!t.nproc_per_node) t.nproc_per_node = 1;
  return t;
}

}  // namespace tokbench::predict
