// TB_CHECK: the user-error check of the dependency-free throughput library (docs/throughput.md,
// "Semantics (as Lightning)": exceptions).
// The message expression is evaluated only on failure, so building Python-identical texts
// costs nothing on the hot path; the throw site's file:line travels in the exception's where().
#pragma once

#include "tokbench/throughput.hpp"

#define TB_CHECK(condition, ErrorType, message)                                  \
  do {                                                                           \
    if (!(condition)) [[unlikely]] {                                             \
      throw ErrorType((message), ::tokbench::SourceLocation{__FILE__, __LINE__}); \
    }                                                                            \
  } while (0)
