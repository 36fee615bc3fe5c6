// The keys of the message each rank sends rank 0 at the end of a run (a RankRecord as JSON,
// rank_record.cpp writes and reads it; rank_results.cpp carries it through the job's store):
// the rank's ending and figures, its memory breakdown and its time account's profiled pass.
#pragma once

namespace tokbench::distributed::rank_message_key {

inline constexpr char rank[] = "rank";
inline constexpr char status[] = "status";
inline constexpr char message[] = "message";
inline constexpr char host[] = "host";
inline constexpr char measured_iters[] = "measured_iters";
inline constexpr char window_seconds[] = "window_seconds";
inline constexpr char exposed_comm_seconds[] = "exposed_comm_seconds";  // also the pass's
inline constexpr char allocated_peak_bytes[] = "allocated_peak_bytes";
inline constexpr char reserved_peak_bytes[] = "reserved_peak_bytes";
inline constexpr char peak_rss_bytes[] = "peak_rss_bytes";
inline constexpr char kernels[] = "kernels";
inline constexpr char memory_breakdown[] = "memory_breakdown";
inline constexpr char time_account[] = "time_account";
inline constexpr char time_account_message[] = "time_account_message";
// memory_breakdown (bytes)
inline constexpr char parameters[] = "parameters";
inline constexpr char gradients[] = "gradients";
inline constexpr char optimizer_state[] = "optimizer_state";
inline constexpr char activations[] = "activations";
inline constexpr char comm_buffers[] = "comm_buffers";
inline constexpr char allocator_reserve[] = "allocator_reserve";
// time_account: the profiled pass as measured (its `device` holds the time account's device figures)
inline constexpr char source[] = "source";
inline constexpr char device[] = "device";
inline constexpr char iterations[] = "iterations";
inline constexpr char seconds[] = "seconds";
inline constexpr char range_seconds[] = "range_seconds";
inline constexpr char gemm_flops[] = "gemm_flops";
inline constexpr char attention_flops[] = "attention_flops";
inline constexpr char uncounted_matmuls[] = "uncounted_matmuls";
inline constexpr char events[] = "events";
inline constexpr char other_by_name[] = "other_by_name";
inline constexpr char clock_seconds[] = "clock_seconds";
inline constexpr char exposed_comm_source[] = "exposed_comm_source";
inline constexpr char comm_in_flight_seconds[] = "comm_in_flight_seconds";
inline constexpr char exposed_comm_gap_seconds[] = "exposed_comm_gap_seconds";

}  // namespace tokbench::distributed::rank_message_key
