#include "compaction/shell_edits.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <utility>

#include "base/shell.h"
#include "sandbox/shell_lexer.h"

namespace codex::compaction {

namespace {

// Stands for the N-th output redirection of a script once it is cut out, so
// that it stays with its command when the rest is split by the shell lexer.
constexpr std::string_view kRedirectWord = "__codex_output_redirection_";

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool EndsWord(char c) {
  return IsBlank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' ||
         c == '(' || c == ')';
}

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool IsSpecialDevice(std::string_view path) {
  return path == "/dev/null" || path == "/dev/stdout" || path == "/dev/stderr" ||
         path == "/dev/tty" || path.substr(0, 8) == "/dev/fd/";
}

// A script with its redirections cut out: each output redirection whose
// target is a literal word becomes kRedirectWord + index into `targets`;
// input redirections, fd duplications and here-document bodies are removed.
struct Redirections {
  std::string rest;
  std::vector<std::string> targets;
};

class RedirectionScanner {
 public:
  explicit RedirectionScanner(std::string_view s) : s_(s) {}

  Redirections Run() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\'') {
        const size_t end = s_.find('\'', i_ + 1);
        const size_t stop = end == std::string_view::npos ? s_.size() : end + 1;
        Copy(stop);
      } else if (c == '"') {
        Copy(DoubleQuoteEnd(i_));
      } else if (c == '\\') {
        Copy(std::min(s_.size(), i_ + 2));
      } else if (c == '#' && AtWordStart()) {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '\n') {
        Copy(i_ + 1);
        SkipHereDocuments();
      } else if (c == '>' || (c == '&' && Peek(1) == '>')) {
        OutputRedirection();
      } else if (c == '<') {
        InputRedirection();
      } else {
        Copy(i_ + 1);
      }
    }
    return std::move(out_);
  }

 private:
  char Peek(size_t ahead) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }

  bool AtWordStart() const { return out_.rest.empty() || EndsWord(out_.rest.back()); }

  void Copy(size_t stop) {
    out_.rest.append(s_.substr(i_, stop - i_));
    i_ = stop;
  }

  size_t DoubleQuoteEnd(size_t open) const {
    size_t j = open + 1;
    while (j < s_.size() && s_[j] != '"') j += s_[j] == '\\' ? 2 : 1;
    return std::min(s_.size(), j + 1);
  }

  // Digits just written that name the redirected fd (`2>`) go with it.
  void DropFdDigits() {
    size_t k = out_.rest.size();
    while (k > 0 && out_.rest[k - 1] >= '0' && out_.rest[k - 1] <= '9') --k;
    if (k < out_.rest.size() && (k == 0 || EndsWord(out_.rest[k - 1]))) out_.rest.resize(k);
  }

  void SkipBlanks() {
    while (i_ < s_.size() && IsBlank(s_[i_])) ++i_;
  }

  // Reads the word at i_ with quotes removed; nullopt when it is not a
  // literal (an expansion, a glob, a substitution: not detectable).
  std::optional<std::string> Word() {
    std::string word;
    bool literal = true;
    const size_t start = i_;
    while (i_ < s_.size() && !EndsWord(s_[i_])) {
      const char c = s_[i_];
      if (c == '\'') {
        const size_t end = s_.find('\'', i_ + 1);
        if (end == std::string_view::npos) {
          i_ = s_.size();
          return std::nullopt;
        }
        word.append(s_.substr(i_ + 1, end - i_ - 1));
        i_ = end + 1;
      } else if (c == '"') {
        const size_t end = DoubleQuoteEnd(i_);
        for (size_t j = i_ + 1; j + 1 < end; ++j) {
          if (s_[j] == '$' || s_[j] == '`') literal = false;
          if (s_[j] == '\\' && j + 2 < end) ++j;
          word.push_back(s_[j]);
        }
        i_ = end;
      } else if (c == '\\') {
        if (i_ + 1 < s_.size() && s_[i_ + 1] != '\n') word.push_back(s_[i_ + 1]);
        i_ += 2;
      } else {
        if (c == '$' || c == '`' || c == '*' || c == '?' || c == '[' || c == '{' ||
            (c == '~' && i_ == start)) {
          literal = false;
        }
        word.push_back(c);
        ++i_;
      }
    }
    i_ = std::min(i_, s_.size());
    if (!literal || word.empty()) return std::nullopt;
    return word;
  }

  void OutputRedirection() {
    DropFdDigits();
    if (s_[i_] == '&') ++i_;  // &> and &>>
    ++i_;                     // >
    if (Peek(0) == '>' || Peek(0) == '|') ++i_;
    if (Peek(0) == '&') {
      // >&N duplicates an fd; >&- closes it; >&FILE is &>FILE.
      ++i_;
      SkipBlanks();
      const size_t start = i_;
      std::optional<std::string> word = Word();
      if (word && (*word == "-" || std::all_of(word->begin(), word->end(),
                                               [](char d) { return d >= '0' && d <= '9'; }))) {
        out_.rest += ' ';
        return;
      }
      i_ = start;
    } else if (Peek(0) == '(') {
      out_.rest += '>';  // process substitution: left for the lexer to refuse
      return;
    }
    SkipBlanks();
    std::optional<std::string> target = Word();
    out_.rest += ' ';
    if (!target || IsSpecialDevice(*target)) return;
    out_.rest += std::string(kRedirectWord) + std::to_string(out_.targets.size()) + ' ';
    out_.targets.push_back(std::move(*target));
  }

  void InputRedirection() {
    DropFdDigits();
    ++i_;                                    // <
    if (Peek(0) == '<' && Peek(1) == '<') {  // here-string: its word is data
      i_ += 2;
      SkipBlanks();
      (void)Word();
    } else if (Peek(0) == '<') {  // here-document
      ++i_;
      const bool strip_tabs = Peek(0) == '-';
      if (strip_tabs) ++i_;
      SkipBlanks();
      std::string delimiter;
      const size_t start = i_;
      (void)Word();
      for (size_t j = start; j < i_; ++j) {
        if (s_[j] != '\'' && s_[j] != '"' && s_[j] != '\\') delimiter.push_back(s_[j]);
      }
      here_docs_.push_back({delimiter, strip_tabs});
    } else if (Peek(0) == '>') {  // <> opens for reading and writing
      OutputRedirectionAfterOperator();
      return;
    } else {
      if (Peek(0) == '&') ++i_;
      SkipBlanks();
      (void)Word();
    }
    out_.rest += ' ';
  }

  void OutputRedirectionAfterOperator() {
    ++i_;  // the '>' of <>
    SkipBlanks();
    std::optional<std::string> target = Word();
    out_.rest += ' ';
    if (!target || IsSpecialDevice(*target)) return;
    out_.rest += std::string(kRedirectWord) + std::to_string(out_.targets.size()) + ' ';
    out_.targets.push_back(std::move(*target));
  }

  // After a newline: the bodies of the here-documents opened on that line.
  void SkipHereDocuments() {
    for (const auto& [delimiter, strip_tabs] : here_docs_) {
      while (i_ < s_.size()) {
        size_t end = s_.find('\n', i_);
        if (end == std::string_view::npos) end = s_.size();
        std::string_view line = s_.substr(i_, end - i_);
        i_ = std::min(s_.size(), end + 1);
        if (strip_tabs) {
          while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        }
        if (line == delimiter) break;
      }
    }
    here_docs_.clear();
  }

  std::string_view s_;
  size_t i_ = 0;
  Redirections out_;
  std::vector<std::pair<std::string, bool>> here_docs_;
};

bool IsAssignment(std::string_view word) {
  const size_t eq = word.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
}

// Collects paths, resolving relative ones against the current directory of
// the script (the call's workdir, then what `cd` changed it to).
class Collector {
 public:
  explicit Collector(std::string_view workdir) : dir_(workdir) {}

  void Add(std::string_view path) {
    if (path.empty() || IsSpecialDevice(path)) return;
    std::string full;
    if (path.front() == '/') {
      full = path;
    } else {
      if (dir_unknown_) return;
      while (path.substr(0, 2) == "./") path.remove_prefix(2);
      if (path.empty() || path == ".") return;
      full = dir_.empty() ? std::string(path) : dir_ + "/" + std::string(path);
    }
    if (std::find(files_.begin(), files_.end(), full) == files_.end()) files_.push_back(full);
  }

  void ChangeDirectory(const std::vector<std::string>& args) {
    if (args.size() != 1 || args[0] == "-" || args[0].empty()) {
      dir_unknown_ = true;  // cd, cd -, cd with options: not followed
      return;
    }
    std::string_view to = args[0];
    while (to.size() > 1 && to.back() == '/') to.remove_suffix(1);
    if (to.front() == '/') {
      dir_ = to;
      dir_unknown_ = false;
    } else if (to != ".") {
      dir_ = dir_.empty() ? std::string(to) : dir_ + "/" + std::string(to);
    }
  }

  std::vector<std::string> Take() { return std::move(files_); }

 private:
  std::string dir_;
  bool dir_unknown_ = false;
  std::vector<std::string> files_;
};

// The operands of a command whose options are in `with_value` (short
// letters and long names taking the next word); options themselves dropped.
std::vector<std::string> Operands(
    const std::vector<std::string>& args, std::string_view short_with_value,
    std::initializer_list<std::string_view> long_with_value,
    std::vector<std::pair<std::string, std::string>>* values = nullptr) {
  std::vector<std::string> out;
  bool options = true;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!options || a == "-" || a.size() < 2 || a[0] != '-') {
      out.push_back(a);
      continue;
    }
    if (a == "--") {
      options = false;
      continue;
    }
    if (a[1] == '-') {
      const size_t eq = a.find('=');
      const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const bool takes =
          std::find(long_with_value.begin(), long_with_value.end(), name) != long_with_value.end();
      if (takes && eq != std::string::npos && values) values->emplace_back(name, a.substr(eq + 1));
      if (takes && eq == std::string::npos && i + 1 < args.size()) {
        if (values) values->emplace_back(name, args[i + 1]);
        ++i;
      }
      continue;
    }
    for (size_t k = 1; k < a.size(); ++k) {
      if (short_with_value.find(a[k]) == std::string_view::npos) continue;
      if (k + 1 < a.size()) {
        if (values) values->emplace_back(std::string(1, a[k]), a.substr(k + 1));
      } else if (i + 1 < args.size()) {
        if (values) values->emplace_back(std::string(1, a[k]), args[i + 1]);
        ++i;
      }
      break;
    }
  }
  return out;
}

// sed and perl: the files edited in place (empty without -i).
std::vector<std::string> InPlaceFiles(const std::vector<std::string>& args, bool perl) {
  bool in_place = false;
  bool have_script = false;
  std::vector<std::string> operands;
  bool options = true;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!options || a == "-" || a.size() < 2 || a[0] != '-') {
      if (!have_script) {
        have_script = true;  // sed's script, perl's program file
      } else {
        operands.push_back(a);
      }
      continue;
    }
    if (a == "--") {
      options = false;
      continue;
    }
    if (a[1] == '-') {
      if (a.rfind("--in-place", 0) == 0) in_place = true;
      if (a.rfind("--expression", 0) == 0 || a.rfind("--file", 0) == 0) {
        have_script = true;
        if (a.find('=') == std::string::npos) ++i;
      }
      continue;
    }
    for (size_t k = 1; k < a.size(); ++k) {
      const char f = a[k];
      if (f == 'i') {
        in_place = true;
        break;  // the rest is the backup suffix
      }
      const bool code = f == 'e' || (perl ? f == 'E' : f == 'f');
      if (code || (!perl && f == 'l')) {
        if (code) have_script = true;
        if (k + 1 == a.size()) ++i;  // the value is the next word
        break;
      }
    }
  }
  if (!in_place) return {};
  return operands;
}

void AnalyzeCommand(std::vector<std::string> argv, const std::vector<std::string>& redirect_targets,
                    Collector& files) {
  // Redirections first: they write whatever the command is.
  std::vector<std::string> words;
  for (auto& w : argv) {
    if (w.rfind(kRedirectWord, 0) == 0) {
      const std::string index = w.substr(kRedirectWord.size());
      const size_t n = static_cast<size_t>(std::strtoull(index.c_str(), nullptr, 10));
      if (n < redirect_targets.size()) files.Add(redirect_targets[n]);
      continue;
    }
    words.push_back(std::move(w));
  }
  size_t first = 0;
  while (first < words.size() && IsAssignment(words[first])) ++first;
  if (first >= words.size()) return;
  const std::string_view name = Basename(words[first]);
  const std::vector<std::string> args(words.begin() + static_cast<std::ptrdiff_t>(first) + 1,
                                      words.end());
  if (name == "cd") {
    files.ChangeDirectory(args);
  } else if (name == "sed" || name == "perl") {
    for (const auto& f : InPlaceFiles(args, name == "perl")) files.Add(f);
  } else if (name == "tee" || name == "rm" || name == "unlink") {
    for (const auto& f : Operands(args, "", {})) files.Add(f);
  } else if (name == "touch") {
    for (const auto& f : Operands(args, "dtr", {"date", "reference"})) files.Add(f);
  } else if (name == "mv" || name == "cp") {
    std::vector<std::pair<std::string, std::string>> values;
    const std::vector<std::string> operands =
        Operands(args, "tS", {"target-directory", "suffix"}, &values);
    std::vector<std::string> dirs;  // -t DIR (-S's suffix is not a path)
    for (const auto& [option, value] : values) {
      if (option == "t" || option == "target-directory") dirs.push_back(value);
    }
    if (name == "mv") {
      for (const auto& f : operands) files.Add(f);
    } else if (dirs.empty() && operands.size() >= 2) {
      files.Add(operands.back());
    }
    for (const auto& d : dirs) files.Add(d);
  }
}

}  // namespace

std::vector<std::string> ShellScriptWrittenFiles(std::string_view script,
                                                 std::string_view workdir) {
  Redirections cut = RedirectionScanner(script).Run();
  Collector files(workdir);
  auto list = sandbox::ParseCommandList(cut.rest);
  if (list.ok()) {
    for (auto& command : list->commands) AnalyzeCommand(std::move(command), cut.targets, files);
  } else {
    // The lexer refused part of the script: only its literal redirection
    // targets are known, and only absolute ones (a `cd` may have run).
    for (const auto& t : cut.targets) {
      if (!t.empty() && t.front() == '/') files.Add(t);
    }
  }
  return files.Take();
}

std::vector<std::string> ShellWrittenFiles(const std::vector<std::string>& argv,
                                           std::string_view workdir) {
  if (argv.empty()) return {};
  if (const auto script = ShellScriptOf(argv)) return ShellScriptWrittenFiles(*script, workdir);
  Collector files(workdir);
  AnalyzeCommand(argv, {}, files);
  return files.Take();
}

}  // namespace codex::compaction
