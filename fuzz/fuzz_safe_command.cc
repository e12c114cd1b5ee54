// libFuzzer target: the shell lexer and the known-safe command classifier.
//
// The input is used twice: as a `bash -lc` script, and split at NUL bytes as
// an argv. Checks, beyond the sanitizers:
//   * a script the classifier calls safe is one the lexer accepts;
//   * lexing is faithful: re-quoting every word (ShellQuote) and joining
//     the commands with their operators lexes back to the same commands and
//     operators;
//   * a refusal always carries a message;
//   * a safe script has no command whose argv[0] holds '=' or a '/' outside
//     /bin/ and /usr/bin/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/shell.h"
#include "sandbox/safe_command.h"
#include "sandbox/shell_lexer.h"

using namespace codex::sandbox;
using codex::ShellJoin;
using codex::ShellQuote;

namespace {

std::string Rebuild(const ShellCommandList& list) {
  std::string out;
  for (size_t i = 0; i < list.commands.size(); ++i) {
    out += ShellJoin(list.commands[i]);
    if (i < list.operators.size()) {
      out += ' ';
      out += ShellOperatorText(list.operators[i]);
      out += ' ';
    }
  }
  return out;
}

bool PlausibleProgram(const std::string& argv0) {
  if (argv0.find('=') != std::string::npos) return false;
  std::string_view name = argv0;
  for (std::string_view dir : {"/usr/bin/", "/bin/"}) {
    if (name.substr(0, dir.size()) == dir) {
      name.remove_prefix(dir.size());
      break;
    }
  }
  return !name.empty() && name.find('/') == std::string_view::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string script(reinterpret_cast<const char*>(data), size);

  auto list = ParseCommandList(script);
  const bool safe = IsKnownSafeCommand({"bash", "-lc", script});
  if (!list.ok()) {
    if (safe || list.status().message().empty()) __builtin_trap();
  } else {
    auto again = ParseCommandList(Rebuild(*list));
    if (!again.ok() || again->commands != list->commands || again->operators != list->operators) {
      __builtin_trap();
    }
    if (safe) {
      for (const auto& command : list->commands) {
        if (!PlausibleProgram(command[0])) __builtin_trap();
      }
    }
  }

  std::vector<std::string> argv;
  size_t start = 0;
  for (size_t i = 0; i <= script.size(); ++i) {
    if (i == script.size() || script[i] == '\0') {
      argv.push_back(script.substr(start, i - start));
      start = i + 1;
    }
  }
  if (IsKnownSafeCommand(argv) && !PlausibleProgram(argv[0])) __builtin_trap();
  return 0;
}
