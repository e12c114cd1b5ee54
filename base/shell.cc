#include "base/shell.h"

namespace codex {
namespace {

bool IsPlainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '@' || c == '%' || c == '+' || c == ':' || c == ',' || c == '.' || c == '/' ||
         c == '-';
}

std::string Quote(std::string_view word, bool equals_plain) {
  bool plain = !word.empty();
  for (char c : word) plain = plain && (IsPlainChar(c) || (equals_plain && c == '='));
  if (plain) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  out.push_back('\'');
  return out;
}

}  // namespace

std::string ShellQuote(std::string_view word) { return Quote(word, false); }

std::string ShellJoin(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out.push_back(' ');
    out += Quote(words[i], i > 0);
  }
  return out;
}

std::optional<std::string_view> ShellScriptOf(const std::vector<std::string>& argv) {
  if (argv.size() != 3) return std::nullopt;
  std::string_view shell = argv[0];
  const size_t slash = shell.rfind('/');
  if (slash != std::string_view::npos) shell.remove_prefix(slash + 1);
  if (shell != "bash" && shell != "zsh" && shell != "sh") return std::nullopt;
  if (argv[1] != "-lc" && argv[1] != "-c") return std::nullopt;
  return std::string_view(argv[2]);
}

}  // namespace codex
