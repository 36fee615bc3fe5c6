// A user's string of command-line options (--slurm-args) as words for an argv, split the way a
// POSIX shell splits words (blanks, single and double quotes, backslashes) and expanded in no
// way at all: no shell ever runs it. GLib's g_shell_parse_argv does the splitting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tokbench::sweep {

// Throws std::invalid_argument with one line naming `option` and the problem: an unmatched
// quote, or text that asks for what only a shell does and would otherwise be passed on
// literally ($ expansions, backticks, ; | & < > operators, a line break).
std::vector<std::string> split_shell_words(std::string_view option, const std::string& text);

}  // namespace tokbench::sweep
