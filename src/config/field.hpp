// One row of an option table: everything tokbench knows about one option of `tokbench run`,
// declared once. Each section (config/model.hpp, config/batch.hpp, ...) owns a table of these;
// config/run_options.hpp derives from them the command line (CLI11 names, help, group, checks,
// the default --help shows), the record's `config` block (which the Python step also reads),
// the sweep's value types and the fields `compare` keys runs on. docs/options.md says how to add one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "usage/value_type.hpp"

namespace tokbench::config {

struct RunOptions;

// The member an option fills, by its type: the type decides the CLI11 registration (a bool is a
// flag that also takes =True/False), the parse-time check (whole or finite number) and the
// value type the sweep checks a matrix against. Owner: the struct that holds it (RunOptions
// for `tokbench run`; a section, or another command's options that reuse the section's rows,
// config/rows.hpp).
template <typename Owner>
using MemberOf = std::variant<std::string Owner::*, bool Owner::*, int Owner::*, int64_t Owner::*,
                              uint64_t Owner::*, double Owner::*, std::optional<int64_t> Owner::*,
                              std::optional<uint64_t> Owner::*, std::optional<double> Owner::*>;
using Member = MemberOf<RunOptions>;

// Where the option sits in the record's `config` block: its key and its place in the block's
// order (the order users know; a new option takes the next place, at the end). Place 0: the
// option is not in the block (the record keeps it elsewhere, or it is not the run's configuration).
struct RecordSlot {
  const char* key = nullptr;
  int place = 0;
};

// How compare reads a key field's value from a run's record.
enum class Reading {
  as_is,        // the value as text
  device_kind,  // cuda:0 and cuda:1 are one kind of device: the part before ':'
  nonzero,      // "yes" when the number is not 0: its size costs nothing, 0 saves a pass
};

// Whether the option shapes what an iteration does and how, so that `compare` pairs runs on it:
// its label in compare's key, where the record keeps the value (the run's top level, where the
// resolved value is, or the `config` block, the options as given), its place in the key's order
// (the reference's columns first), and what a record without the key ran with. Place 0: it
// shapes nothing (seed, learning rate, iteration counts, output switches...).
struct IterationKey {
  const char* label = nullptr;  // nullptr: the record key is the label (compare prints `dtype=...`)
  const char* record_key = nullptr;
  bool in_config = false;  // false: the record's top level
  int place = 0;
  // "none" unless the key records a switch that records from before it could not turn on:
  // those ran with it off, and pair with records that say off ("no").
  const char* absent = "none";
  Reading reading = Reading::as_is;
  // The heading compare prints: the label where a row gives one, else the record key.
  const char* heading() const { return label != nullptr ? label : record_key; }
};

// The words a text option takes, from the layer that owns them (parallel::mode_words()) or
// listed in the row; nullptr: any text (a path, a name another layer looks up).
using Choices = std::vector<std::string> (*)();

// The value check of a number, done by check_fields before anything resolves (the parse-time
// check only makes sure it is a number). A value outside is refused with one line,
// "OPTION VALUE <refusal>" (exit 2); an unset optional is not checked.
struct Bounds {
  // A whole number <= 0 is refused first with "OPTION VALUE must be a positive integer".
  bool positive = false;
  std::optional<double> min, max;
  bool min_open = false, max_open = false;  // (min, ...] / [..., max)
  bool whole = false;                       // a double that must name a whole number
  // What follows "OPTION VALUE " when the value is below min, above max, not whole or (with a
  // refusal) not finite.
  std::string refusal;
};

template <typename Owner>
struct FieldOf {
  // CLI11 names: "--kebab,--snake" (the reference's spelling as the alias); a flag may add
  // "!--no-x" for its negation.
  const char* names;
  MemberOf<Owner> member;
  const char* help;
  // The --help heading; nullptr keeps CLI11's default heading.
  const char* group;
  // Non-null: `tokbench predict` models this option (it takes it as the target run's, with this
  // help, predict/target_options.cpp); nullptr: a prediction refuses it by name. Only the
  // launcher, parallelism, batch and device sections' rows may set it (the sections a prediction's
  // target is made of); tests/predict checks that no other row does.
  const char* predict_help = nullptr;
  // For a number: the "valid:" part of its one-line refusal (config/numbers.hpp). Numbers must
  // have one; text and flags have none (their words are checked by the layer that reads them).
  std::string valid;
  // For a word option: the words it takes; any other is refused with require_choice's line,
  // "OPTION 'VALUE' is not valid; valid: A, B" (exit 2). Its help should name every one.
  Choices choices = nullptr;
  bool empty_is_default = false;  // "" is not refused: the layer that reads it picks the default
  // For a number: its bounds (none: any value the parse accepts).
  Bounds bounds;
  RecordSlot record;
  IterationKey shapes;
  // Set to true when the option is given on the command line (a default that depends on
  // whether the user chose it); nullptr for none.
  bool Owner::*given = nullptr;
  // For an optional: the field whose value it takes when not given (--data-seed: --seed), filled
  // by with_defaults (run_options.hpp) so that nothing downstream defaults it again. Its value
  // type must be the optional's.
  std::optional<MemberOf<Owner>> defaults_to;
  // A check that needs other options (a mode the option cannot run with): returns the one-line
  // refusal (exit 2) or "" when the value may run; check_fields runs it after the row's own checks.
  std::string (*refuse_with)(const Owner&) = nullptr;
};
// A row of `tokbench run`'s options (most sections' tables are of these: their members convert
// to RunOptions', which inherits every section).
using Field = FieldOf<RunOptions>;

// A value the record carries beside the options that no option sets directly: a place the run
// fills in the `config` block, or a derived value (world size, gradient accumulation) that
// shapes an iteration.
struct DerivedValue {
  RecordSlot record;
  IterationKey shapes;
};

// The value type of a field's member, as usage::ValueType.
usage::ValueType value_type(const Member& member);

}  // namespace tokbench::config
