// The data section's option table (data.hpp).
#include "config/data.hpp"

#include <fmt/format.h>

#include <limits>

#include "config/row_record_keys.hpp"
#include "config/run_options.hpp"

namespace tokbench::config {

const std::vector<Field>& data_fields() {
  static const std::vector<Field> fields{
      {.names = "--data",
       .member = &DataSection::data,
       .help = "random (ids 0..99, as the reference) or a .bin file of tokens (memory-mapped)",
       .group = "Training",
       .record = {config_key::data, 2},
       .shapes = {.record_key = config_key::data, .in_config = true, .place = 16}},
      {.names = "--data-dtype,--data_dtype",
       .member = &DataSection::data_dtype,
       .help = "token type of a --data file: uint16 | uint32",
       .group = "Training",
       .choices = [] { return std::vector<std::string>{"uint16", "uint32"}; },
       .record = {config_key::data_dtype, 3},
       .shapes = {.record_key = config_key::data_dtype, .in_config = true, .place = 17}},
      {.names = "--data-seed,--data_seed",
       .member = &DataSection::data_seed,
       .help = "seed of the tokens (random ids, a --data file's windows) and of --dynamic's lengths; the initial "
               "weights keep --seed (default: --seed)",
       .group = "Training",
       .valid = fmt::format("a whole number 0..{}", std::numeric_limits<uint64_t>::max()),
       .record = {config_key::data_seed, 43},
       .shapes = {.record_key = config_key::data_seed, .in_config = true, .place = 30},
       .defaults_to = &TrainingSection::seed},
  };
  return fields;
}

}  // namespace tokbench::config
