#include "cli/sessions_common.h"

#include <filesystem>
#include <string>

#include "base/path.h"
#include "base/time.h"

namespace codex::cli {

Result<std::optional<std::string>> ScopeDir(bool all, const std::string& cwd) {
  if (all) return std::optional<std::string>();
  // The form sessions record their cwd in (Config::cwd): through a symlink too.
  if (!cwd.empty()) return std::optional<std::string>(CanonicalPath(cwd));
  std::error_code ec;
  auto cur = std::filesystem::current_path(ec);
  if (ec) {
    return FailedPreconditionError("cannot read the current directory; pass --cwd DIR or --all");
  }
  return std::optional<std::string>(CanonicalPath(cur.string()));
}

std::string LocalTime(int64_t ms) { return FormatLocalTime(ms, "%Y-%m-%d %H:%M"); }

std::string Clip(std::string_view s, size_t max) {
  std::string out;
  size_t points = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (points == max) return out + "…";
      ++points;
    }
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : static_cast<char>(c);
  }
  return out;
}

std::string SessionLabel(const core::SessionInfo& s) {
  std::string label = s.title.empty() ? "(untitled)" : s.title;
  if (!s.name.empty()) label = "[" + s.name + "] " + label;
  return label;
}

std::string IndentLines(std::string_view text, std::string_view prefix, size_t max_lines) {
  std::string out;
  size_t lines = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    if (lines == max_lines) {
      size_t rest = 1;
      for (size_t i = nl; i < text.size(); ++i) rest += text[i] == '\n';
      out +=
          std::string(prefix) + "… (" + std::to_string(rest) + " more lines; --full shows all)\n";
      break;
    }
    out += std::string(prefix) + std::string(text.substr(start, nl - start)) + "\n";
    ++lines;
    if (nl == text.size()) break;
    start = nl + 1;
  }
  return out;
}

}  // namespace codex::cli
