// The type of value an option takes, as the parser that owns the option declares it (for
// `tokbench run`, its option table; config/run_options.hpp's option_type reads it there), so
// a reader of another syntax — a sweep's TOML matrix or its command line — refuses a value of the
// wrong type in one line before anything runs, without a second list of which option takes what.
// Standard library only, so every layer may use it.
#pragma once

#include <string_view>

namespace tokbench::usage {

enum class ValueType {
  text,          // any string (a model name, a path, a word the run checks later)
  whole_number,  // an integer option (micro-batch-size, n-layers, seed, ...)
  number,        // a real-number option (lr, ddp-bucket-size, ...): an integer is a number too
  boolean,       // a flag: true or false
};

// "a whole number", "a number", "true or false", "text": for the refusal's "valid:" part.
const char* describe(ValueType type);

// Whether `text`, a value as a command line writes it, is of `type`: a whole number is an
// optional sign and decimal digits; a number is a finite decimal or exponent form; a boolean is
// true, false, True or False (the spellings a sweep turns into `--flag=True/False`); any text is
// text. Ranges are not checked here: they are the option's owner's, with its own message.
bool text_is(ValueType type, std::string_view text);

}  // namespace tokbench::usage
