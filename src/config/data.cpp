// The data section's option table (data.hpp).
#include "config/data.hpp"

#include "config/run_options.hpp"

namespace tokbench::config {

const std::vector<Field>& data_fields() {
  static const std::vector<Field> fields{
      {.names = "--data",
       .member = &DataSection::data,
       .help = "random (ids 0..99, as the reference) or a .bin file of tokens (memory-mapped)",
       .group = "Training",
       .record = {"data", 2},
       .shapes = {.label = "data", .record_key = "data", .in_config = true, .place = 16}},
      {.names = "--data-dtype,--data_dtype",
       .member = &DataSection::data_dtype,
       .help = "token type of a --data file: uint16 | uint32",
       .group = "Training",
       .record = {"data_dtype", 3},
       .shapes = {.label = "data_dtype", .record_key = "data_dtype", .in_config = true, .place = 17}},
  };
  return fields;
}

}  // namespace tokbench::config
