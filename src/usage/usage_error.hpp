// Usage errors: bad input is refused with one line that names the option, the value and what
// is valid, thrown as std::invalid_argument, which every command maps to exit code 2 before
// any work starts. The one home of that rule for `run`, `comm` and `predict`. Standard library
// and fmt only, so every layer may use it.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace tokbench::usage {

[[noreturn]] void refuse(const std::string& line);

// `value` as it may be printed in that line: control characters become '?', so a value cannot
// break the line in two or move the terminal's cursor.
std::string printable(std::string_view value);

// Refuses `value` unless it is one of `valid`: "OPTION 'VALUE' is not valid[WHY]; valid: A, B", with
// " (did you mean 'A'?)" before the ';' when VALUE is a likely typo of A (likely_meant.hpp).
void require_choice(std::string_view option, const std::string& value, const std::vector<std::string>& valid,
                    std::string_view why = "");
void require_choice(std::string_view option, const std::string& value, std::initializer_list<const char*> valid,
                    std::string_view why = "");

}  // namespace tokbench::usage
