// MatchShellApplyPatch: apply_patch sent through the shell tool, as argv or
// as a `[cd DIR &&] apply_patch <<'EOF'` heredoc script.
#include <cctype>
#include <optional>
#include <string>

#include "base/shell.h"
#include "core/apply_patch.h"
#include "core/apply_patch_text.h"
#include "sandbox/shell_lexer.h"

namespace codex::core {
namespace {

using patch_internal::IsAsciiSpace;
using patch_internal::Trim;
using sandbox::ReadShellWord;

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// "[cd DIR &&] apply_patch <<'DELIM'\nBODY\nDELIM" and nothing else.
std::optional<ShellApplyPatch> MatchHeredocScript(std::string_view s) {
  size_t p = 0;
  auto skip_blanks = [&] {
    while (p < s.size() && IsBlank(s[p])) ++p;
  };
  auto skip_space = [&] {
    while (p < s.size() && IsAsciiSpace(s[p])) ++p;
  };
  auto eat = [&](std::string_view token) {
    if (!s.substr(p).starts_with(token)) return false;
    p += token.size();
    return true;
  };
  ShellApplyPatch out;
  skip_space();
  if (s.substr(p).starts_with("cd") && p + 2 < s.size() && IsBlank(s[p + 2])) {
    p += 2;
    skip_blanks();
    std::optional<std::string> dir = ReadShellWord(s, &p);
    if (!dir) return std::nullopt;
    out.workdir = *dir;
    skip_blanks();
    if (!eat("&&")) return std::nullopt;
    skip_space();
  }
  if (!eat("apply_patch") && !eat("applypatch")) return std::nullopt;
  skip_blanks();
  if (!eat("<<") || (p < s.size() && s[p] == '-')) return std::nullopt;
  skip_blanks();
  std::string delim;
  if (p < s.size() && (s[p] == '\'' || s[p] == '"')) {
    std::optional<std::string> word = ReadShellWord(s, &p);
    if (!word || word->empty()) return std::nullopt;
    delim = *word;
  } else {
    while (p < s.size() && (std::isalnum(static_cast<unsigned char>(s[p])) || s[p] == '_')) {
      delim += s[p++];
    }
    if (delim.empty()) return std::nullopt;
  }
  skip_blanks();
  eat("\r");
  if (!eat("\n")) return std::nullopt;
  const size_t body_start = p;
  while (p <= s.size()) {
    size_t nl = s.find('\n', p);
    std::string_view line = s.substr(p, nl == std::string_view::npos ? s.npos : nl - p);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line == delim) {
      out.patch = std::string(s.substr(body_start, p - body_start));
      size_t after = nl == std::string_view::npos ? s.size() : nl;
      if (!Trim(s.substr(after)).empty()) return std::nullopt;
      return out;
    }
    if (nl == std::string_view::npos) break;
    p = nl + 1;
  }
  return std::nullopt;
}

}  // namespace

Result<std::optional<ShellApplyPatch>> MatchShellApplyPatch(const std::vector<std::string>& argv) {
  std::optional<ShellApplyPatch> found;
  if (argv.size() == 2 && (argv[0] == "apply_patch" || argv[0] == "applypatch")) {
    found = ShellApplyPatch{argv[1], ""};
  } else if (const auto script = ShellScriptOf(argv)) {
    found = MatchHeredocScript(*script);
  }
  if (!found) return std::optional<ShellApplyPatch>();
  RETURN_IF_ERROR(ParsePatch(found->patch).status());
  return found;
}

}  // namespace codex::core
