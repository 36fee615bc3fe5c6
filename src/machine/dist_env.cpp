// Reading the launcher's environment (dist_env.hpp).
#include "machine/dist_env.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace tokbench::machine {
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
  // The first host expression ends at the first comma outside brackets; in it each bracket
  // group ("[003-005,9]") stands for its first entry, the text around the groups is kept:
  // "gpu[1-2]-ib" -> "gpu1-ib", "r[1-2]n[07,9]" -> "r1n07".
  std::string host;
  std::size_t i = 0;
  while (i < node_list.size() && node_list[i] != ',') {
    if (node_list[i] != '[') {
      host += node_list[i++];
      continue;
    }
    const std::size_t close = node_list.find(']', i);
    if (close == std::string::npos) return host + node_list.substr(i);  // malformed: keep it for the error
    const std::string group = node_list.substr(i + 1, close - i - 1);
    host += group.substr(0, group.find_first_of(",-"));
    i = close + 1;
  }
  return host;
}

std::string slurm_master_host(const std::string& node_list) {
  // Slurm's own expansion when scontrol is there (it knows every syntax Slurm accepts), else
  // the parser above. No shell: the list is an argument of its own.
  int out[2];
  if (::pipe(out) == 0) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      const int null_fd = ::open("/dev/null", O_WRONLY);
      if (null_fd >= 0) ::dup2(null_fd, STDERR_FILENO);
      ::close(out[0]);
      ::execlp("scontrol", "scontrol", "show", "hostnames", node_list.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(out[1]);
    std::string text;
    if (pid > 0) {
      char buffer[4096];
      for (ssize_t n; (n = ::read(out[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
      }
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      ::close(out[0]);
      const std::string first = text.substr(0, text.find('\n'));
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !first.empty()) return first;
    } else {
      ::close(out[0]);
    }
  }
  return first_slurm_host(node_list);
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
    if (d.source == "tokbench" && d.rank == 0)
      d.store_listen_fd = static_cast<int>(count_of(env, "TOKBENCH_STORE_LISTEN_FD", 0).value_or(-1));
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
    d.gpus_bound_per_task = env("SLURM_GPUS_PER_TASK").has_value();
    const std::string nodes = env("SLURM_JOB_NODELIST").value_or(env("SLURM_NODELIST").value_or("127.0.0.1"));
    read_master(env, d, env("MASTER_ADDR") ? "" : slurm_master_host(nodes));
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

}  // namespace tokbench::machine
