// Shell-word splitting without a shell (shell_words.hpp).
#include "sweep/shell_words.hpp"

#include <glib.h>

#include <stdexcept>

namespace tokbench::sweep {
namespace {

// Outside single quotes, these are the shell's to expand or interpret; inside single quotes,
// every character is literal, as in the shell.
void refuse_shell_syntax(std::string_view option, const std::string& text) {
  bool single = false, escaped = false;
  for (const char c : text) {
    if (escaped) {
      escaped = false;
      continue;
    }
    if (single) {
      single = c != '\'';
      continue;
    }
    if (c == '\\') {
      escaped = true;
    } else if (c == '\'') {
      single = true;
    } else if (c == '$' || c == '`' || c == ';' || c == '|' || c == '&' || c == '<' || c == '>' || c == '\n' ||
               c == '\r') {
      const std::string shown = c == '\n' ? "a line break" : c == '\r' ? "a carriage return" : std::string("'") + c + "'";
      throw std::invalid_argument(std::string(option) + ": " + shown +
                                  " would need a shell, and none runs (the words go to the program as they are); "
                                  "valid: options and values, quoted with ' or \" where they hold blanks");
    }
  }
}

}  // namespace

std::vector<std::string> split_shell_words(std::string_view option, const std::string& text) {
  refuse_shell_syntax(option, text);
  std::vector<std::string> words;
  if (text.find_first_not_of(" \t") == std::string::npos) return words;  // GLib refuses an empty line
  gint count = 0;
  gchar** argv = nullptr;
  GError* error = nullptr;
  if (!g_shell_parse_argv(text.c_str(), &count, &argv, &error)) {
    const std::string why = error != nullptr ? error->message : "cannot be split into words";
    g_clear_error(&error);
    throw std::invalid_argument(std::string(option) + ": " + why + " in '" + text + "'");
  }
  for (gint i = 0; i < count; ++i) words.emplace_back(argv[i]);
  g_strfreev(argv);
  return words;
}

}  // namespace tokbench::sweep
