// The keys of PyTorch's memory snapshot (the pickle torch.cuda.memory._dump_snapshot writes and
// PyTorch's memory viewer reads) as memory_snapshot.cpp writes it for a CPU run; the CUDA
// snapshot is PyTorch's own. Another project's format: these are its names, spelled once here.
#pragma once

namespace tokbench::train::memory_snapshot_key {

inline constexpr char segments[] = "segments";
inline constexpr char device_traces[] = "device_traces";
// segments[] (a block's keys are among them: address, size, requested_size, frames, state)
inline constexpr char device[] = "device";
inline constexpr char address[] = "address";
inline constexpr char total_size[] = "total_size";
inline constexpr char allocated_size[] = "allocated_size";
inline constexpr char active_size[] = "active_size";
inline constexpr char requested_size[] = "requested_size";
inline constexpr char stream[] = "stream";
inline constexpr char segment_type[] = "segment_type";
inline constexpr char segment_pool_id[] = "segment_pool_id";
inline constexpr char is_expandable[] = "is_expandable";
inline constexpr char frames[] = "frames";
inline constexpr char blocks[] = "blocks";
inline constexpr char size[] = "size";
inline constexpr char state[] = "state";
// device_traces[][] (also size, stream, frames)
inline constexpr char action[] = "action";
inline constexpr char addr[] = "addr";
inline constexpr char time_us[] = "time_us";

}  // namespace tokbench::train::memory_snapshot_key
