// The keys of `tokbench comm`'s document (schema "tokbench-comm", docs/comm.md): comm writes it
// (comm_result.cpp, compute_sharing.cpp, run_comm_rank.cpp); predict (comm_measurements.cpp) and
// the result store (its comm tables, history's comm lines) read it by these. Its environment block
// is machine/environment_key's. A header of constants only, in results so that all three include it.
#pragma once

namespace tokbench::results::comm_document_key {

// The document's name and the newest version this tokbench writes and reads (not keys: the
// values of `schema` and `schema_version`, which writer and reader must agree on).
inline constexpr char schema_name[] = "tokbench-comm";
inline constexpr int schema_version_now = 1;

// The document.
inline constexpr char schema[] = "schema";
inline constexpr char schema_version[] = "schema_version";
inline constexpr char backend[] = "backend";
inline constexpr char device[] = "device";
inline constexpr char world_size[] = "world_size";
inline constexpr char nnodes[] = "nnodes";
inline constexpr char nproc_per_node[] = "nproc_per_node";
inline constexpr char threads_per_rank[] = "threads_per_rank";  // also compute_sharing's
inline constexpr char dtype[] = "dtype";
inline constexpr char iters[] = "iters";
inline constexpr char warmup_iters[] = "warmup_iters";
inline constexpr char environment[] = "environment";
inline constexpr char gloo_cpu_busy[] = "gloo_cpu_busy";
inline constexpr char compute_sharing[] = "compute_sharing";
inline constexpr char results[] = "results";

// results[]: one collective at one size.
inline constexpr char collective[] = "collective";
inline constexpr char size_bytes[] = "size_bytes";
inline constexpr char count[] = "count";
inline constexpr char time_us[] = "time_us";
inline constexpr char min_time_us[] = "min_time_us";
inline constexpr char max_time_us[] = "max_time_us";
inline constexpr char algbw_GBps[] = "algbw_GBps";
inline constexpr char busbw_GBps[] = "busbw_GBps";
inline constexpr char correct[] = "correct";
inline constexpr char cpu_busy[] = "cpu_busy";

// gloo_cpu_busy
inline constexpr char fraction[] = "fraction";
inline constexpr char ranks_per_node[] = "ranks_per_node";  // also compute_sharing's
inline constexpr char method[] = "method";

// compute_sharing
inline constexpr char gemm[] = "gemm";
inline constexpr char gemm_size[] = "gemm_size";
inline constexpr char alone_ms[] = "alone_ms";
inline constexpr char together_ms[] = "together_ms";
inline constexpr char together_gemms[] = "together_gemms";
inline constexpr char slowdown[] = "slowdown";
inline constexpr char slowdown_q1[] = "slowdown_q1";
inline constexpr char slowdown_q3[] = "slowdown_q3";
inline constexpr char beside_collective[] = "beside_collective";

// compute_sharing.beside_collective
inline constexpr char collective_bytes[] = "collective_bytes";
inline constexpr char gemm_ms[] = "gemm_ms";
inline constexpr char collective_alone_ms[] = "collective_alone_ms";
inline constexpr char collective_beside_ms[] = "collective_beside_ms";
inline constexpr char steal[] = "steal";
inline constexpr char collective_rate[] = "collective_rate";
inline constexpr char covered_repeats[] = "covered_repeats";
inline constexpr char repeats[] = "repeats";

}  // namespace tokbench::results::comm_document_key
