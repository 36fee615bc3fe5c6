// check_fields (checks.hpp): one generic pass over the rows, each field's value checked
// against its own choices or bounds, refused with the line the row names; then each section's
// own check of its options together.
#include "config/checks.hpp"

#include "config/rows.hpp"

namespace tokbench::config {

void check_fields(const RunOptions& options) {
  check_rows(options, all_fields());
  // Then each section's checks of its options together, in --help's order of the sections.
  check_batch(options);
  check_device(options);
  check_parallelism(options);
  check_compatibility(options);
  check_diagnostics(options);
}

}  // namespace tokbench::config
