#include "cli/interactive/code_highlight.h"

#include <srchilite/instances.h>
#include <srchilite/langmap.h>
#include <srchilite/sourcehighlight.h>

#include <exception>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>

namespace codex::cli {

namespace {

struct Highlighter {
  std::mutex mutex;
  std::optional<srchilite::SourceHighlight> highlight;
  srchilite::LangMap* langs = nullptr;
  bool failed = false;
  // The last blocks highlighted: a streamed message is laid out again as it
  // grows, and its finished blocks must not be highlighted each time.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> cache;
};

Highlighter& Instance() {
  static Highlighter* h = new Highlighter();  // never destroyed: used until exit
  return *h;
}

// The language definition file for a fence's info word, "" when none.
std::string LangFile(srchilite::LangMap& langs, const std::string& lang) {
  std::string file = langs.getMappedFileName(lang);
  if (file.empty()) file = langs.getMappedFileNameFromFileName("code." + lang);
  return file;
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
  try {
    if (!h.highlight) {
      h.highlight.emplace("esc.outlang");
      h.highlight->setStyleFile("esc.style");
      h.langs = srchilite::Instances::getLangMap();
      h.langs->open();
    }
    const std::string file = LangFile(*h.langs, key.first);
    if (file.empty()) return std::nullopt;
    std::istringstream in(key.second + "\n");
    std::ostringstream out;
    h.highlight->highlight(in, out, file);
    std::vector<std::string> lines;
    const std::string text = out.str();
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
  } catch (const std::exception&) {
    h.failed = true;  // no data files: plain code blocks from now on
    return std::nullopt;
  }
}

}  // namespace codex::cli
