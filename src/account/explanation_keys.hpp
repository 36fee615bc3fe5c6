// The keys of the explanation's JSON (`tokbench explain --json`, and each row of a sweep's
// explanations) and the headings of its text table: explanation.cpp writes both; tests and
// scripts read them. The category names and labels are category.cpp's table.
#pragma once

namespace tokbench::account::explanation_key {

inline constexpr char base[] = "base";
inline constexpr char run[] = "run";
inline constexpr char iteration_ms[] = "iteration_ms";
inline constexpr char categories[] = "categories";
inline constexpr char sentence[] = "sentence";
// iteration_ms
inline constexpr char difference[] = "difference";  // also the text table's column
// categories.<name>
inline constexpr char base_ms[] = "base_ms";
inline constexpr char run_ms[] = "run_ms";
inline constexpr char difference_ms[] = "difference_ms";
// the text table's headings (its column of differences is `difference`)
inline constexpr char category_heading[] = "category (ms per iteration)";
inline constexpr char iteration_row[] = "iteration";

}  // namespace tokbench::account::explanation_key
