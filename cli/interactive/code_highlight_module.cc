// codex-highlight.so: GNU Source-highlight behind the C function of
// cli/interactive/code_highlight_module.h. Not thread-safe: the caller
// (code_highlight.cc) holds its lock around each call.
#include "cli/interactive/code_highlight_module.h"

#include <srchilite/instances.h>
#include <srchilite/langmap.h>
#include <srchilite/sourcehighlight.h>

#include <exception>
#include <optional>
#include <sstream>
#include <string>

namespace {

std::optional<srchilite::SourceHighlight> g_highlight;
srchilite::LangMap* g_langs = nullptr;

// The language definition file for a fence's info word, "" when none.
std::string LangFile(srchilite::LangMap& langs, const std::string& lang) {
  std::string file = langs.getMappedFileName(lang);
  if (file.empty()) file = langs.getMappedFileNameFromFileName("code." + lang);
  return file;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int codex_highlight_code(
    const char* code, size_t code_len, const char* lang, size_t lang_len,
    codex::cli::HighlightEmit emit, void* ctx) {
  try {
    if (!g_highlight) {
      g_highlight.emplace("esc.outlang");
      g_highlight->setStyleFile("esc.style");
      g_langs = srchilite::Instances::getLangMap();
      g_langs->open();
    }
    const std::string file = LangFile(*g_langs, std::string(lang, lang_len));
    if (file.empty()) return 0;
    std::istringstream in(std::string(code, code_len) + "\n");
    std::ostringstream out;
    g_highlight->highlight(in, out, file);
    const std::string text = out.str();
    emit(ctx, text.data(), text.size());
    return 1;
  } catch (const std::exception&) {
    return -1;  // no data files
  }
}
