// Reading the launcher's environment (dist_env.hpp).
#include "distributed/dist_env.hpp"

#include <cstdlib>
#include <stdexcept>

namespace tokbench::dist {
namespace {

[[noreturn]] void bad(const std::string& name, const std::string& value, const std::string& valid) {
  throw std::invalid_argument("environment variable " + name + " '" + value + "' is not valid; " + valid);
}

int64_t parse_count(const std::string& name, const std::string& value, int64_t min_value) {
  std::size_t used = 0;
  int64_t n = 0;
  try {
    n = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || n < min_value || n > (int64_t{1} << 24))
    bad(name, value, "valid: an integer from " + std::to_string(min_value) + " to 16777216");
  return n;
}

std::optional<int64_t> count_of(const EnvLookup& env, const std::string& name, int64_t min_value) {
  auto value = env(name);
  if (!value) return std::nullopt;
  return parse_count(name, *value, min_value);
}

void require_rank_in_world(const std::string& name, int64_t rank, int64_t world, const std::string& world_name) {
  if (rank >= world)
    bad(name, std::to_string(rank), "valid: 0.." + std::to_string(world - 1) + " (" + world_name + " is " +
                                        std::to_string(world) + ")");
}

void read_master(const EnvLookup& env, DistEnv& d, const std::string& default_addr) {
  d.master_addr = env("MASTER_ADDR").value_or(default_addr);
  if (d.master_addr.empty()) bad("MASTER_ADDR", "", "valid: a host name or address");
  if (auto port = env("MASTER_PORT")) {
    const auto digits = port->find_first_not_of("0123456789");
    if (port->empty() || port->size() > 5 || digits != std::string::npos || std::stoi(*port) < 1 ||
        std::stoi(*port) > 65535)
      bad("MASTER_PORT", *port, "valid: a port 1..65535 that rank 0's store listens on");
    d.master_port = std::stoi(*port);
  }
}

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::string first_slurm_host(const std::string& node_list) {
  // Hosts are comma-separated, but commas inside [...] separate ranges of one prefix.
  const std::size_t bracket = node_list.find('[');
  const std::size_t comma = node_list.find(',');
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket))
    return node_list.substr(0, comma);
  const std::string prefix = node_list.substr(0, bracket);
  const std::size_t end = node_list.find_first_of(",-]", bracket + 1);
  return prefix + node_list.substr(bracket + 1, end - bracket - 1);
}

DistEnv read_dist_env(const EnvLookup& env) {
  DistEnv d;
  if (env("WORLD_SIZE") || env("RANK")) {
    // tokbench's own launcher sets torchrun's variables, and says so.
    d.source = env("TOKBENCH_LAUNCHED") ? "tokbench" : "torchrun";
    d.world_size = count_of(env, "WORLD_SIZE", 1).value_or(1);
    d.rank = count_of(env, "RANK", 0).value_or(0);
    require_rank_in_world("RANK", d.rank, d.world_size, "WORLD_SIZE");
    d.local_rank = count_of(env, "LOCAL_RANK", 0).value_or(d.rank);
    d.local_world_size = count_of(env, "LOCAL_WORLD_SIZE", 1).value_or(d.world_size);
    require_rank_in_world("LOCAL_RANK", d.local_rank, d.local_world_size, "LOCAL_WORLD_SIZE");
    read_master(env, d, "127.0.0.1");
    if (env("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True") {
      d.use_agent_store = true;
      d.agent_store_prefix = "/worker/attempt_" + env("TORCHELASTIC_RESTART_COUNT").value_or("0");
    }
  } else if (env("SLURM_PROCID") && env("SLURM_NTASKS")) {
    d.source = "slurm";
    d.world_size = *count_of(env, "SLURM_NTASKS", 1);
    d.rank = *count_of(env, "SLURM_PROCID", 0);
    require_rank_in_world("SLURM_PROCID", d.rank, d.world_size, "SLURM_NTASKS");
    d.local_rank = count_of(env, "SLURM_LOCALID", 0).value_or(0);
    // SLURM_NTASKS_PER_NODE is set only when asked for; SLURM_TASKS_PER_NODE ("4(x2)") always.
    if (auto per_node = env("SLURM_NTASKS_PER_NODE")) {
      d.local_world_size = parse_count("SLURM_NTASKS_PER_NODE", *per_node, 1);
    } else if (auto tasks = env("SLURM_TASKS_PER_NODE")) {
      d.local_world_size = parse_count("SLURM_TASKS_PER_NODE", tasks->substr(0, tasks->find_first_of("(,")), 1);
    } else {
      d.local_world_size = d.world_size;
    }
    const std::string nodes = env("SLURM_JOB_NODELIST").value_or(env("SLURM_NODELIST").value_or("127.0.0.1"));
    read_master(env, d, first_slurm_host(nodes));
  } else if (env("OMPI_COMM_WORLD_SIZE")) {
    d.source = "mpi";
    d.world_size = *count_of(env, "OMPI_COMM_WORLD_SIZE", 1);
    d.rank = count_of(env, "OMPI_COMM_WORLD_RANK", 0).value_or(0);
    require_rank_in_world("OMPI_COMM_WORLD_RANK", d.rank, d.world_size, "OMPI_COMM_WORLD_SIZE");
    d.local_rank = count_of(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0).value_or(0);
    d.local_world_size = count_of(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1).value_or(d.world_size);
    read_master(env, d, "127.0.0.1");
  }
  return d;
}

}  // namespace tokbench::dist

// --- dist_settings.hpp --------------------------------------------------------------------
#include "distributed/dist_settings.hpp"

namespace tokbench::dist {

const char* to_string(DistMode mode) {
  switch (mode) {
    case DistMode::none: return "none";
    case DistMode::ddp: return "ddp";
    case DistMode::fsdp: return "fsdp";
  }
  return "none";
}

const char* to_string(ShardMode mode) { return mode == ShardMode::zero3 ? "zero3" : "zero2"; }

const char* to_string(UnitPolicy units) {
  switch (units) {
    case UnitPolicy::whole_model: return "none";
    case UnitPolicy::per_block: return "block";
    case UnitPolicy::per_layer: return "layer";
  }
  return "none";
}

std::string shard_mode_label(const DistributedSettings& s) {
  return std::string(s.hybrid() ? "hybrid_" : "") + to_string(s.shard_mode);
}

std::string distributed_mode_label(const DistributedSettings& s) {
  if (s.mode != DistMode::fsdp) return to_string(s.mode);
  return "fsdp_" + shard_mode_label(s) + "_" + to_string(s.units) + "_bucketing";
}

}  // namespace tokbench::dist
