// A sweep's matrix: `tokbench run` options, each with one value or a list of values (an
// axis), expanded into configurations in a stable order (axes in the order they were given,
// the last varying fastest). From a TOML file (every key a run option, a list value an axis)
// and/or from the command line (`--micro-batch-size 1,2`); the command line wins per key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "usage/value_type.hpp"

namespace tokbench::sweep {

// The type of value a run option takes (usage/value_type.hpp), from the run's own option table
// (the sweep command passes config::option_type, config/run_options.hpp). It throws
// std::invalid_argument for a name that is no run option. Empty: neither names nor types are
// checked (the readers' own tests).
using OptionTypeOf = std::function<usage::ValueType(const std::string& option)>;

struct Axis {
  std::string option;               // kebab-case run option without dashes: "micro-batch-size"
  std::vector<std::string> values;  // one value: a fixed option; several: an axis
};

struct Matrix {
  std::vector<Axis> axes;
};

// One point of the matrix: option -> value, in axis order.
struct Configuration {
  std::vector<std::pair<std::string, std::string>> options;
  std::string id;  // stable short hash of the options: names the result file, resumes the sweep

  // `--option value` pairs for `tokbench run` (a value "true"/"false" of a flag becomes
  // `--option=True/False`, the form run accepts for every boolean).
  std::vector<std::string> run_arguments() const;
  std::string value_of(const std::string& option, const std::string& fallback = "") const;
  // The option a row of config's tables registers, by the row's CLI11 names ("--compile,--executor"):
  // its value under the first of those names this configuration gives, or `fallback`.
  std::string value_of_row(const std::string& names, const std::string& fallback = "") const;
  std::string describe() const;  // "model-name=pythia-14m seq-len=128 ..." for progress lines
};

// Normalises an option name: strips leading dashes, snake_case -> kebab-case.
std::string canonical_option(const std::string& name);

// Parses `--name value`, `--name=value` and bare `--flag` arguments; a value with commas is
// an axis. Throws std::invalid_argument naming the argument it cannot read.
Matrix matrix_from_arguments(const std::vector<std::string>& args);

// Reads a TOML matrix file; throws std::invalid_argument naming the file and the key. Top-level
// keys are one matrix; a `[[matrix]]` array of tables gives several, each over the top-level
// keys (its own keys win), expanded one after another (e.g. the main grid, then a deliberate
// out-of-memory case). With `type_of`, every key must be a run option and each of its values of
// the option's type, as TOML types it: a whole number an integer (not 1.5, not "2"), a number an
// integer or a finite float, a flag true or false, text a string; else one line naming the file,
// the key and the value.
std::vector<Matrix> matrices_from_toml(const std::filesystem::path& file, const OptionTypeOf& type_of = {});

// `overrides` replaces keys of `base` (keeping base's order), and appends new ones.
Matrix merge(const Matrix& base, const Matrix& overrides);

// The matrices of a sweep as `tokbench sweep` assembles them: the TOML file's (none given: one
// empty matrix), each with the command line's axes merged over it. Refuses, naming where the key
// came from (the file or the command line), the options the sweep sets for each run
// (json-path, return-metrics-as-json, quiet), and checks every option name and value with
// `type_of` (the file's values by their TOML types, as matrices_from_toml; the command line's as
// text: `--micro-batch-size 1.5` is refused like the file's 1.5).
std::vector<Matrix> sweep_matrices(const std::filesystem::path& matrix_file, const std::vector<std::string>& run_options,
                                   const OptionTypeOf& type_of = {});

// The bound on one sweep's configurations (docs/sweep.md): a typo must not start a million runs,
// and a sweep of more is better split into several anyway.
inline constexpr std::size_t kMaxConfigurations = 10000;

// The product of the axes' lengths, or nullopt when it does not fit a size_t.
std::optional<std::size_t> configuration_count(const Matrix& matrix);

// Every configuration, in the stable order; refuses more than `limit`, counted from the axes
// before any is built (one line naming the axes and the count).
std::vector<Configuration> expand(const Matrix& matrix, std::size_t limit = kMaxConfigurations);

// A configuration of these options, its id computed as the matrix's points' are.
Configuration make_configuration(std::vector<std::pair<std::string, std::string>> options);

// The one-rank run a multi-rank configuration's prediction starts from (`sweep --predict`): the
// same options on one rank (nproc-per-node and nnodes 1 where given), the global batch divided
// by the ranks so the gradient accumulation stays, the distributed options dropped as
// expand_all drops them, so a one-rank row the matrix holds already is the same configuration.
// nullopt for a one-rank configuration, and for one whose ranks or global batch `tokbench run`
// would refuse (not numbers, or a batch the ranks do not divide).
std::optional<Configuration> one_rank_source(const Configuration& config);

// The configurations of several matrices, one after another, each once (by id). A point with
// one rank runs without a distributed mode, as the reference's matrix runs its one-GPU rows:
// `distributed-mode`, `shard-mode`, `bucketing-mode`, `sharding-size` and `fsdp-bucket-params` are
// dropped there.
std::vector<Configuration> expand_all(const std::vector<Matrix>& matrices, std::size_t limit = kMaxConfigurations);

}  // namespace tokbench::sweep
