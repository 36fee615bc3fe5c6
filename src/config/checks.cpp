// check_fields (checks.hpp): one generic pass over the rows, each field's value checked
// against its own choices or bounds, refused with the line the row names.
#include "config/checks.hpp"

#include "config/rows.hpp"

namespace tokbench::config {

void check_fields(const RunOptions& options) { check_rows(options, all_fields()); }

}  // namespace tokbench::config
