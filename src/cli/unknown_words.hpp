// The usage lines for words tokbench does not know, each naming the word and what is valid: a
// command that is not one ("'rnu' is not a command; valid: run, info, ..."), no command at all,
// and an option the command does not have, with the option meant when it is a likely typo of one
// (usage::likely_meant: "`tokbench run` has no option --model-nme (did you mean --model-name?)"). CLI11's own
// lines for these ("A subcommand is required", "The following arguments were not expected: x
// --model-nme") named neither the valid commands nor the option meant.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tokbench::cli {

// The line for a command line CLI11 refused, when a word of it is unknown (`args`: the command
// line as CLI11 read it, argv[0] first); nullopt when the refusal is of another kind (a value,
// a missing argument), whose CLI11 line already names what is wrong, and for a command that passes
// options it does not know on (sweep: `run`'s), which says itself which words are not options.
std::optional<std::string> unknown_word_line(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace tokbench::cli
