// Rendezvous and process-group creation (process_groups.hpp).
#include "distributed/process_groups.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <ATen/ops/zeros.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace tokbench::distributed {
namespace {

bool is_loopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

// A listening socket on 127.0.0.1:port, handed to the TCPStore server, so that a one-node
// job's store is not reachable from other machines (TCPStore alone binds every interface).
int listen_on_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("cannot create the store's socket: " + std::string(std::strerror(errno)));
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 1024) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("cannot listen on 127.0.0.1:" + std::to_string(port) + " for the store (MASTER_PORT): " +
                             why);
  }
  return fd;
}

c10::intrusive_ptr<c10d::Backend> make_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                               const GroupOptions& o) {
  if (o.backend == CommBackend::nccl) return make_nccl_backend(store, rank, size, o.timeout);
  auto gloo = c10d::ProcessGroupGloo::Options::create(o.timeout);
  gloo->devices.push_back(is_loopback(o.env.master_addr)
                              ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                              : c10d::ProcessGroupGloo::createDefaultDevice());
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, gloo);
}

// c10d's flight recorder (a process-wide log of every collective, with a traceback gathered for
// each) inserts a process group's first entry into its map before taking its lock in torch
// 2.11 (FlightRecorder::recordWithResetEnabled): two process groups recording their first
// collectives at once can corrupt the map. That happens with ranks as threads (tests), and on
// CUDA where a gradient hook's thread and the main thread drive different groups (hybrid
// sharding). It is off unless the user asks for it (TORCH_FR_BUFFER_SIZE set): it also costs a
// traceback per collective inside the timed iterations. Read once, at its first use.
void disable_flight_recorder_unless_asked() {
  static std::once_flag once;
  std::call_once(once, [] { ::setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/0); });
}

}  // namespace

c10::intrusive_ptr<c10d::Store> connect_job_store(const machine::DistEnv& env, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<uint16_t>(env.master_port);
  store_options.isServer = env.rank == 0 && !env.use_agent_store;
  store_options.numWorkers = static_cast<std::size_t>(env.world_size);
  store_options.timeout = timeout;
  if (store_options.isServer && env.store_listen_fd >= 0)
    store_options.masterListenFd = env.store_listen_fd;  // the launcher's socket, listening since before the ranks
  else if (store_options.isServer && is_loopback(env.master_addr))
    store_options.masterListenFd = listen_on_loopback(env.master_port);
  c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  if (env.use_agent_store) store = c10::make_intrusive<c10d::PrefixStore>(env.agent_store_prefix, store);
  return store;
}

ProcessGroups create_process_groups(const GroupOptions& o) {
  disable_flight_recorder_unless_asked();
  ProcessGroups g;
  g.rank = o.env.rank;
  g.world_size = o.env.world_size;
  g.store = connect_job_store(o.env, o.timeout);

  const int rank = static_cast<int>(g.rank);
  const int world = static_cast<int>(g.world_size);
  g.world = make_backend(c10::make_intrusive<c10d::PrefixStore>("world", g.store), rank, world, o);
  g.shard = g.world;
  g.shard_size = g.world_size;
  g.shard_rank = g.rank;
  if (o.shard_group_size && *o.shard_group_size < g.world_size) {
    const int64_t s = *o.shard_group_size;
    const int64_t shard_index = g.rank / s;    // which group of s consecutive ranks
    const int64_t replica_index = g.rank % s;  // position inside it: ranks sharing a shard
    g.shard_size = s;
    g.shard_rank = replica_index;
    g.shard = make_backend(c10::make_intrusive<c10d::PrefixStore>("shard/" + std::to_string(shard_index), g.store),
                           static_cast<int>(replica_index), static_cast<int>(s), o);
    g.replicate = make_backend(
        c10::make_intrusive<c10d::PrefixStore>("replicate/" + std::to_string(replica_index), g.store),
        static_cast<int>(shard_index), static_cast<int>(g.world_size / s), o);
  }
  return g;
}

void barrier(c10d::Backend& backend, const c10::Device& device) {
  std::vector<at::Tensor> one{at::zeros({1}, at::TensorOptions().device(device))};
  backend.allreduce(one)->wait();
}

}  // namespace tokbench::distributed
