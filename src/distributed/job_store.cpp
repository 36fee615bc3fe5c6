// The job's store for child-process ranks (job_store.hpp).
#include "distributed/job_store.hpp"

#include "distributed/process_groups.hpp"
#include "distributed/rank_results.hpp"

namespace tokbench::distributed {

struct JobStore::Impl {
  machine::DistEnv env;
  c10::intrusive_ptr<c10d::Store> store;
};

JobStore::JobStore(const machine::DistEnv& env, std::chrono::milliseconds timeout) : impl_(std::make_unique<Impl>()) {
  impl_->env = env;
  impl_->store = connect_job_store(env, timeout);
}

JobStore::~JobStore() = default;

StoreAddress JobStore::child_address(const std::string& space) const {
  StoreAddress a;
  a.host = impl_->env.master_addr;
  a.port = impl_->env.master_port;
  if (impl_->env.use_agent_store) a.prefixes.push_back(impl_->env.agent_store_prefix);
  a.prefixes.push_back(space);
  return a;
}

std::vector<RankRecord> JobStore::exchange(const RankRecord& mine, int64_t world_size,
                                           std::chrono::milliseconds timeout) {
  return exchange_rank_records(*impl_->store, mine, world_size, timeout);
}

}  // namespace tokbench::distributed
