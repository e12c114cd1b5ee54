#include "cli/interactive/command_text.h"

#include "base/shell.h"
#include "core/tool_router.h"

namespace codex::cli {

namespace {

// Splits a ShellJoin() line back into its words; false when the line is
// not in that form.
bool SplitJoined(std::string_view s, std::vector<std::string>* words) {
  std::string word;
  bool in_word = false;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ') {
      if (in_word) words->push_back(word);
      word.clear();
      in_word = false;
      ++i;
    } else if (c == '\'') {
      size_t end = s.find('\'', i + 1);
      if (end == std::string_view::npos) return false;
      word.append(s.substr(i + 1, end - i - 1));
      in_word = true;
      i = end + 1;  // a quote inside a word is written '\'' : quoted, \', quoted
    } else if (c == '\\' && i + 1 < s.size()) {
      word += s[i + 1];
      in_word = true;
      i += 2;
    } else {
      word += c;
      in_word = true;
      ++i;
    }
  }
  if (in_word) words->push_back(word);
  return true;
}

}  // namespace

std::string ShownCommand(const std::vector<std::string>& argv) {
  if (const auto script = ShellScriptOf(argv)) return std::string(*script);
  return ShellJoin(argv);
}

std::string ShownCommandLine(std::string_view joined) {
  std::vector<std::string> words;
  if (!SplitJoined(joined, &words)) return std::string(joined);
  if (ShellJoin(words) != joined) return std::string(joined);  // not ShellJoin's form
  return ShownCommand(words);
}

}  // namespace codex::cli
