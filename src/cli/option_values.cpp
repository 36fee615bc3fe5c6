// option_values.hpp.
#include "cli/option_values.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "usage/usage_error.hpp"

namespace tokbench::cli {
namespace {

// The words a flag's `=VALUE` may be, as CLI11 reads them (and the reference's jsonargparse
// spells them: True, False); CLI11 also takes a number (0 is false).
constexpr const char* kFlagWords = "True or False (also true/false, yes/no, on/off, 1/0)";

bool is_flag(const CLI::Option& option) { return option.get_items_expected_max() == 0; }

bool is_help(const CLI::App& sub, const CLI::Option* option) {
  return option == sub.get_help_ptr() || option == sub.get_help_all_ptr();
}

// CLI11 puts "--name: " before what a check returns.
CLI::Validator non_empty(const std::string& type) {
  return CLI::Validator(
      [type](std::string& text) -> std::string {
        if (!text.empty()) return {};
        return fmt::format("an empty value ('') is not valid; valid: a non-empty {}", type.empty() ? "value" : type);
      },
      "", "");
}

CLI::Validator true_or_false() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          CLI::detail::to_flag_value(text);
          return {};
        } catch (const std::invalid_argument&) {
          return fmt::format("'{}' is not valid; valid: {}", usage::printable(text), kFlagWords);
        } catch (const std::out_of_range&) {
          return {};  // a number beyond int64: CLI11 takes its sign
        }
      },
      "", "");
}

}  // namespace

void add_value_rules(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    for (CLI::Option* option : sub->get_options()) {
      if (is_help(*sub, option) || option->get_lnames().empty()) continue;  // positionals: their readers say
      if (is_flag(*option)) {
        option->check(true_or_false());
      } else {
        option->check(non_empty(option->get_type_name()));
      }
    }
  }
}

std::vector<std::string> with_empty_values_explicit(const CLI::App& app, int argc, const char* const* argv) {
  std::vector<std::string> args(argv, argv + argc);
  // The subcommand: the first word that names one (only --help and --version, which take no
  // value, may come before it).
  const CLI::App* sub = nullptr;
  std::size_t i = 1;
  for (; i < args.size() && sub == nullptr; ++i)
    for (const CLI::App* candidate : app.get_subcommands([](const CLI::App*) { return true; }))
      if (candidate->get_name() == args[i]) sub = candidate;
  if (sub == nullptr) return args;
  std::vector<std::string> out(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i));
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {  // the rest are positional words, whatever they look like
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    const std::size_t eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos || eq + 1 != arg.size()) {
      out.push_back(arg);
      continue;
    }
    const std::string name = arg.substr(0, eq);
    const CLI::Option* option = sub->get_option_no_throw(name);
    if (option == nullptr || is_help(*sub, option)) {  // not this subcommand's: CLI11 (or its extras) says so
      out.push_back(arg);
      continue;
    }
    if (is_flag(*option))
      usage::refuse(fmt::format("{}: an empty value ('') is not valid; valid: {} alone, or {}=VALUE with VALUE {}",
                                usage::printable(name), usage::printable(name), usage::printable(name), kFlagWords));
    out.push_back(name);
    out.emplace_back();  // the explicit empty value the option's check refuses
  }
  return out;
}

}  // namespace tokbench::cli
