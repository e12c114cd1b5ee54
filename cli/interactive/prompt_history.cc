#include "cli/interactive/prompt_history.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

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
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    return UnavailableError("cannot open " + path_ + ": " + std::strerror(errno) +
                            "; prompt history is not saved");
  }
  ssize_t n;
  do {
    n = ::write(fd, line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  int saved = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size())) {
    return UnavailableError("cannot write " + path_ + ": " + std::strerror(saved));
  }
  return OkStatus();
}

}  // namespace codex::cli
