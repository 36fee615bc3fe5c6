// The CPU memory snapshot (memory_snapshot.hpp), pickled with LibTorch's own pickler, the one
// PyTorch's CUDA snapshot goes through as well.
#include "train/memory_snapshot.hpp"

#include <torch/csrc/jit/serialization/pickler.h>

#include <string>

#include "train/memory_snapshot_keys.hpp"

namespace tokbench::train {
namespace {

namespace msk = memory_snapshot_key;

using Dict = c10::Dict<c10::IValue, c10::IValue>;
using List = c10::impl::GenericList;

// Blocks of 1 MiB and more come from CUDA's large pool; the viewer names segments by pool.
constexpr int64_t kLargeBlock = 1 << 20;

List no_frames() { return List(c10::AnyType::get()); }

Dict segment_of(const CounterBlock& block) {
  Dict b(c10::StringType::get(), c10::AnyType::get());
  b.insert(msk::address, static_cast<int64_t>(block.address));
  b.insert(msk::size, block.bytes);
  b.insert(msk::requested_size, block.bytes);
  b.insert(msk::state, "active_allocated");
  b.insert(msk::frames, no_frames());
  List blocks(c10::AnyType::get());
  blocks.push_back(b);
  Dict s(c10::StringType::get(), c10::AnyType::get());
  s.insert(msk::device, int64_t{0});
  s.insert(msk::address, static_cast<int64_t>(block.address));
  s.insert(msk::total_size, block.bytes);
  s.insert(msk::allocated_size, block.bytes);
  s.insert(msk::active_size, block.bytes);
  s.insert(msk::requested_size, block.bytes);
  s.insert(msk::stream, int64_t{0});
  s.insert(msk::segment_type, block.bytes >= kLargeBlock ? "large" : "small");
  s.insert(msk::segment_pool_id, c10::ivalue::Tuple::create({int64_t{0}, int64_t{0}}));
  s.insert(msk::is_expandable, false);
  s.insert(msk::frames, no_frames());
  s.insert(msk::blocks, blocks);
  return s;
}

Dict trace_entry(const char* action, const CounterEvent& e) {
  Dict d(c10::StringType::get(), c10::AnyType::get());
  d.insert(msk::action, action);
  d.insert(msk::addr, static_cast<int64_t>(e.address));
  d.insert(msk::size, e.bytes);
  d.insert(msk::stream, int64_t{0});
  d.insert(msk::time_us, e.time_us);
  d.insert(msk::frames, no_frames());
  return d;
}

}  // namespace

std::string cpu_memory_snapshot_pickled(const std::vector<CounterEvent>& events,
                                        const std::vector<CounterBlock>& live_blocks) {
  List segments(c10::AnyType::get());
  for (const CounterBlock& block : live_blocks) segments.push_back(segment_of(block));
  List trace(c10::AnyType::get());
  for (const CounterEvent& e : events) {
    if (e.action == CounterEvent::Action::alloc) {
      trace.push_back(trace_entry("alloc", e));
    } else {  // a CPU free completes at once: CUDA's two steps at the same moment
      trace.push_back(trace_entry("free_requested", e));
      trace.push_back(trace_entry("free_completed", e));
    }
  }
  List device_traces(c10::AnyType::get());
  device_traces.push_back(trace);
  Dict snapshot(c10::StringType::get(), c10::AnyType::get());
  snapshot.insert(msk::segments, segments);
  snapshot.insert(msk::device_traces, device_traces);
  // A plain pickle, as PyTorch writes its CUDA snapshot (torch::pickle_save would add the
  // persistent ids of torch.load's format, which pickle.load cannot read).
  std::string bytes;
  {
    torch::jit::Pickler pickler([&bytes](const char* data, size_t size) { bytes.append(data, size); });
    pickler.protocol();
    pickler.pushIValue(snapshot);
    pickler.stop();
  }
  return bytes;
}

}  // namespace tokbench::train
