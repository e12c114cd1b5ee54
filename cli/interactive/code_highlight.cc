#include "cli/interactive/code_highlight.h"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <utility>

#include "cli/interactive/code_highlight_module.h"
#include "sandbox/launcher.h"

namespace codex::cli {

namespace {

struct Highlighter {
  std::mutex mutex;
  HighlightCodeFn highlight = nullptr;  // from codex-highlight.so, loaded at first use
  bool failed = false;
  // The last blocks highlighted: a streamed message is laid out again as it
  // grows, and its finished blocks must not be highlighted each time.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> cache;
};

Highlighter& Instance() {
  static Highlighter* h = new Highlighter();  // never destroyed: used until exit
  return *h;
}

// The module's function, nullptr when the module is not beside codex or
// cannot be loaded (code blocks then keep the one code colour).
HighlightCodeFn LoadHighlightModule() {
  const std::string path = sandbox::FileBesideSelf(kHighlightModule);
  if (path.empty()) return nullptr;
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return nullptr;
  void* fn = ::dlsym(handle, kHighlightSymbol);
  return fn == nullptr ? nullptr : reinterpret_cast<HighlightCodeFn>(fn);
}

void AppendHighlighted(void* ctx, const char* text, size_t len) {
  static_cast<std::string*>(ctx)->append(text, len);
}

}  // namespace

std::optional<std::vector<std::string>> HighlightCode(std::string_view code,
                                                      std::string_view lang) {
  if (lang.empty()) return std::nullopt;
  Highlighter& h = Instance();
  std::lock_guard<std::mutex> lock(h.mutex);
  if (h.failed) return std::nullopt;
  auto key = std::make_pair(std::string(lang), std::string(code));
  if (auto it = h.cache.find(key); it != h.cache.end()) return it->second;
  if (h.highlight == nullptr) h.highlight = LoadHighlightModule();
  if (h.highlight == nullptr) {
    h.failed = true;
    return std::nullopt;
  }
  std::string text;
  const int done = h.highlight(key.second.data(), key.second.size(), key.first.data(),
                               key.first.size(), &AppendHighlighted, &text);
  if (done < 0) h.failed = true;  // no data files: plain code blocks from now on
  if (done <= 0) return std::nullopt;
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(pos, nl - pos) + "\x1b[m");
    pos = nl + 1;
  }
  if (h.cache.size() > 64) h.cache.clear();
  h.cache.emplace(std::move(key), lines);
  return lines;
}

}  // namespace codex::cli
