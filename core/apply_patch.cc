#include "core/apply_patch.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <utility>

namespace codex::core {
namespace {

constexpr std::string_view kBeginPatch = "*** Begin Patch";
constexpr std::string_view kEndPatch = "*** End Patch";
constexpr std::string_view kAddFile = "*** Add File: ";
constexpr std::string_view kDeleteFile = "*** Delete File: ";
constexpr std::string_view kUpdateFile = "*** Update File: ";
constexpr std::string_view kMoveTo = "*** Move to: ";
constexpr std::string_view kEndOfFile = "*** End of File";
constexpr int kDiffContext = 3;
constexpr int kMaxSymlinkHops = 40;

// ---------------------------------------------------------------------------
// Text helpers

// Unicode White_Space code points as UTF-8 (beyond ASCII), so that trimming
// agrees with the reference implementation, which trims Unicode whitespace.
constexpr std::array<std::string_view, 17> kUnicodeSpaces = {
    "\xC2\x85",     "\xC2\xA0",     "\xE1\x9A\x80", "\xE2\x80\x80", "\xE2\x80\x81", "\xE2\x80\x82",
    "\xE2\x80\x83", "\xE2\x80\x84", "\xE2\x80\x85", "\xE2\x80\x86", "\xE2\x80\x87", "\xE2\x80\x88",
    "\xE2\x80\x89", "\xE2\x80\x8A", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xE2\x80\xAF",
};
constexpr std::array<std::string_view, 2> kMoreUnicodeSpaces = {"\xE2\x81\x9F", "\xE3\x80\x80"};

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Length of the whitespace character that `s` starts (front) or ends (!front) with, or 0.
size_t SpaceLength(std::string_view s, bool front) {
  if (s.empty()) return 0;
  if (IsAsciiSpace(front ? s.front() : s.back())) return 1;
  auto matches = [&](std::string_view ws) { return front ? s.starts_with(ws) : s.ends_with(ws); };
  for (std::string_view ws : kUnicodeSpaces) {
    if (matches(ws)) return ws.size();
  }
  for (std::string_view ws : kMoreUnicodeSpaces) {
    if (matches(ws)) return ws.size();
  }
  return 0;
}

std::string_view TrimStart(std::string_view s) {
  while (size_t n = SpaceLength(s, true)) s.remove_prefix(n);
  return s;
}

std::string_view TrimEnd(std::string_view s) {
  while (size_t n = SpaceLength(s, false)) s.remove_suffix(n);
  return s;
}

std::string_view Trim(std::string_view s) { return TrimEnd(TrimStart(s)); }

// Folds typographic punctuation and special spaces to ASCII, the last and
// loosest matching pass. Byte-level: the sequences below start with UTF-8 lead
// bytes, so they never match inside another character.
std::string FoldPunctuation(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
    if (byte(0) == 0xC2 && i + 1 < s.size() && byte(1) == 0xA0) {  // NBSP
      out += ' ';
      i += 2;
      continue;
    }
    if (byte(0) == 0xE2 && i + 2 < s.size()) {
      unsigned b1 = byte(1), b2 = byte(2);
      char folded = 0;
      if (b1 == 0x80 && b2 >= 0x90 && b2 <= 0x95) folded = '-';        // U+2010..U+2015 dashes
      if (b1 == 0x88 && b2 == 0x92) folded = '-';                      // U+2212 minus
      if (b1 == 0x80 && b2 >= 0x98 && b2 <= 0x9B) folded = '\'';       // U+2018..U+201B
      if (b1 == 0x80 && b2 >= 0x9C && b2 <= 0x9F) folded = '"';        // U+201C..U+201F
      if (b1 == 0x80 && b2 >= 0x82 && b2 <= 0x8A) folded = ' ';        // U+2002..U+200A
      if ((b1 == 0x80 && b2 == 0xAF) || (b1 == 0x81 && b2 == 0x9F)) {  // U+202F, U+205F
        folded = ' ';
      }
      if (folded != 0) {
        out += folded;
        i += 3;
        continue;
      }
    }
    if (byte(0) == 0xE3 && i + 2 < s.size() && byte(1) == 0x80 && byte(2) == 0x80) {  // U+3000
      out += ' ';
      i += 3;
      continue;
    }
    out += s[i];
    ++i;
  }
  return out;
}

// Splits on '\n', dropping one '\r' before each '\n' (like Rust's str::lines).
std::vector<std::string_view> SplitPatchLines(std::string_view s) {
  std::vector<std::string_view> lines;
  while (!s.empty()) {
    size_t nl = s.find('\n');
    std::string_view line = s.substr(0, nl);
    if (nl != std::string_view::npos && line.ends_with('\r')) line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    s.remove_prefix(nl + 1);
  }
  return lines;
}

std::string OsError(int err) {
  return std::string(std::strerror(err)) + " (os error " + std::to_string(err) + ")";
}

// ---------------------------------------------------------------------------
// Parser

Status PatchError(std::string_view why) {
  return InvalidArgumentError("Invalid patch: " + std::string(why));
}

Status HunkError(size_t line_number, std::string_view why) {
  return InvalidArgumentError("Invalid patch hunk on line " + std::to_string(line_number) + ": " +
                              std::string(why));
}

Status CheckBoundaries(const std::vector<std::string_view>& lines) {
  if (lines.empty() || Trim(lines.front()) != kBeginPatch) {
    return PatchError("The first line of the patch must be '*** Begin Patch'");
  }
  if (Trim(lines.back()) != kEndPatch) {
    return PatchError("The last line of the patch must be '*** End Patch'");
  }
  return OkStatus();
}

bool IsHeredocOpener(std::string_view line) {
  return line == "<<EOF" || line == "<<'EOF'" || line == "<<\"EOF\"";
}

bool IsHunkHeader(std::string_view trimmed) {
  return trimmed.starts_with(kAddFile) || trimmed.starts_with(kDeleteFile) ||
         trimmed.starts_with(kUpdateFile);
}

// Parses one chunk starting at lines[*i] (before `end`), advancing *i.
Result<UpdateChunk> ParseChunk(const std::vector<std::string_view>& lines, size_t* i, size_t end,
                               bool allow_missing_header) {
  UpdateChunk chunk;
  const size_t first = *i;
  bool had_header = false;
  while (*i < end) {
    std::string_view line = lines[*i];
    if (TrimEnd(line) == "@@") {
      had_header = true;
    } else if (line.starts_with("@@ ")) {
      chunk.contexts.emplace_back(line.substr(3));
      had_header = true;
    } else {
      break;
    }
    ++*i;
  }
  if (!had_header && !allow_missing_header) {
    return HunkError(first + 1, "Expected update hunk to start with a @@ context marker, got: '" +
                                    std::string(lines[first]) + "'");
  }
  size_t parsed = 0;
  while (*i < end) {
    std::string_view line = lines[*i];
    if (TrimEnd(line) == kEndOfFile) {
      if (parsed == 0) break;
      chunk.end_of_file = true;
      ++*i;
      break;
    }
    if (IsHunkHeader(TrimStart(line))) break;
    PatchChunkLine chunk_line;
    if (line.empty()) {
      // A blank line is an empty context line.
      chunk_line.kind = PatchChunkLine::Kind::kContext;
    } else if (line[0] == ' ' || line[0] == '+' || line[0] == '-') {
      chunk_line.kind = line[0] == ' '   ? PatchChunkLine::Kind::kContext
                        : line[0] == '+' ? PatchChunkLine::Kind::kAdd
                                         : PatchChunkLine::Kind::kRemove;
      chunk_line.text = std::string(line.substr(1));
    } else if (parsed == 0) {
      return HunkError(*i + 1, "Unexpected line found in update hunk: '" + std::string(line) +
                                   "'. Every line should start with ' ' (context line), '+' "
                                   "(added line), or '-' (removed line)");
    } else {
      break;  // the next chunk (or something the caller reports)
    }
    chunk.lines.push_back(std::move(chunk_line));
    ++parsed;
    ++*i;
  }
  if (parsed == 0) return HunkError(*i + 1, "Update hunk does not contain any lines");
  return chunk;
}

// ---------------------------------------------------------------------------
// Locating chunks

// The line transformation of each matching pass, loosest last.
std::string ForPass(int pass, std::string_view s) {
  switch (pass) {
    case 0:
      return std::string(s);
    case 1:
      return std::string(TrimEnd(s));
    case 2:
      return std::string(Trim(s));
    default:
      return FoldPunctuation(Trim(s));
  }
}

// The first index >= start where `pattern` occurs in `lines` (only the last
// possible index when `eof`), trying each pass over the whole range before the
// next, looser one.
std::optional<size_t> SeekSequence(const std::vector<std::string>& lines,
                                   const std::vector<std::string>& pattern, size_t start,
                                   bool eof) {
  if (pattern.empty()) return start;
  if (pattern.size() > lines.size()) return std::nullopt;
  const size_t last = lines.size() - pattern.size();
  const size_t from = eof ? last : start;
  if (from > last) return std::nullopt;
  for (int pass = 0; pass < 4; ++pass) {
    std::vector<std::string> hay;
    hay.reserve(lines.size());
    for (const std::string& l : lines) hay.push_back(ForPass(pass, l));
    std::vector<std::string> needle;
    needle.reserve(pattern.size());
    for (const std::string& p : pattern) needle.push_back(ForPass(pass, p));
    for (size_t at = from; at <= last; ++at) {
      if (std::equal(needle.begin(), needle.end(), hay.begin() + static_cast<ptrdiff_t>(at))) {
        return at;
      }
    }
  }
  return std::nullopt;
}

// A file line and its own ending ("\r\n", "\n", or "" for a last line without one).
struct FileLine {
  std::string text;
  std::string eol;
};

std::vector<FileLine> SplitFileLines(std::string_view s) {
  std::vector<FileLine> lines;
  while (!s.empty()) {
    size_t nl = s.find('\n');
    if (nl == std::string_view::npos) {
      lines.push_back({std::string(s), ""});
      break;
    }
    std::string_view text = s.substr(0, nl);
    if (text.ends_with('\r')) {
      lines.push_back({std::string(text.substr(0, text.size() - 1)), "\r\n"});
    } else {
      lines.push_back({std::string(text), "\n"});
    }
    s.remove_prefix(nl + 1);
  }
  return lines;
}

// One line of an edit script: ' ' kept, '-' removed, '+' added.
struct DiffOp {
  char op;
  std::string text;
};

struct Replacement {
  size_t start = 0;
  size_t old_len = 0;
  std::vector<PatchChunkLine> ops;  // patch order; context/remove consume old lines
};

std::vector<std::string> OldOf(const std::vector<PatchChunkLine>& ops) {
  std::vector<std::string> out;
  for (const PatchChunkLine& l : ops) {
    if (l.kind != PatchChunkLine::Kind::kAdd) out.push_back(l.text);
  }
  return out;
}

// The chunk's old and new sides without their last line when it is empty
// (a trailing blank line standing for the file's final newline).
void DropTrailingBlank(std::vector<PatchChunkLine>* ops) {
  using Kind = PatchChunkLine::Kind;
  for (size_t k = ops->size(); k-- > 0;) {
    Kind kind = (*ops)[k].kind;
    if (kind == Kind::kAdd) continue;
    if (kind == Kind::kContext) {
      (*ops)[k].kind = Kind::kAdd;  // still on the new side
    } else {
      ops->erase(ops->begin() + static_cast<ptrdiff_t>(k));
    }
    break;
  }
  for (size_t k = ops->size(); k-- > 0;) {
    Kind kind = (*ops)[k].kind;
    if (kind == Kind::kRemove) continue;
    if (!(*ops)[k].text.empty()) break;
    if (kind == Kind::kContext) {
      (*ops)[k].kind = Kind::kRemove;  // still on the old side
    } else {
      ops->erase(ops->begin() + static_cast<ptrdiff_t>(k));
    }
    break;
  }
}

struct Edit {
  std::string new_text;
  std::vector<DiffOp> script;  // over the whole file
};

Result<Edit> ComputeEdit(std::string_view original, const std::vector<UpdateChunk>& chunks,
                         std::string_view display_path) {
  const std::vector<FileLine> lines = SplitFileLines(original);
  std::vector<std::string> texts;
  texts.reserve(lines.size());
  for (const FileLine& l : lines) texts.push_back(l.text);
  std::string file_eol = "\n";
  for (const FileLine& l : lines) {
    if (!l.eol.empty()) {
      file_eol = l.eol;
      break;
    }
  }

  std::vector<Replacement> replacements;
  size_t line_index = 0;
  for (const UpdateChunk& chunk : chunks) {
    for (const std::string& context : chunk.contexts) {
      std::optional<size_t> at = SeekSequence(texts, {context}, line_index, false);
      if (!at) {
        return FailedPreconditionError("Failed to find context '" + context + "' in " +
                                       std::string(display_path));
      }
      line_index = *at + 1;
    }
    Replacement r;
    r.ops = chunk.lines;
    std::vector<std::string> old_lines = OldOf(r.ops);
    if (old_lines.empty()) {
      // A pure addition goes at the end of the file (before a trailing blank line).
      r.start = !texts.empty() && texts.back().empty() ? texts.size() - 1 : texts.size();
      replacements.push_back(std::move(r));
      continue;
    }
    std::optional<size_t> at = SeekSequence(texts, old_lines, line_index, chunk.end_of_file);
    if (!at && old_lines.back().empty()) {
      DropTrailingBlank(&r.ops);
      old_lines = OldOf(r.ops);
      at = SeekSequence(texts, old_lines, line_index, chunk.end_of_file);
    }
    if (!at) {
      // The reference wording: the unmatched lines follow, one per line.
      std::string msg = "Failed to find expected lines in " + std::string(display_path) + ":";
      for (const std::string& l : chunk.OldLines()) msg += "\n" + l;
      return FailedPreconditionError(std::move(msg));
    }
    r.start = *at;
    r.old_len = old_lines.size();
    line_index = *at + old_lines.size();
    replacements.push_back(std::move(r));
  }
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const Replacement& a, const Replacement& b) { return a.start < b.start; });

  std::vector<FileLine> result;
  Edit edit;
  size_t pos = 0;
  auto keep = [&](size_t k) {
    result.push_back(lines[k]);
    edit.script.push_back({' ', lines[k].text});
  };
  for (const Replacement& r : replacements) {
    if (r.start < pos) {
      return FailedPreconditionError("Chunks of the patch for " + std::string(display_path) +
                                     " overlap; merge them into one chunk");
    }
    for (; pos < r.start; ++pos) keep(pos);
    for (const PatchChunkLine& op : r.ops) {
      switch (op.kind) {
        case PatchChunkLine::Kind::kContext:
          keep(pos++);  // the file's own text and ending, even when matched loosely
          break;
        case PatchChunkLine::Kind::kRemove:
          edit.script.push_back({'-', lines[pos++].text});
          break;
        case PatchChunkLine::Kind::kAdd:
          result.push_back({op.text, file_eol});
          edit.script.push_back({'+', op.text});
          break;
      }
    }
  }
  for (; pos < lines.size(); ++pos) keep(pos);
  for (FileLine& l : result) {
    edit.new_text += l.text;
    edit.new_text += l.eol.empty() ? file_eol : l.eol;
  }
  return edit;
}

// ---------------------------------------------------------------------------
// Unified diff

std::string RangeText(size_t start, size_t count) {
  // GNU/git convention: an empty range names the line before it; ",1" is implied.
  if (count == 1) return std::to_string(start + 1);
  return std::to_string(count == 0 ? start : start + 1) + "," + std::to_string(count);
}

std::string UnifiedDiff(const std::vector<DiffOp>& script) {
  const size_t n = script.size();
  std::vector<size_t> old_before(n + 1, 0), new_before(n + 1, 0);
  for (size_t k = 0; k < n; ++k) {
    old_before[k + 1] = old_before[k] + (script[k].op != '+' ? 1 : 0);
    new_before[k + 1] = new_before[k] + (script[k].op != '-' ? 1 : 0);
  }
  std::string out;
  size_t k = 0;
  while (k < n) {
    while (k < n && script[k].op == ' ') ++k;
    if (k == n) break;
    size_t begin = k >= kDiffContext ? k - kDiffContext : 0;
    size_t last_change = k;
    size_t scan = k + 1;
    while (scan < n) {
      if (script[scan].op != ' ') {
        last_change = scan;
      } else if (scan - last_change > 2 * kDiffContext) {
        break;
      }
      ++scan;
    }
    size_t end = std::min(n, last_change + 1 + kDiffContext);
    size_t old_count = old_before[end] - old_before[begin];
    size_t new_count = new_before[end] - new_before[begin];
    out += "@@ -" + RangeText(old_before[begin], old_count) + " +" +
           RangeText(new_before[begin], new_count) + " @@\n";
    for (size_t j = begin; j < end; ++j) {
      out += script[j].op;
      out += script[j].text;
      out += '\n';
    }
    k = end;
  }
  return out;
}

std::vector<DiffOp> WholeFileScript(std::string_view text, char op) {
  std::vector<DiffOp> script;
  for (FileLine& l : SplitFileLines(text)) script.push_back({op, std::move(l.text)});
  return script;
}

// ---------------------------------------------------------------------------
// Filesystem

std::string JoinPath(const std::string& dir, std::string_view name) {
  if (dir.ends_with('/')) return dir + std::string(name);
  return dir + "/" + std::string(name);
}

std::string ParentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return "/";
  return path.substr(0, slash);
}

std::deque<std::string> Components(std::string_view path) {
  std::deque<std::string> out;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view c = path.substr(0, slash);
    if (!c.empty()) out.emplace_back(c);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// Lexically normalised absolute path ("." and ".." resolved, no symlinks followed).
std::string LexicalNormal(const std::string& absolute) {
  std::string out = "/";
  for (const std::string& c : Components(absolute)) {
    if (c == ".") continue;
    if (c == "..") {
      out = ParentOf(out);
      continue;
    }
    out = JoinPath(out, c);
  }
  return out;
}

std::optional<std::string> RealPath(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

bool IsWithin(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (path.starts_with(root) && path[root.size()] == '/');
}

// Closes a file descriptor at scope exit.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

struct Workspace {
  std::string cwd;                 // canonical
  std::vector<std::string> roots;  // canonical
  bool dry_run = false;
  // Dry run: what earlier hunks wrote (content) or deleted (nullopt), by real path.
  std::map<std::string, std::optional<std::string>> overlay;

  std::string Shown(std::string_view rel) const { return JoinPath(cwd, rel); }

  std::string RootsText() const {
    std::string out;
    for (const std::string& r : roots) out += (out.empty() ? "" : ", ") + r;
    return out;
  }

  // The real path `rel` designates: `..` and every symlink resolved (the last
  // component too unless `follow_final` is false); missing components are
  // taken as plain names. Refuses absolute paths and anything that lands
  // outside the writable roots.
  Result<std::string> Resolve(std::string_view rel, bool follow_final) const {
    if (rel.empty()) {
      return InvalidArgumentError(
          "apply_patch got an empty path; name a file relative to the working directory");
    }
    if (rel.front() == '/') {
      return InvalidArgumentError("Refusing absolute path '" + std::string(rel) +
                                  "': apply_patch paths must be relative to the working "
                                  "directory " +
                                  cwd);
    }
    std::deque<std::string> todo = Components(rel);
    std::string cur = cwd;
    bool missing = false;
    bool via_symlink = false;
    int hops = 0;
    while (!todo.empty()) {
      std::string c = std::move(todo.front());
      todo.pop_front();
      if (c == ".") continue;
      if (c == "..") {
        cur = ParentOf(cur);
        missing = false;  // the parent of a resolved path exists again
        continue;
      }
      std::string next = JoinPath(cur, c);
      if (missing || (todo.empty() && !follow_final)) {
        cur = std::move(next);
        continue;
      }
      struct stat st;
      if (::lstat(next.c_str(), &st) != 0) {
        missing = true;
        cur = std::move(next);
        continue;
      }
      if (!S_ISLNK(st.st_mode)) {
        cur = std::move(next);
        continue;
      }
      if (++hops > kMaxSymlinkHops) {
        return InvalidArgumentError("Refusing path '" + std::string(rel) +
                                    "': too many levels of symbolic links");
      }
      std::string target(static_cast<size_t>(st.st_size > 0 ? st.st_size : PATH_MAX), '\0');
      ssize_t len = ::readlink(next.c_str(), target.data(), target.size());
      if (len < 0) {
        return InvalidArgumentError("Refusing path '" + std::string(rel) +
                                    "': cannot read symlink " + next + ": " + OsError(errno));
      }
      target.resize(static_cast<size_t>(len));
      via_symlink = true;
      if (target.starts_with('/')) cur = "/";
      std::deque<std::string> expanded = Components(target);
      todo.insert(todo.begin(), expanded.begin(), expanded.end());
    }
    for (const std::string& root : roots) {
      if (IsWithin(cur, root)) return cur;
    }
    return InvalidArgumentError("Refusing to touch '" + std::string(rel) + "': it resolves" +
                                (via_symlink ? " through a symlink" : "") + " to " + cur +
                                ", outside the writable roots (" + RootsText() +
                                "); use a path inside the workspace");
  }

  // Opens `real` (a path Resolve returned, so inside a root and free of
  // symlinks) without following any symlink on the way: a symlink swapped in
  // after Resolve fails the open (ELOOP/EXDEV) instead of redirecting it out of
  // the root. Uses openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS); where that
  // is unavailable (old kernel, seccomp) only the last component is guarded.
  // Returns the fd, or -1 with errno set.
  int OpenNoSymlinks(const std::string& real, int flags, mode_t mode) const {
    const std::string* root = nullptr;
    for (const std::string& r : roots) {
      if (IsWithin(real, r) && (root == nullptr || r.size() > root->size())) root = &r;
    }
    if (root != nullptr) {
      ScopedFd root_fd(::open(root->c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
      if (root_fd.get() < 0) return -1;
      std::string rel = real == *root ? "." : real.substr(*root == "/" ? 1 : root->size() + 1);
      struct open_how how = {};
      how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
      how.mode = (flags & O_CREAT) != 0 ? mode : 0;
      how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
      long fd = ::syscall(SYS_openat2, root_fd.get(), rel.c_str(), &how, sizeof how);
      if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);
    }
    return ::open(real.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, mode);
  }

  // 0 and the text, or an errno.
  int Read(const std::string& real, std::string* out) const {
    if (auto it = overlay.find(real); it != overlay.end()) {
      if (!it->second) return ENOENT;
      *out = *it->second;
      return 0;
    }
    int fd = OpenNoSymlinks(real, O_RDONLY, 0);
    if (fd < 0) return errno;
    out->clear();
    char buf[65536];
    for (;;) {
      ssize_t got = ::read(fd, buf, sizeof buf);
      if (got < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return err;
      }
      if (got == 0) break;
      out->append(buf, static_cast<size_t>(got));
    }
    ::close(fd);
    return 0;
  }

  // Creates the missing directories above `real`, each one inside its
  // (symlink-free) parent. 0 or an errno.
  int MakeParents(const std::string& real) const {
    const std::string parent = ParentOf(real);
    struct stat st;
    if (::lstat(parent.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    if (errno != ENOENT) return errno;
    // Only directories strictly inside a root are created, never a root or above.
    if (std::none_of(roots.begin(), roots.end(),
                     [&](const std::string& r) { return parent != r && IsWithin(parent, r); })) {
      return ENOENT;
    }
    if (int err = MakeParents(parent)) return err;
    ScopedFd dir(OpenNoSymlinks(ParentOf(parent), O_PATH | O_DIRECTORY, 0));
    if (dir.get() < 0) return errno;
    if (::mkdirat(dir.get(), BaseName(parent).c_str(), 0777) != 0 && errno != EEXIST) {
      return errno;
    }
    return 0;
  }

  Status Write(const std::string& real, std::string_view rel, const std::string& content,
               std::optional<mode_t> mode) {
    if (dry_run) {
      struct stat st;
      if (::stat(real.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && !overlay.contains(real)) {
        return FailedPreconditionError("Failed to write file " + Shown(rel) + ": " +
                                       OsError(EISDIR));
      }
      overlay[real] = content;
      return OkStatus();
    }
    if (int err = MakeParents(real)) {
      return FailedPreconditionError("Failed to create parent directories for " + Shown(rel) +
                                     ": " + OsError(err));
    }
    int fd = OpenNoSymlinks(real, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
      return FailedPreconditionError("Failed to write file " + Shown(rel) + ": " + OsError(errno));
    }
    size_t done = 0;
    while (done < content.size()) {
      ssize_t put = ::write(fd, content.data() + done, content.size() - done);
      if (put < 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd);
        return FailedPreconditionError("Failed to write file " + Shown(rel) + ": " + OsError(err));
      }
      done += static_cast<size_t>(put);
    }
    if (mode) (void)::fchmod(fd, *mode);
    if (::close(fd) != 0) {
      return FailedPreconditionError("Failed to write file " + Shown(rel) + ": " + OsError(errno));
    }
    return OkStatus();
  }

  // 0 or an errno. Never removes directories.
  int Remove(const std::string& real) {
    if (dry_run) {
      if (auto it = overlay.find(real); it != overlay.end()) {
        if (!it->second) return ENOENT;
      } else {
        struct stat st;
        if (::lstat(real.c_str(), &st) != 0) return errno;
        if (S_ISDIR(st.st_mode)) return EISDIR;
      }
      overlay[real] = std::nullopt;
      return 0;
    }
    // The parent is opened symlink-free; the name itself may be a symlink,
    // which unlinkat removes without touching its target.
    ScopedFd dir(OpenNoSymlinks(ParentOf(real), O_PATH | O_DIRECTORY, 0));
    if (dir.get() < 0) return errno;
    return ::unlinkat(dir.get(), BaseName(real).c_str(), 0) == 0 ? 0 : errno;
  }
};

Result<Workspace> OpenWorkspace(const ApplyPatchOptions& opts) {
  Workspace ws;
  std::string cwd = opts.cwd;
  if (cwd.empty()) {
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf) == nullptr) {
      return FailedPreconditionError("cannot determine the current directory: " + OsError(errno));
    }
    cwd = buf;
  }
  std::optional<std::string> real_cwd = RealPath(cwd);
  struct stat st;
  if (!real_cwd || ::stat(real_cwd->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return FailedPreconditionError("working directory " + cwd +
                                   " does not exist or is not a directory; pass an existing "
                                   "directory");
  }
  ws.cwd = *real_cwd;
  for (const std::string& root : opts.writable_roots) {
    if (root.empty()) continue;
    std::string absolute = root.front() == '/' ? root : JoinPath(ws.cwd, root);
    std::optional<std::string> real = RealPath(absolute);
    ws.roots.push_back(real ? *real : LexicalNormal(absolute));
  }
  if (ws.roots.empty()) ws.roots.push_back(ws.cwd);
  return ws;
}

Result<ApplyPatchOutcome> RunPatch(const ParsedPatch& patch, const ApplyPatchOptions& opts,
                                   bool dry_run) {
  if (patch.hunks.empty()) return InvalidArgumentError("No files were modified.");
  ASSIGN_OR_RETURN(Workspace ws, OpenWorkspace(opts));
  ws.dry_run = dry_run;

  // Safety first: refuse the whole patch before writing anything.
  for (const PatchHunk& hunk : patch.hunks) {
    RETURN_IF_ERROR(ws.Resolve(hunk.path, hunk.kind != PatchHunkKind::kDelete).status());
    if (!hunk.move_path.empty()) RETURN_IF_ERROR(ws.Resolve(hunk.move_path, true).status());
  }

  ApplyPatchOutcome outcome;
  for (const PatchHunk& hunk : patch.hunks) {
    FileChange change;
    change.path = hunk.path;
    switch (hunk.kind) {
      case PatchHunkKind::kAdd: {
        ASSIGN_OR_RETURN(std::string real, ws.Resolve(hunk.path, true));
        RETURN_IF_ERROR(ws.Write(real, hunk.path, hunk.contents, std::nullopt));
        change.kind = FileChangeKind::kAdd;
        change.new_content = hunk.contents;
        change.unified_diff = UnifiedDiff(WholeFileScript(hunk.contents, '+'));
        outcome.added.push_back(hunk.path);
        break;
      }
      case PatchHunkKind::kDelete: {
        ASSIGN_OR_RETURN(std::string real, ws.Resolve(hunk.path, false));
        std::string old_text;
        struct stat st;
        bool regular = ::lstat(real.c_str(), &st) == 0 && S_ISREG(st.st_mode);
        if ((regular || ws.overlay.contains(real)) && ws.Read(real, &old_text) != 0) {
          old_text.clear();
        }
        if (ws.Remove(real) != 0) {
          return FailedPreconditionError("Failed to delete file " + ws.Shown(hunk.path));
        }
        change.kind = FileChangeKind::kDelete;
        change.unified_diff = UnifiedDiff(WholeFileScript(old_text, '-'));
        outcome.deleted.push_back(hunk.path);
        break;
      }
      case PatchHunkKind::kUpdate: {
        ASSIGN_OR_RETURN(std::string real, ws.Resolve(hunk.path, true));
        std::string old_text;
        if (int err = ws.Read(real, &old_text)) {
          return FailedPreconditionError("Failed to read file to update " + ws.Shown(hunk.path) +
                                         ": " + OsError(err));
        }
        ASSIGN_OR_RETURN(Edit edit, ComputeEdit(old_text, hunk.chunks, ws.Shown(hunk.path)));
        change.kind = FileChangeKind::kUpdate;
        change.unified_diff = UnifiedDiff(edit.script);
        change.new_content = edit.new_text;
        if (hunk.move_path.empty()) {
          RETURN_IF_ERROR(ws.Write(real, hunk.path, edit.new_text, std::nullopt));
          outcome.modified.push_back(hunk.path);
        } else {
          ASSIGN_OR_RETURN(std::string dest, ws.Resolve(hunk.move_path, true));
          std::optional<mode_t> mode;
          struct stat st;
          if (::stat(real.c_str(), &st) == 0) mode = st.st_mode & 07777;
          RETURN_IF_ERROR(ws.Write(dest, hunk.move_path, edit.new_text, mode));
          if (dest != real) {
            if (int err = ws.Remove(real)) {
              return FailedPreconditionError("Failed to remove original " + ws.Shown(hunk.path) +
                                             ": " + OsError(err));
            }
          }
          change.move_path = hunk.move_path;
          outcome.modified.push_back(hunk.move_path);
        }
        break;
      }
    }
    outcome.changes.push_back(std::move(change));
  }
  return outcome;
}

// ---------------------------------------------------------------------------
// Shell invocations

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// A shell word: 'single quoted', "double quoted" (with \" and \\), or bare.
std::optional<std::string> ReadShellWord(std::string_view s, size_t* p) {
  std::string word;
  if (*p >= s.size()) return std::nullopt;
  char q = s[*p];
  if (q == '\'' || q == '"') {
    ++*p;
    while (*p < s.size() && s[*p] != q) {
      if (q == '"' && s[*p] == '\\' && *p + 1 < s.size() &&
          (s[*p + 1] == '"' || s[*p + 1] == '\\' || s[*p + 1] == '$' || s[*p + 1] == '`')) {
        ++*p;
      } else if (q == '"' && (s[*p] == '$' || s[*p] == '`')) {
        return std::nullopt;  // expansions: not a plain path
      }
      word += s[(*p)++];
    }
    if (*p >= s.size()) return std::nullopt;
    ++*p;
    return word;
  }
  constexpr std::string_view kSpecial = " \t\r\n;&|<>()'\"$`\\*?[]{}~#";
  while (*p < s.size() && kSpecial.find(s[*p]) == std::string_view::npos) word += s[(*p)++];
  if (word.empty()) return std::nullopt;
  return word;
}

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

std::string_view Basename(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

// ---------------------------------------------------------------------------
// Public API

std::vector<std::string> UpdateChunk::OldLines() const { return OldOf(lines); }

std::vector<std::string> UpdateChunk::NewLines() const {
  std::vector<std::string> out;
  for (const PatchChunkLine& l : lines) {
    if (l.kind != PatchChunkLine::Kind::kRemove) out.push_back(l.text);
  }
  return out;
}

Result<ParsedPatch> ParsePatch(std::string_view patch_text) {
  std::vector<std::string_view> lines = SplitPatchLines(Trim(patch_text));
  if (Status strict = CheckBoundaries(lines); !strict.ok()) {
    // Lenient: a patch wrapped in a heredoc, as models sometimes send it.
    if (lines.size() < 4 || !IsHeredocOpener(lines.front()) || !lines.back().ends_with("EOF")) {
      return strict;
    }
    lines = std::vector<std::string_view>(lines.begin() + 1, lines.end() - 1);
    RETURN_IF_ERROR(CheckBoundaries(lines));
  }
  ParsedPatch patch;
  const size_t end = lines.size() - 1;
  size_t i = 1;
  while (i < end) {
    std::string_view header = Trim(lines[i]);
    PatchHunk hunk;
    hunk.line_number = static_cast<int>(i + 1);
    if (header.starts_with(kAddFile)) {
      hunk.kind = PatchHunkKind::kAdd;
      hunk.path = std::string(header.substr(kAddFile.size()));
      ++i;
      while (i < end && lines[i].starts_with('+')) {
        hunk.contents += lines[i].substr(1);
        hunk.contents += '\n';
        ++i;
      }
    } else if (header.starts_with(kDeleteFile)) {
      hunk.kind = PatchHunkKind::kDelete;
      hunk.path = std::string(header.substr(kDeleteFile.size()));
      ++i;
    } else if (header.starts_with(kUpdateFile)) {
      hunk.kind = PatchHunkKind::kUpdate;
      hunk.path = std::string(header.substr(kUpdateFile.size()));
      ++i;
      if (i < end && Trim(lines[i]).starts_with(kMoveTo)) {
        hunk.move_path = std::string(Trim(lines[i]).substr(kMoveTo.size()));
        ++i;
      }
      while (i < end) {
        if (Trim(lines[i]).empty()) {
          ++i;  // blank lines between chunks
          continue;
        }
        if (lines[i].starts_with("***")) break;
        ASSIGN_OR_RETURN(UpdateChunk chunk, ParseChunk(lines, &i, end, hunk.chunks.empty()));
        hunk.chunks.push_back(std::move(chunk));
      }
      if (hunk.chunks.empty()) {
        return HunkError(static_cast<size_t>(hunk.line_number),
                         "Update file hunk for path '" + hunk.path + "' is empty");
      }
    } else {
      return HunkError(i + 1, "'" + std::string(header) +
                                  "' is not a valid hunk header. Valid hunk headers: '*** Add "
                                  "File: {path}', '*** Delete File: {path}', '*** Update File: "
                                  "{path}'");
    }
    patch.hunks.push_back(std::move(hunk));
  }
  return patch;
}

Result<std::string> ApplyChunksToText(std::string_view original,
                                      const std::vector<UpdateChunk>& chunks,
                                      std::string_view display_path) {
  ASSIGN_OR_RETURN(Edit edit, ComputeEdit(original, chunks, display_path));
  return std::move(edit.new_text);
}

std::string_view FileChangeKindName(FileChangeKind kind) {
  switch (kind) {
    case FileChangeKind::kAdd:
      return "add";
    case FileChangeKind::kDelete:
      return "delete";
    case FileChangeKind::kUpdate:
      return "update";
  }
  return "update";
}

std::string ApplyPatchOutcome::Summary() const {
  std::string out = "Success. Updated the following files:\n";
  for (const std::string& p : added) out += "A " + p + "\n";
  for (const std::string& p : modified) out += "M " + p + "\n";
  for (const std::string& p : deleted) out += "D " + p + "\n";
  return out;
}

Result<ApplyPatchOutcome> ApplyPatch(std::string_view patch_text, const ApplyPatchOptions& opts) {
  ASSIGN_OR_RETURN(ParsedPatch patch, ParsePatch(patch_text));
  return ApplyParsedPatch(patch, opts);
}

Result<ApplyPatchOutcome> ApplyParsedPatch(const ParsedPatch& patch,
                                           const ApplyPatchOptions& opts) {
  return RunPatch(patch, opts, /*dry_run=*/false);
}

Result<ApplyPatchOutcome> PreviewPatch(const ParsedPatch& patch, const ApplyPatchOptions& opts) {
  return RunPatch(patch, opts, /*dry_run=*/true);
}

Result<std::optional<ShellApplyPatch>> MatchShellApplyPatch(const std::vector<std::string>& argv) {
  std::optional<ShellApplyPatch> found;
  if (argv.size() == 2 && (argv[0] == "apply_patch" || argv[0] == "applypatch")) {
    found = ShellApplyPatch{argv[1], ""};
  } else if (argv.size() == 3 && (argv[1] == "-lc" || argv[1] == "-c")) {
    std::string_view shell = Basename(argv[0]);
    if (shell == "bash" || shell == "zsh" || shell == "sh") found = MatchHeredocScript(argv[2]);
  }
  if (!found) return std::optional<ShellApplyPatch>();
  RETURN_IF_ERROR(ParsePatch(found->patch).status());
  return found;
}

}  // namespace codex::core
