// Rules every option of every subcommand obeys, applied once to the whole CLI11 app so that no
// subcommand can forget them: an empty value (`--name=` or `--name ''`) is refused naming the
// option, and never lets the option take the next word of the command line as its value; a
// flag's `=VALUE` is a true/false word, and anything else is refused saying which words are.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace tokbench::cli {

// Adds the two checks above to every option of every subcommand of `app` (help excepted).
void add_value_rules(CLI::App& app);

// The command line as CLI11 is to read it: each `--name=` (nothing after the '=') of a known
// option that takes a value becomes `--name` and an explicit empty value, which the check
// above refuses. CLI11 would otherwise take the next argument as the value (`--json-path=
// --quiet` wrote the record into a file named --quiet). Arguments after `--` are left alone.
// Throws std::invalid_argument (exit 2) for `--flag=`: a flag's value is a true/false word.
std::vector<std::string> with_empty_values_explicit(const CLI::App& app, int argc, const char* const* argv);

}  // namespace tokbench::cli
