#include "sandbox/shell_lexer.h"

#include <optional>
#include <utility>

namespace codex::sandbox {
namespace {

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Result<std::vector<ShellToken>> Run() {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\0') return Refuse("a NUL byte");
      if (c == ' ' || c == '\t') {
        EndWord();
        ++i_;
      } else if (c == '\n') {
        EndWord();
        // A newline ends a command; after an operator or at the start it is
        // just a line break.
        if (!tokens_.empty() && tokens_.back().kind == ShellToken::Kind::kWord) {
          PushOperator(ShellOperator::kSequence);
        }
        ++i_;
      } else if (c == '#' && !in_word_) {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '&') {
        if (Peek(1) != '&') return Refuse("a background '&' or '&>' redirection");
        EndWord();
        PushOperator(ShellOperator::kAnd);
        i_ += 2;
      } else if (c == '|') {
        EndWord();
        if (Peek(1) == '|') {
          PushOperator(ShellOperator::kOr);
          i_ += 2;
        } else if (Peek(1) == '&') {
          return Refuse("'|&'");
        } else {
          PushOperator(ShellOperator::kPipe);
          ++i_;
        }
      } else if (c == ';') {
        if (Peek(1) == ';' || Peek(1) == '&') return Refuse("a case terminator ';;'");
        EndWord();
        PushOperator(ShellOperator::kSequence);
        ++i_;
      } else if (c == '<' || c == '>') {
        return Refuse(std::string("a redirection '") + c + "'");
      } else if (c == '(' || c == ')') {
        return Refuse("a subshell or group '" + std::string(1, c) + "'");
      } else {
        RETURN_IF_ERROR(WordPart());
      }
    }
    EndWord();
    return std::move(tokens_);
  }

  // The word starting at `start`: consumed up to a blank, a line end ('\r'
  // too, for CRLF scripts) or an operator character. nullopt when none starts there or it holds
  // anything Run refuses.
  std::optional<std::string> OneWord(size_t start, size_t* end) {
    i_ = start;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '\0' || (c == '#' && !in_word_)) return std::nullopt;
      if (std::string_view(" \t\r\n&|;<>()").find(c) != std::string_view::npos) break;
      if (!WordPart().ok()) return std::nullopt;
    }
    if (!in_word_) return std::nullopt;
    *end = i_;
    return std::move(word_);
  }

 private:
  // At a character that is part of a word (not a blank, newline, comment or
  // operator): consumes a quoted string, an escape or one plain character.
  Status WordPart() {
    const char c = s_[i_];
    if (c == '\'') {
      size_t end = s_.find('\'', i_ + 1);
      if (end == std::string_view::npos) return Refuse("an unterminated single quote");
      std::string_view body = s_.substr(i_ + 1, end - i_ - 1);
      if (body.find('\0') != std::string_view::npos) return Refuse("a NUL byte");
      word_.append(body);
      in_word_ = true;
      i_ = end + 1;
    } else if (c == '"') {
      RETURN_IF_ERROR(DoubleQuoted());
    } else if (c == '\\') {
      if (i_ + 1 >= s_.size()) return Refuse("a backslash at the end of the script");
      const char next = s_[i_ + 1];
      if (next == '\0') return Refuse("a NUL byte");
      if (next != '\n') {  // backslash-newline joins lines
        word_.push_back(next);
        in_word_ = true;
      }
      i_ += 2;
    } else if (c == '{' || c == '}') {
      return Refuse("a brace group or expansion '" + std::string(1, c) + "'");
    } else if (c == '$') {
      return Refuse("a '$' expansion");
    } else if (c == '`') {
      return Refuse("a '`' command substitution");
    } else if (c == '*' || c == '?' || c == '[') {
      return Refuse("an unquoted glob character '" + std::string(1, c) + "'");
    } else if (c == '~' && !in_word_) {
      return Refuse("a '~' expansion");
    } else if ((static_cast<unsigned char>(c) < 0x20) || c == 0x7f) {
      return Refuse("a control character");
    } else {
      word_.push_back(c);
      in_word_ = true;
      ++i_;
    }
    return OkStatus();
  }

  char Peek(size_t ahead) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }

  Status Refuse(const std::string& what) const {
    return Status(StatusCode::kInvalidArgument,
                  "unsupported shell syntax: " + what + " at offset " + std::to_string(i_));
  }

  void EndWord() {
    if (!in_word_) return;
    ShellToken t;
    t.kind = ShellToken::Kind::kWord;
    t.word = std::move(word_);
    tokens_.push_back(std::move(t));
    word_.clear();
    in_word_ = false;
  }

  void PushOperator(ShellOperator op) {
    ShellToken t;
    t.kind = ShellToken::Kind::kOperator;
    t.op = op;
    tokens_.push_back(std::move(t));
  }

  // At an opening '"': consumes through the closing one.
  Status DoubleQuoted() {
    const size_t open = i_;
    in_word_ = true;
    ++i_;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '"') {
        ++i_;
        return OkStatus();
      }
      if (c == '\0') return Refuse("a NUL byte");
      if (c == '$') return Refuse("a '$' expansion inside double quotes");
      if (c == '`') return Refuse("a '`' command substitution inside double quotes");
      if (c == '\\' && i_ + 1 < s_.size()) {
        const char next = s_[i_ + 1];
        if (next == '$' || next == '`' || next == '"' || next == '\\') {
          word_.push_back(next);
        } else if (next != '\n') {
          if (next == '\0') return Refuse("a NUL byte");
          word_.push_back('\\');
          word_.push_back(next);
        }
        i_ += 2;
        continue;
      }
      word_.push_back(c);
      ++i_;
    }
    i_ = open;
    return Refuse("an unterminated double quote");
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string word_;
  bool in_word_ = false;
  std::vector<ShellToken> tokens_;
};

}  // namespace

std::string_view ShellOperatorText(ShellOperator op) {
  switch (op) {
    case ShellOperator::kAnd:
      return "&&";
    case ShellOperator::kOr:
      return "||";
    case ShellOperator::kSequence:
      return ";";
    case ShellOperator::kPipe:
      return "|";
  }
  return ";";
}

Result<std::vector<ShellToken>> LexShell(std::string_view script) { return Lexer(script).Run(); }

std::optional<std::string> ReadShellWord(std::string_view script, size_t* pos) {
  return Lexer(script).OneWord(*pos, pos);
}

Result<ShellCommandList> ParseCommandList(std::string_view script) {
  ASSIGN_OR_RETURN(std::vector<ShellToken> tokens, LexShell(script));
  ShellCommandList list;
  list.commands.emplace_back();
  for (ShellToken& t : tokens) {
    if (t.kind == ShellToken::Kind::kWord) {
      list.commands.back().push_back(std::move(t.word));
      continue;
    }
    if (list.commands.back().empty()) {
      return Status(StatusCode::kInvalidArgument, "unsupported shell syntax: '" +
                                                      std::string(ShellOperatorText(t.op)) +
                                                      "' without a command before it");
    }
    list.operators.push_back(t.op);
    list.commands.emplace_back();
  }
  if (list.commands.back().empty()) {
    if (list.operators.empty()) {
      return Status(StatusCode::kInvalidArgument, "unsupported shell syntax: an empty script");
    }
    if (list.operators.back() != ShellOperator::kSequence) {
      return Status(StatusCode::kInvalidArgument,
                    "unsupported shell syntax: the script ends with '" +
                        std::string(ShellOperatorText(list.operators.back())) + "'");
    }
    list.operators.pop_back();
    list.commands.pop_back();
  }
  return list;
}

}  // namespace codex::sandbox
