// Exception types that mirror Python's (ValueError, RuntimeError, IndexError, AssertionError).
// what() carries Python's exact text; the source location is kept apart so parity holds.
#include "tokbench/throughput.hpp"

namespace tokbench {

ValueError::ValueError(const std::string& message, SourceLocation where)
    : std::invalid_argument(message), where_(where) {}
RuntimeError::RuntimeError(const std::string& message, SourceLocation where)
    : std::runtime_error(message), where_(where) {}
IndexError::IndexError(const std::string& message, SourceLocation where)
    : std::out_of_range(message), where_(where) {}
AssertionError::AssertionError(const std::string& message, SourceLocation where)
    : std::logic_error(message), where_(where) {}

}  // namespace tokbench
