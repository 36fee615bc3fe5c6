// The keys of one row of a table's explanations in JSON (`tokbench sweep --explain-against` in a JSON
// format; results/table_explanations.cpp writes them): the row, the executor its runs were
// explained against, and the explanation or why there is none. A header of constants only.
#pragma once

namespace tokbench::results::explained_row_key {

inline constexpr char configuration[] = "configuration";
inline constexpr char executor[] = "executor";
inline constexpr char explanation[] = "explanation";
inline constexpr char unavailable[] = "unavailable";

}  // namespace tokbench::results::explained_row_key
