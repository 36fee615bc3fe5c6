// unknown_words.hpp.
#include "cli/unknown_words.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "usage/likely_meant.hpp"
#include "usage/usage_error.hpp"

namespace tokbench::cli {
namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  std::sort(names.begin(), names.end());  // the registry's order is the files' initialisation order
  return names;
}

// The option `sub` knows by `word` (`--name` or `--name=value`, `-x`), or null.
const CLI::Option* option_named(const CLI::App& sub, const std::string& word) {
  const std::string name = word.substr(0, word.find('='));
  for (const CLI::Option* option : sub.get_options()) {
    if (option->check_name(name)) return option;
  }
  return nullptr;
}

// The option of `sub` that `word` is a likely typo of (usage::likely_meant), by its first long
// name. Dashes and underscores are one character here (--seq-len and --seq_len spell one option).
std::optional<std::string> nearest_option(const CLI::App& sub, const std::string& word) {
  const auto dashed = [](std::string text) {
    std::replace(text.begin(), text.end(), '_', '-');
    return text;
  };
  std::vector<std::string> names;
  std::map<std::string, std::string> shown;
  for (const CLI::Option* option : sub.get_options()) {
    for (const std::string& long_name : option->get_lnames()) {
      const std::string name = dashed("--" + long_name);
      if (shown.emplace(name, "--" + option->get_lnames().front()).second) names.push_back(name);
    }
  }
  const std::optional<std::string> meant = usage::likely_meant(dashed(word.substr(0, word.find('='))), names);
  if (!meant) return std::nullopt;
  return shown.at(*meant);
}

}  // namespace

std::optional<std::string> unknown_word_line(const CLI::App& app, const std::vector<std::string>& args) {
  const std::vector<std::string> commands = command_names(app);
  // The command: the first word that names one. Before it, only the program's own options.
  const CLI::App* sub = nullptr;
  std::size_t command_at = 1;
  for (; command_at < args.size() && args[command_at] != "--"; ++command_at) {
    for (const CLI::App* command : app.get_subcommands({}))
      if (command->get_name() == args[command_at]) sub = command;
    if (sub != nullptr) break;
  }
  if (sub == nullptr) {
    for (std::size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
      if (args[i].empty() || args[i][0] != '-')
        return fmt::format("'{}' is not a command; valid: {} (see --help)", usage::printable(args[i]),
                           fmt::join(commands, ", "));
    }
    return fmt::format("a command is required; valid: {} (see --help)", fmt::join(commands, ", "));
  }
  // A command that takes other commands' options (sweep passes `run`'s on) judges its own words.
  if (sub->get_allow_extras()) return std::nullopt;
  bool value_next = false;  // the word before was an option whose value is the next word
  for (std::size_t i = command_at + 1; i < args.size() && args[i] != "--"; ++i) {
    const std::string& word = args[i];
    const bool is_value = value_next;
    value_next = false;
    if (is_value || word.size() < 2 || word[0] != '-') continue;
    if (const CLI::Option* option = option_named(*sub, word)) {
      value_next = option->get_items_expected_max() > 0 && word.find('=') == std::string::npos;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.') continue;  // a negative number
    const std::optional<std::string> meant = nearest_option(*sub, word);
    return fmt::format("`tokbench {}` has no option {}{} (see tokbench {} --help)", sub->get_name(),
                       usage::printable(word.substr(0, word.find('='))),
                       meant ? fmt::format(" (did you mean {}?)", *meant) : std::string(), sub->get_name());
  }
  return std::nullopt;
}

}  // namespace tokbench::cli
