#include "cli/interactive/prompt_history.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/file.h"
#include "base/json.h"

namespace codex::cli {

std::vector<std::string> PromptHistory::Load(size_t max_entries) const {
  std::vector<std::string> out;
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("text") || !j["text"].is_string()) continue;
    std::string text = j["text"].get<std::string>();
    if (!out.empty() && out.back() == text) continue;
    out.push_back(std::move(text));
  }
  if (out.size() > max_entries) out.erase(out.begin(), out.end() - static_cast<long>(max_entries));
  return out;
}

Status PromptHistory::Append(std::string_view session_id, std::string_view text,
                             int64_t unix_seconds) const {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return OkStatus();
  nlohmann::json j = {{"session_id", session_id}, {"ts", unix_seconds}, {"text", text}};
  std::string line = Dump(j) + "\n";
  int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    return UnavailableError("cannot open " + path_ + ": " + std::strerror(errno) +
                            "; prompt history is not saved");
  }
  if (max_bytes_ > 0) ::flock(fd, LOCK_EX);  // a trim in another process waits
  // A line cut by a crash (a process killed inside the write of a long
  // prompt) has no newline: this entry starts a line of its own rather than
  // being glued to it and lost with it.
  struct stat st {};
  char last = '\n';
  if (::fstat(fd, &st) == 0 && st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) == 1 &&
      last != '\n') {
    line.insert(0, 1, '\n');
  }
  ssize_t n;
  do {
    n = ::write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  int saved = errno;
  Status trimmed = OkStatus();
  if (n == static_cast<ssize_t>(line.size()) && max_bytes_ > 0) trimmed = Trim(fd);
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size())) {
    return UnavailableError("cannot write " + path_ + ": " + std::strerror(saved));
  }
  return trimmed;
}

Status PromptHistory::Trim(int fd) const {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= max_bytes_) return OkStatus();
  const auto read = ReadWholeFile(path_);
  if (!read.ok()) return UnavailableError("cannot trim " + read.status().message());
  const std::string& text = *read;
  // The newest whole lines that fit.
  size_t start = text.size();
  while (start > 0) {
    const size_t prev = start >= 2 ? text.rfind('\n', start - 2) : std::string::npos;
    const size_t line_start = prev == std::string::npos ? 0 : prev + 1;
    if (static_cast<int64_t>(text.size() - line_start) > max_bytes_) break;
    start = line_start;
  }
  const std::string tmp = path_ + ".trim";
  int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) return UnavailableError("cannot trim " + path_ + ": " + std::strerror(errno));
  const std::string kept = text.substr(start);
  const bool written = ::write(out, kept.data(), kept.size()) == static_cast<ssize_t>(kept.size());
  ::close(out);
  if (!written || ::rename(tmp.c_str(), path_.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return UnavailableError("cannot trim " + path_ + " to history.max_bytes");
  }
  return OkStatus();
}

}  // namespace codex::cli
