#include "cli/interactive/file_search.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <system_error>

#include "core/host_git.h"

namespace codex::cli {

namespace {

// The NUL-separated output of a git command in `root` (run the one safe way,
// core/host_git.h: the workspace's git config is the model's to write),
// nullopt when git fails.
std::optional<std::vector<std::string>> GitList(const std::string& root,
                                                const std::vector<std::string>& args,
                                                size_t limit) {
  auto run = core::RunHostGit(root, args);
  if (!run.ok() || run->exit_code != 0) return std::nullopt;
  std::vector<std::string> out;
  size_t pos = 0;
  const std::string& text = run->stdout_text;
  while (pos < text.size() && out.size() < limit) {
    size_t end = text.find('\0', pos);
    if (end == std::string::npos) break;  // a cut last entry
    if (end > pos) out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

bool Skipped(const std::string& name) {
  return name.empty() || name[0] == '.' || name == "node_modules" || name == "target" ||
         name == "build" || name == "dist" || name == "__pycache__";
}

char LowerChar(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// The score of `query` in `path` (higher is better), nullopt when it is not
// a subsequence.
std::optional<int> Score(std::string_view path, std::string_view query) {
  size_t name_start = path.rfind('/');
  name_start = name_start == std::string_view::npos ? 0 : name_start + 1;
  // Prefer a match inside the file name alone.
  auto match = [&](size_t from) -> std::optional<int> {
    int score = 0;
    size_t qi = 0;
    size_t last = std::string_view::npos;
    for (size_t i = from; i < path.size() && qi < query.size(); ++i) {
      if (LowerChar(path[i]) != LowerChar(query[qi])) continue;
      score += 1;
      if (last != std::string_view::npos && i == last + 1) score += 5;  // consecutive
      if (i == from || path[i - 1] == '/' || path[i - 1] == '_' || path[i - 1] == '-' ||
          path[i - 1] == '.') {
        score += 3;  // at a word start
      }
      last = i;
      ++qi;
    }
    if (qi < query.size()) return std::nullopt;
    return score;
  };
  if (auto in_name = match(name_start)) return *in_name + 20;
  return match(0);
}

}  // namespace

std::vector<std::string> ListWorkspaceFiles(const std::string& root, size_t limit) {
  if (auto tracked =
          GitList(root, {"ls-files", "-z", "--cached", "--others", "--exclude-standard"}, limit)) {
    std::sort(tracked->begin(), tracked->end());
    tracked->erase(std::unique(tracked->begin(), tracked->end()), tracked->end());
    return *tracked;
  }
  std::vector<std::string> out;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator() && out.size() < limit; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (Skipped(name)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) out.push_back(fs::relative(it->path(), root, ec).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> FuzzyFind(const std::vector<std::string>& paths, std::string_view query,
                                   size_t max) {
  std::vector<std::pair<int, const std::string*>> scored;
  for (const auto& p : paths) {
    if (query.empty()) {
      scored.emplace_back(0, &p);
      continue;
    }
    if (auto s = Score(p, query)) scored.emplace_back(*s, &p);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return a.second->size() < b.second->size();
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < max; ++i) out.push_back(*scored[i].second);
  return out;
}

}  // namespace codex::cli
