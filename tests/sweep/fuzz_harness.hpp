// The readers' fuzz tests' machinery: seeded mutations (of bytes, of JSON, of TOML, of SQLite
// files) and a case runner that calls a reader in a forked child under a time limit, then
// checks how the child ended and that the input folder is exactly as it was.
//
// Why a child per case: a reader that crashes (a signal), hangs, or throws the wrong exception
// must fail one case with its seed and mutation named, not take the test process with it. The
// child ends the way tokbench's main ends a command (src/cli/main.cpp): exit 0 when the reader
// took the input, 2 for std::invalid_argument (a usage error: one line naming the file), 1 for
// any other exception. Only 0 and 2 are right for a damaged input.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

namespace tokbench::fuzz {

namespace fs = std::filesystem;
using Rng = std::mt19937_64;

inline std::size_t below(Rng& rng, std::size_t n) {
  return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}
template <typename T, std::size_t N>
const T& one_of(Rng& rng, const std::array<T, N>& items) {
  return items[below(rng, N)];
}

inline std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
inline void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

// Bytes that parsers treat specially: delimiters, quotes, escapes, NUL, high bytes (UTF-8).
inline char interesting_byte(Rng& rng) {
  static constexpr std::array<unsigned char, 20> bytes{0x00, 0xff, 0x7f, 0x80, 0xc3, 0xed, '"', '\\', '{', '}',
                                                       '[', ']', ',', ':', '\n', '=', '#', '\'', '0', '-'};
  return static_cast<char>(one_of(rng, bytes));
}

// A mutation of raw bytes; `how` says what it did, so a failing case can be read.
inline std::string mutate_bytes(Rng& rng, std::string b, std::string& how) {
  const std::size_t n = b.size();
  switch (below(rng, 7)) {
    case 0: {
      const std::size_t at = below(rng, n + 1);
      how = "truncated to " + std::to_string(at) + " of " + std::to_string(n) + " bytes";
      b.resize(at);
      break;
    }
    case 1: {
      const std::size_t k = 1 + below(rng, 8);
      how = "flipped a bit in " + std::to_string(k) + " bytes at";
      for (std::size_t i = 0; i < k && n > 0; ++i) {
        const std::size_t at = below(rng, n);
        b[at] = static_cast<char>(b[at] ^ (1 << below(rng, 8)));
        how += " " + std::to_string(at);
      }
      break;
    }
    case 2: {
      const std::size_t k = 1 + below(rng, 4);
      how = "set " + std::to_string(k) + " bytes to delimiters/NUL/0xff at";
      for (std::size_t i = 0; i < k && n > 0; ++i) {
        const std::size_t at = below(rng, n);
        b[at] = interesting_byte(rng);
        how += " " + std::to_string(at);
      }
      break;
    }
    case 3: {
      const std::size_t at = below(rng, n + 1), k = 1 + below(rng, 16);
      std::string inserted;
      for (std::size_t i = 0; i < k; ++i)
        inserted += below(rng, 2) ? interesting_byte(rng) : static_cast<char>(below(rng, 256));
      b.insert(at, inserted);
      how = "inserted " + std::to_string(k) + " bytes at " + std::to_string(at);
      break;
    }
    case 4: {
      const std::size_t at = below(rng, n + 1), k = std::min<std::size_t>(1 + below(rng, 64), n - at);
      b.erase(at, k);
      how = "deleted " + std::to_string(k) + " bytes at " + std::to_string(at);
      break;
    }
    case 5: {
      const std::size_t from = below(rng, n + 1), k = std::min<std::size_t>(1 + below(rng, 256), n - from);
      const std::size_t to = below(rng, n + 1);
      b.insert(to, b.substr(from, k));
      how = "copied " + std::to_string(k) + " bytes from " + std::to_string(from) + " to " + std::to_string(to);
      break;
    }
    default: {
      const std::size_t at = below(rng, n + 1), k = std::min<std::size_t>(1 + below(rng, 32), n - at);
      for (std::size_t i = 0; i < k; ++i) b[at + i] = static_cast<char>(below(rng, 256));
      how = "overwrote " + std::to_string(k) + " bytes at " + std::to_string(at) + " with random bytes";
      break;
    }
  }
  return b;
}

// JSON text that nlohmann::json cannot hold as a value to dump: written over a placeholder.
inline std::string raw_json_value(Rng& rng, std::string& how) {
  switch (below(rng, 8)) {
    case 0: {
      const std::size_t depth = std::array<std::size_t, 5>{100, 1000, 10000, 100000, 1000000}[below(rng, 5)];
      how = "an array nested " + std::to_string(depth) + " deep";
      return std::string(depth, '[') + std::string(depth, ']');
    }
    case 1: {
      const std::size_t depth = std::array<std::size_t, 4>{100, 1000, 10000, 100000}[below(rng, 4)];
      how = "an object nested " + std::to_string(depth) + " deep";
      std::string text;
      for (std::size_t i = 0; i < depth; ++i) text += "{\"a\":";
      return text + "1" + std::string(depth, '}');
    }
    case 2:
      how = "a number beyond double (1e400)";
      return below(rng, 2) ? "1e400" : "-1e400";
    case 3:
      how = "an integer beyond 64 bits";
      return below(rng, 2) ? "123456789012345678901234567890" : "-98765432109876543210987654321";
    case 4:
      how = "a 1 MB string";
      return "\"" + std::string(1 << 20, 'x') + "\"";
    case 5:
      how = "a string with bytes that are not UTF-8";
      return "\"ok\xff\xfe\xc3\"";
    case 6:
      how = "a string with a lone surrogate escape";
      return "\"\\ud800\"";
    default:
      how = "a string with an escaped NUL";
      return "\"a\\u0000b\"";
  }
}

// A value of another type than what is there, or an edge of its own type.
inline nlohmann::json wrong_value(Rng& rng, std::string& how) {
  using nlohmann::json;
  static const std::array<std::pair<const char*, json>, 20> values{{
      {"null", nullptr},
      {"true", true},
      {"false", false},
      {"0", 0},
      {"-1", -1},
      {"3.5", 3.5},
      {"a string", "text"},
      {"an empty string", ""},
      {"an empty array", json::array()},
      {"an empty object", json::object()},
      {"a mixed array", json::array({1, "a", nullptr, json::object()})},
      {"a nested object", json{{"a", {{"b", json::array()}}}}},
      {"1e308", 1e308},
      {"-1e308", -1e308},
      {"INT64_MAX", INT64_MAX},
      {"INT64_MIN", INT64_MIN},
      {"UINT64_MAX", UINT64_MAX},
      {"a denormal", 4.9e-324},
      {"an array of 10000 numbers", json(std::vector<int>(10000, 7))},
      {"an array of strings", json::array({"x", "y"})},
  }};
  const auto& [name, value] = values[below(rng, values.size())];
  how = name;
  return value;
}

// Structure-aware mutation of a JSON document: a value anywhere replaced by a value of the
// wrong type, a huge number, deep nesting; a key dropped, renamed or repeated; the whole
// document replaced.
inline std::string mutate_json(Rng& rng, const nlohmann::json& seed, std::string& how) {
  using nlohmann::json;
  std::vector<json::json_pointer> pointers;
  std::function<void(const json&, const json::json_pointer&)> walk = [&](const json& j, const json::json_pointer& at) {
    pointers.push_back(at);
    if (j.is_object())
      for (const auto& [k, v] : j.items()) walk(v, at / k);
    if (j.is_array())
      for (std::size_t i = 0; i < j.size(); ++i) walk(j[i], at / i);
  };
  walk(seed, json::json_pointer());
  json doc = seed;
  // Half the time a top-level key: the figures and the keys readers look at live there.
  json::json_pointer at = pointers[below(rng, pointers.size())];
  if (below(rng, 2) && doc.is_object() && !doc.empty()) {
    auto it = doc.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(below(rng, doc.size())));
    at = json::json_pointer() / it.key();
  }
  const std::string where = at.to_string().empty() ? "the document" : "'" + at.to_string() + "'";
  std::string raw;  // raw JSON text written over the placeholder
  const std::string placeholder = "\"@@tokbench-fuzz@@\"";
  std::string what;
  switch (below(rng, 6)) {
    case 0:
    case 1:
      doc[at] = wrong_value(rng, what);
      how = where + " set to " + what;
      break;
    case 2:
      raw = raw_json_value(rng, what);
      doc[at] = "@@tokbench-fuzz@@";
      how = where + " set to " + what;
      break;
    case 3:
      if (!at.empty() && doc[at.parent_pointer()].is_object()) {
        doc[at.parent_pointer()].erase(at.back());
        how = where + " removed";
      } else if (!at.empty() && doc[at.parent_pointer()].is_array()) {
        doc[at.parent_pointer()].erase(std::stoul(at.back()));
        how = where + " removed from its array";
      } else {
        doc = wrong_value(rng, what);
        how = "the document replaced by " + what;
      }
      break;
    case 4:
      if (!at.empty() && doc[at.parent_pointer()].is_object()) {
        auto value = doc[at];
        doc[at.parent_pointer()].erase(at.back());
        doc[at.parent_pointer()][at.back() + (below(rng, 2) ? "_renamed" : " ")] = value;
        how = where + " renamed";
      } else {
        doc = json::array({doc});
        how = "the document wrapped in an array";
      }
      break;
    default: {
      // A repeated key, written by hand (a json object cannot hold two): the last one counts.
      const std::array<const char*, 6> keys{"schema_version", "status", "model_name", "iterations", "result", "Seq Len"};
      std::string repeat = std::string("\"") + one_of(rng, keys) + "\": ";
      json value = wrong_value(rng, what);
      how = "the document given a repeated key " + repeat + what;
      std::string text = doc.dump(below(rng, 2) ? 4 : -1);
      if (!text.empty() && text[0] == '{') text.insert(text.size() - 1, (text.size() > 2 ? "," : "") + repeat + value.dump());
      return text;
    }
  }
  std::string text = doc.dump(below(rng, 2) ? 4 : -1);
  if (!raw.empty()) {
    const std::size_t p = text.find(placeholder);
    if (p != std::string::npos) text.replace(p, placeholder.size(), raw);
  }
  return text;
}

// Structure-aware mutation of a TOML matrix: keys and values of its lines changed, lines
// repeated, dropped or swapped, tables added, axes added until the matrix explodes.
inline std::string mutate_toml(Rng& rng, const std::string& seed, std::string& how) {
  std::vector<std::string> lines;
  {
    std::istringstream in(seed);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  std::vector<std::size_t> assignments;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find('=') != std::string::npos && !lines[i].empty() && lines[i][0] != '#') assignments.push_back(i);
  static const std::array<const char*, 29> values{
      "9223372036854775807", "-9223372036854775808", "99999999999999999999", "1e309", "inf", "nan", "-0.0", "\"\"",
      "[]", "[[1, 2], [3]]", "{ a = 1 }", "[1, \"a\", true]", "1979-05-27T07:32:00Z", "07:32:00", "true", "0x7f",
      "\"\"\"two\nlines\"\"\"", "'literal'", "[", "\"unterminated", "\"\\u0000\"", "\"\\uD800\"", "\"\xff\xfe\"",
      "[\"a\", \"a\", \"a\"]", "\"a,b,c\"", "[0, -1, 2147483648]", "1_000", "\"x\" # comment", "{ matrix = [1] }"};
  static const std::array<const char*, 20> keys{
      "\"\"", "\"quoted key\"", "a.b.c", "matrix", "json-path", "quiet", "return-metrics-as-json", "--seq-len",
      "seq_len", "nproc-per-node", "nnodes", "distributed-mode", "\"\xc3\xa9t\xc3\xa9\"", "model-name",
      "x.matrix", "'literal key'", "key with space", "k\xff", "1234", "-"};
  static const std::array<const char*, 10> headers{"[matrix]", "[[matrix]]", "[[matrix.x]]", "[a]", "[[a]]",
                                                   "[matrix.sub]", "[[matrix]]\n[matrix.inner]", "[", "[[]]",
                                                   "[[matrix]]\nmatrix = 1"};
  if (assignments.empty()) return mutate_bytes(rng, seed, how);  // nothing left to mutate by structure
  std::string what;
  switch (below(rng, 9)) {
    case 0:
    case 1: {  // a value replaced
      const std::size_t i = assignments[below(rng, assignments.size())];
      const std::string value = below(rng, 6) == 0 ? [&] {
        const std::size_t depth = std::array<std::size_t, 4>{100, 300, 10000, 100000}[below(rng, 4)];
        what = "an array nested " + std::to_string(depth) + " deep";
        return std::string(depth, '[') + "1" + std::string(depth, ']');
      }()
                                                   : (what = one_of(rng, values));
      lines[i] = lines[i].substr(0, lines[i].find('=') + 1) + " " + value;
      how = "line " + std::to_string(i + 1) + "'s value set to " + what;
      break;
    }
    case 2: {  // a key replaced
      const std::size_t i = assignments[below(rng, assignments.size())];
      what = one_of(rng, keys);
      lines[i] = what + " " + lines[i].substr(lines[i].find('='));
      how = "line " + std::to_string(i + 1) + "'s key set to " + what;
      break;
    }
    case 3: {  // a line repeated (a duplicate key, or a duplicate table)
      const std::size_t i = below(rng, lines.size());
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(i), lines[i]);
      how = "line " + std::to_string(i + 1) + " repeated";
      break;
    }
    case 4: {  // lines dropped or swapped
      const std::size_t i = below(rng, lines.size()), j = below(rng, lines.size());
      if (below(rng, 2)) {
        lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(i));
        how = "line " + std::to_string(i + 1) + " dropped";
      } else {
        std::swap(lines[i], lines[j]);
        how = "lines " + std::to_string(i + 1) + " and " + std::to_string(j + 1) + " swapped";
      }
      break;
    }
    case 5: {  // a table header added
      const std::size_t i = below(rng, lines.size() + 1);
      what = one_of(rng, headers);
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(i), what);
      how = "'" + what + "' inserted before line " + std::to_string(i + 1);
      break;
    }
    case 6: {  // axes until the matrix is too large (or just under the limit)
      const std::size_t axes = 1 + below(rng, 6), width = std::array<std::size_t, 5>{2, 10, 50, 100, 10001}[below(rng, 5)];
      std::string block;
      for (std::size_t a = 0; a < axes; ++a) {
        block += "axis-" + std::to_string(a) + " = [";
        for (std::size_t v = 0; v < width; ++v) block += (v ? ", " : "") + std::to_string(v);
        block += "]";
        if (a + 1 < axes) block += "\n";
      }
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(below(rng, assignments.front() + 1)), block);
      how = std::to_string(axes) + " axes of " + std::to_string(width) + " values added at the top";
      break;
    }
    case 7: {  // many [[matrix]] tables
      const std::size_t tables = std::array<std::size_t, 4>{10, 300, 3000, 20000}[below(rng, 4)];
      for (std::size_t t = 0; t < tables; ++t) lines.push_back("[[matrix]]\nseq-len = [" + std::to_string(t) + ", 1]");
      how = std::to_string(tables) + " [[matrix]] tables appended";
      break;
    }
    default: {
      std::string text;
      for (const auto& l : lines) text += l + "\n";
      return mutate_bytes(rng, text, how);
    }
  }
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  return text;
}

// A folder's files and their bytes: what a reader must leave as it found them.
using Snapshot = std::map<std::string, std::string>;
inline Snapshot snapshot(const fs::path& dir) {
  Snapshot s;
  for (const auto& entry : fs::directory_iterator(dir))
    s[entry.path().filename().string()] = entry.is_regular_file() ? read_bytes(entry.path()) : "<not a file>";
  return s;
}
inline std::string difference(const Snapshot& before, const Snapshot& after) {
  std::string d;
  for (const auto& [name, bytes] : after) {
    const auto it = before.find(name);
    // A -shm that was there is SQLite's shared memory of a WAL store (an older tokbench's, its
    // writer running): readers take their read marks in it by design. Creating one is a change.
    const bool shared_memory = name.size() > 4 && name.substr(name.size() - 4) == "-shm";
    if (it == before.end()) d += " created " + name + ";";
    else if (it->second != bytes && !shared_memory) d += " changed " + name + ";";
  }
  for (const auto& [name, bytes] : before)
    if (!after.count(name)) d += " removed " + name + ";";
  return d;
}

struct Ending {
  int exit_code = -1;  // -1: no exit (a signal, or killed as hung)
  int signal = 0;
  bool hung = false;
  std::string message;  // the exception's text, from the child
};

inline std::string describe(const Ending& e) {
  if (e.hung) return "hung (killed after the time limit)";
  if (e.signal) return "killed by signal " + std::to_string(e.signal) + " (" + strsignal(e.signal) + ")";
  return "exit " + std::to_string(e.exit_code) + (e.message.empty() ? "" : ": " + e.message);
}

// Runs `body` in a forked child (no exec) and waits at most `limit`; the child's address space
// is capped so a reader that allocates without bound fails its case instead of the machine.
inline Ending run_forked(const std::function<void()>& body, std::chrono::milliseconds limit) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    const rlimit memory{rlim_t{3} << 30, rlim_t{3} << 30};
    setrlimit(RLIMIT_AS, &memory);
    int code = 0;
    std::string message;
    try {
      body();
    } catch (const std::invalid_argument& e) {
      code = 2;
      message = e.what();
    } catch (const std::exception& e) {
      code = 1;
      message = std::string(typeid(e).name()) + ": " + e.what();
    } catch (...) {
      code = 1;
      message = "an exception that is not a std::exception";
    }
    message = message.substr(0, 4000);
    for (std::size_t done = 0; done < message.size();) {
      const ssize_t n = write(fds[1], message.data() + done, message.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    _exit(code);
  }
  close(fds[1]);
  Ending ending;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ending.hung = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;  // the child's end closed: it has exited
    ending.message.append(buffer, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!ending.hung) {
    if (WIFEXITED(status)) ending.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) ending.signal = WTERMSIG(status);
  }
  return ending;
}

struct Summary {
  int cases = 0, accepted = 0, refused = 0;
  double seconds = 0, slowest_case_s = 0;
  std::vector<std::string> failures;
};

// How many cases, and which seed: TOKBENCH_FUZZ_CASES (default `cases`), TOKBENCH_FUZZ_SEED,
// TOKBENCH_FUZZ_ONLY=N to rerun one case of a failure report, TOKBENCH_FUZZ_VERBOSE=1 to print
// every case's mutation and ending.
inline int case_count(int cases) {
  const char* v = std::getenv("TOKBENCH_FUZZ_CASES");
  return v ? std::atoi(v) : cases;
}
inline uint64_t base_seed() {
  const char* v = std::getenv("TOKBENCH_FUZZ_SEED");
  return v ? std::strtoull(v, nullptr, 0) : 20261201;
}

// Runs `cases` cases: `make` writes case i's input into `dir` (which it may clear first) and
// says how it was mutated; `read` is called on `input` in a child. A case fails when the child
// ends other than 0 or 2, when a refusal is not one line naming `input`, or when the folder
// changed (a byte of the input, a file left beside it). Failing inputs are copied to
// $TMPDIR/tokbench-fuzz-failures/NAME-CASE for a look.
inline Summary fuzz(const std::string& name, const fs::path& dir, const fs::path& input, int cases,
                    const std::function<std::string(Rng&, int)>& make, const std::function<void()>& read,
                    bool refusal_names_input = true) {
  Summary s;
  const uint64_t seed = base_seed();
  const char* only = std::getenv("TOKBENCH_FUZZ_ONLY");
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < cases; ++i) {
    if (only && std::atoi(only) != i) continue;
    Rng rng(seed * 1000003u + static_cast<uint64_t>(i));
    const std::string how = make(rng, i);
    const Snapshot before = snapshot(dir);
    const auto case_start = std::chrono::steady_clock::now();
    const Ending e = run_forked(read, std::chrono::seconds(10));
    s.slowest_case_s = std::max(s.slowest_case_s,
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start).count());
    ++s.cases;
    std::string wrong;
    if (e.exit_code == 0) {
      ++s.accepted;
    } else if (e.exit_code == 2) {
      ++s.refused;
      if (e.message.find('\n') != std::string::npos) wrong = "a refusal of more than one line: " + e.message;
      if (refusal_names_input && e.message.find(input.string()) == std::string::npos)
        wrong = "a refusal that does not name " + input.string() + ": " + e.message;
    } else {
      wrong = describe(e);
    }
    if (std::getenv("TOKBENCH_FUZZ_VERBOSE"))
      std::cout << name << " case " << i << ": " << how << " [" << before.size() << " files] -> " << describe(e) << "\n";
    const std::string changed = difference(before, snapshot(dir));
    if (!changed.empty()) wrong += (wrong.empty() ? "" : "; ") + std::string("the folder changed:") + changed;
    if (!wrong.empty()) {
      const fs::path keep = fs::temp_directory_path() / "tokbench-fuzz-failures" / (name + "-" + std::to_string(i));
      std::error_code ec;
      fs::remove_all(keep, ec);
      fs::create_directories(keep, ec);
      for (const auto& [file, bytes] : before) write_bytes(keep / file, bytes);
      s.failures.push_back(name + " case " + std::to_string(i) + " (TOKBENCH_FUZZ_SEED=" + std::to_string(seed) +
                           " TOKBENCH_FUZZ_ONLY=" + std::to_string(i) + "; input kept in " + keep.string() +
                           "): " + how + " -> " + wrong);
    }
  }
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

inline void expect_clean(const Summary& s, int wanted_cases) {
  std::cout << "[ fuzz     ] " << s.cases << " cases in " << s.seconds << " s (slowest " << s.slowest_case_s
            << " s): " << s.accepted << " read, " << s.refused << " refused (exit 2), " << s.failures.size()
            << " wrong\n";
  const char* only = std::getenv("TOKBENCH_FUZZ_ONLY");
  if (!only) {
    EXPECT_GE(s.cases, wanted_cases);
  }
  for (std::size_t i = 0; i < s.failures.size() && i < 40; ++i) ADD_FAILURE() << s.failures[i];
  EXPECT_TRUE(s.failures.empty()) << s.failures.size() << " cases went wrong (the first 40 are above)";
}

}  // namespace tokbench::fuzz
