// The tables of tokbench's SQLite result store (results/result_store.cpp, docs/sweep.md): the
// store tells its own database from another program's by them. Their columns are the SQL
// statements' (result_store.cpp). A header of constants only.
#pragma once

namespace tokbench::results::store_table {

inline constexpr char runs[] = "runs";
inline constexpr char iterations[] = "iterations";  // one row per measured iteration of a run
inline constexpr char sweeps[] = "sweeps";
inline constexpr char comm_runs[] = "comm_runs";
inline constexpr char comm_results[] = "comm_results";

}  // namespace tokbench::results::store_table
