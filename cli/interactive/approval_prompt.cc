#include "cli/interactive/approval_prompt.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "base/strings.h"
#include "cli/interactive/command_text.h"
#include "cli/interactive/drawn_lines.h"
#include "cli/interactive/keys.h"
#include "cli/interactive/terminal.h"
#include "cli/interactive/turn_view.h"
#include "cli/terminal_text.h"
#include "core/tool_router.h"

namespace codex::cli {

namespace {

using core::ReviewDecision;

struct Option {
  ReviewDecision answer;
  const char* key;
  const char* command_text;
  const char* patch_text;
};

// As in Codex: "No" stops the turn and hands the composer back, so the user
// can say what to do instead; "skip" is the quieter no that lets the model
// go on without it.
constexpr Option kOptions[] = {
    {ReviewDecision::kApproveOnce, "y", "Yes, run it", "Yes, apply it"},
    {ReviewDecision::kApproveForSession, "a", "Yes, and don't ask again for this command",
     "Yes, and don't ask again for these files"},
    {ReviewDecision::kDeny, "d", "No, skip it and let codex continue without it",
     "No, skip them and let codex continue without them"},
    {ReviewDecision::kAbort, "n, esc", "No, and tell codex what to do differently",
     "No, and tell codex what to do differently"},
};
constexpr int kOptionCount = 4;

std::string Indent(std::string_view text, std::string_view prefix) {
  std::string out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    if (nl == text.size() && pos == nl && pos > 0) break;
    out += prefix;
    out += text.substr(pos, nl - pos);
    out += '\n';
    pos = nl + 1;
  }
  return out;
}

// The words of `command` when it is one simple command (no operator,
// redirection, substitution, quote or line break that could chain another
// command behind an approved prefix), else nothing.
std::vector<std::string> SimpleWords(std::string_view command) {
  if (command.find_first_of(";&|<>`$()\n\\'\"*?{}[]~#") != std::string_view::npos) return {};
  std::vector<std::string> words;
  size_t pos = 0;
  while (pos < command.size()) {
    size_t start = command.find_first_not_of(" \t", pos);
    if (start == std::string_view::npos) break;
    size_t end = command.find_first_of(" \t", start);
    if (end == std::string_view::npos) end = command.size();
    words.emplace_back(command.substr(start, end - start));
    pos = end;
  }
  return words;
}

}  // namespace

std::string StyledDiffLine(const Style& style, std::string_view raw) {
  const std::string line = NeutralizeControls(raw);
  if (line.rfind("+++", 0) == 0 || line.rfind("---", 0) == 0 || line.rfind("***", 0) == 0 ||
      line.rfind("diff ", 0) == 0) {
    return style.Bold(line);
  }
  if (!line.empty() && line[0] == '+') return style.Green(line);
  if (!line.empty() && line[0] == '-') return style.Red(line);
  if (line.rfind("@@", 0) == 0) return style.Cyan(line);
  return line;
}

bool MatchesPrefix(const std::vector<std::string>& words, const std::vector<std::string>& prefix) {
  return !prefix.empty() && words.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), words.begin());
}

ApprovalQuestion QuestionFor(const core::ApprovalRequest& request) {
  ApprovalQuestion q;
  q.call_id = request.call_id;
  if (!request.argv.empty() && request.argv[0] == "apply_patch") {
    q.kind = ApprovalKind::kPatch;
    q.files.assign(request.argv.begin() + 1, request.argv.end());
    q.diff = request.reason;
    return q;
  }
  q.kind = ApprovalKind::kCommand;
  q.command = ShownCommand(request.argv);
  q.cwd = request.cwd;
  q.reason = request.reason;
  q.justification = request.justification;
  q.unsandboxed = request.sandbox == core::SandboxChoice::kUnsandboxed;
  std::vector<std::string> words = SimpleWords(q.command);
  if (words.size() >= 3) q.prefix.assign(words.begin(), words.begin() + 2);
  return q;
}

std::string DescribeDecision(const ApprovalQuestion& question, ReviewDecision decision) {
  std::string what = question.kind == ApprovalKind::kCommand ? "command" : "changes";
  switch (decision) {
    case ReviewDecision::kApproveOnce:
      return what + " approved";
    case ReviewDecision::kApproveForSession:
      return what + " approved for the session";
    case ReviewDecision::kDeny:
      return what + " denied; codex continues without it";
    case ReviewDecision::kAbort:
      return what + " denied; turn stopped: tell codex what to do differently";
  }
  return what + " denied";
}

ReviewDecision ApprovalPrompt::Review(const core::ApprovalRequest& request,
                                      const core::CancelToken& cancel) {
  if (cancel.cancelled()) return ReviewDecision::kAbort;
  ApprovalQuestion question = QuestionFor(request);
  const bool patch = question.kind == ApprovalKind::kPatch;
  if (patch && approved_patches_.count(question.files) != 0) return ReviewDecision::kApproveOnce;
  if (!patch) {
    std::vector<std::string> words = SimpleWords(question.command);
    for (const auto& [prefix, outside] : approved_prefixes_) {
      if ((outside || !question.unsandboxed) && MatchesPrefix(words, prefix)) {
        return ReviewDecision::kApproveOnce;
      }
    }
  }
  ReviewDecision answer = AskUser(question);
  if (cancel.cancelled()) return ReviewDecision::kAbort;
  if (patch && answer == ReviewDecision::kApproveForSession) {
    approved_patches_.insert(question.files);
  }
  return answer;
}

std::string DescribeApproval(const ApprovalQuestion& q, const Style& style, int max_diff_lines) {
  std::string out;
  if (q.kind == ApprovalKind::kCommand) {
    // Everything below may come from the model or a tool: the command is shown
    // exactly, with every control and escape sequence visible
    // (cli/terminal_text.h), so what the user approves is what runs.
    out += style.Bold(style.Yellow("Allow this command?")) + "\n";
    if (!q.justification.empty()) {
      out += "  " + style.Bold("the model asks: ") + NeutralizeControls(q.justification) + "\n";
    }
    out += style.Cyan(Indent(NeutralizeControls(q.command), "  $ "));
    if (!q.cwd.empty()) out += style.Dim("  in " + NeutralizeControls(q.cwd)) + "\n";
    if (q.unsandboxed) out += "  " + style.Red("outside the sandbox") + "\n";
    if (!q.reason.empty()) {
      // The reason may end with the output of a sandboxed run.
      std::string reason = NeutralizeControls(q.reason);
      while (!reason.empty() && reason.back() == '\n') reason.pop_back();
      size_t nl = reason.find('\n');
      out += "  " + style.Italic("reason: " + reason.substr(0, nl)) + "\n";
      if (nl != std::string::npos) out += style.Dim(Indent(reason.substr(nl + 1), "  │ "));
    }
  } else {
    out += style.Bold(style.Yellow("Allow these changes?")) + "\n";
    for (const auto& f : q.files) out += "  " + NeutralizeControls(f) + "\n";
    int shown = 0;
    int total = 0;
    size_t pos = 0;
    while (pos < q.diff.size()) {
      size_t nl = q.diff.find('\n', pos);
      if (nl == std::string::npos) nl = q.diff.size();
      std::string_view line = std::string_view(q.diff).substr(pos, nl - pos);
      pos = nl + 1;
      ++total;
      if (shown >= max_diff_lines) continue;
      ++shown;
      out += "  " + StyledDiffLine(style, line) + "\n";
    }
    if (total > shown) out += style.Dim("  … +" + std::to_string(total - shown) + " lines") + "\n";
  }
  return out;
}

ReviewDecision TtyApprovalPrompt::AskUser(const ApprovalQuestion& question) {
  if (!run_on_ui_) return AskHere(question);
  ReviewDecision answer = ReviewDecision::kAbort;
  run_on_ui_([&] { answer = AskHere(question); });
  return answer;
}

namespace {

// One line of the approval menu: its answer, its key, its text, and whether
// it approves every command starting with the question's prefix.
struct MenuChoice {
  ReviewDecision answer;
  std::string key;
  std::string text;
  bool prefix = false;
};

std::string PrefixWords(const std::vector<std::string>& prefix) {
  std::string words;
  for (const auto& w : prefix) words += (words.empty() ? "" : " ") + w;
  return words;
}

// The options: the table's, plus "commands that start with ..." when offered.
std::vector<MenuChoice> MenuChoices(const ApprovalQuestion& question) {
  std::vector<MenuChoice> choices;
  const bool command = question.kind == ApprovalKind::kCommand;
  for (int i = 0; i < kOptionCount; ++i) {
    const Option& o = kOptions[i];
    choices.push_back({o.answer, o.key, command ? o.command_text : o.patch_text});
    if (i == 1 && command && !question.prefix.empty()) {
      choices.push_back({ReviewDecision::kApproveOnce, "p",
                         "Yes, and don't ask again for commands that start with `" +
                             NeutralizeControls(PrefixWords(question.prefix)) + "`",
                         true});
    }
  }
  return choices;
}

// What `key` does in the menu: moves *selected, or answers (setting
// *by_prefix for the prefix choice); nullopt while nothing is decided.
std::optional<ReviewDecision> MenuKey(const Key& key, const std::vector<MenuChoice>& choices,
                                      int* selected, bool* by_prefix) {
  const int count = static_cast<int>(choices.size());
  auto choose = [&](int i) {
    *by_prefix = choices[static_cast<size_t>(i)].prefix;
    return choices[static_cast<size_t>(i)].answer;
  };
  if (key.code == KeyCode::kUp) *selected = (*selected + count - 1) % count;
  if (key.code == KeyCode::kDown || key.code == KeyCode::kTab) *selected = (*selected + 1) % count;
  if (key.code == KeyCode::kEnter) return choose(*selected);
  if (key.code == KeyCode::kEsc || (key.code == KeyCode::kCtrl && key.ctrl == 'c')) {
    return ReviewDecision::kAbort;
  }
  if (key.code != KeyCode::kText) return std::nullopt;
  std::string k = Lower(key.text);
  if (k == "y") return ReviewDecision::kApproveOnce;
  if (k == "a") return ReviewDecision::kApproveForSession;
  if (k == "d") return ReviewDecision::kDeny;
  if (k == "n" || k == "s") return ReviewDecision::kAbort;
  for (int i = 0; i < count; ++i) {
    if (choices[static_cast<size_t>(i)].prefix && k == "p") return choose(i);
  }
  if (k.size() == 1 && k[0] >= '1' && k[0] < '1' + count) return choose(k[0] - '1');
  return std::nullopt;
}

}  // namespace

ReviewDecision TtyApprovalPrompt::AskHere(const ApprovalQuestion& question) {
  view_.PauseSpinner();
  const std::string asked = "\n" + DescribeApproval(question, style_, 40);
  terminal_.Write(asked);
  view_.Remember(asked);  // printed again should a resize lay the transcript out again
  const std::vector<MenuChoice> choices = MenuChoices(question);
  const int count = static_cast<int>(choices.size());
  int selected = 0;
  auto menu = [&] {
    std::string out;
    for (int i = 0; i < count; ++i) {
      std::string text = std::to_string(i + 1) + ". " + choices[static_cast<size_t>(i)].text +
                         " (" + choices[static_cast<size_t>(i)].key + ")";
      out += i == selected ? style_.Cyan("› " + text) : "  " + text;
      out += "\r\n";
    }
    return out;
  };
  // The menu as last drawn, to draw it again in place: its lines may wrap,
  // and a resize re-wraps them (DrawnLines).
  DrawnLines drawn;
  auto erase = [&] {
    int up = drawn.RowsAboveCursor(terminal_.Columns(), terminal_.reflows());
    return (up > 0 ? "\x1b[" + std::to_string(up) + "A" : std::string()) + kEraseToEnd;
  };
  auto draw = [&] {
    std::string text = menu();
    std::string out = drawn.empty() ? std::string() : erase();
    drawn.Record(text, text.size(), terminal_.Columns());
    terminal_.Write(out + text);
  };
  draw();
  std::optional<ReviewDecision> answer;
  bool by_prefix = false;
  KeyDecoder decoder;
  while (!answer) {
    std::string bytes;
    ReadStatus status = terminal_.Read(&bytes, decoder.has_pending() ? 50 : -1);
    if (status == ReadStatus::kEof) {
      answer = ReviewDecision::kAbort;
      break;
    }
    decoder.Feed(bytes);
    while (!answer) {
      std::optional<Key> key = status == ReadStatus::kTimeout ? decoder.Flush() : decoder.Next();
      if (!key) break;
      answer = MenuKey(*key, choices, &selected, &by_prefix);
    }
    draw();  // in place (after a resize too)
  }
  terminal_.Write(erase());
  bool yes =
      *answer == ReviewDecision::kApproveOnce || *answer == ReviewDecision::kApproveForSession;
  std::string said = DescribeDecision(question, *answer);
  if (by_prefix) {
    ApprovePrefix(question.prefix, question.unsandboxed);
    said = "command approved, and every command starting with `" +
           NeutralizeControls(PrefixWords(question.prefix)) + "` for the session";
  }
  const std::string answered = (yes ? style_.Green("✔ ") : style_.Red("✗ ")) + said + "\r\n";
  terminal_.Write(answered);
  view_.Remember(answered);
  if (!yes) view_.NoteDenied(question.call_id);
  view_.ResumeSpinner();
  return *answer;
}

std::string DescribeUserInputQuestion(const std::vector<core::UserInputQuestion>& questions,
                                      size_t index, size_t selected, bool notes_open,
                                      const std::string& notes, const Style& style) {
  const core::UserInputQuestion& q = questions[index];
  const size_t unanswered = questions.size() - index;
  std::string out =
      "  " +
      style.Bold("Question " + std::to_string(index + 1) + "/" + std::to_string(questions.size())) +
      style.Dim(" (" + std::to_string(unanswered) + " unanswered)") + "\r\n";
  out += "  " + NeutralizeControls(q.question) + "\r\n";
  // Labels padded to one column, as Codex draws them.
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& o : q.options) {
    rows.emplace_back(NeutralizeControls(o.label), NeutralizeControls(o.description));
  }
  rows.emplace_back(std::string(core::kUserInputOtherLabel),
                    "Optionally, add details in notes (tab)");
  int width = 0;
  for (const auto& [label, help] : rows) width = std::max(width, DisplayWidth(label));
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [label, help] = rows[i];
    std::string text = std::to_string(i + 1) + ". " + label +
                       std::string(static_cast<size_t>(width - DisplayWidth(label) + 2), ' ') +
                       help;
    out += (i == selected ? style.Cyan("  › " + text) : "    " + text) + "\r\n";
  }
  const bool last = index + 1 == questions.size();
  if (notes_open) {
    out += "  › " + (notes.empty() ? style.Dim("Add notes") : NeutralizeControls(notes)) + "\r\n";
    out += style.Dim(std::string("  tab or esc to clear notes | enter to submit ") +
                     (last ? "all" : "answer")) +
           "\r\n";
  } else {
    out += style.Dim(std::string("  tab to add notes | enter to submit ") +
                     (last ? "all" : "answer") + " | esc to interrupt") +
           "\r\n";
  }
  return out;
}

std::string DescribeUserInputAnswers(const std::vector<core::UserInputQuestion>& questions,
                                     const std::vector<core::UserInputAnswer>& answers,
                                     const Style& style) {
  std::string out = "• " +
                    style.Bold("Questions " + std::to_string(answers.size()) + "/" +
                               std::to_string(questions.size()) + " answered") +
                    "\r\n";
  for (size_t i = 0; i < answers.size() && i < questions.size(); ++i) {
    out += "  • " + NeutralizeControls(questions[i].question) + "\r\n";
    out += "    answer: " + NeutralizeControls(answers[i].label) + "\r\n";
    if (!answers[i].note.empty())
      out += "    note: " + NeutralizeControls(answers[i].note) + "\r\n";
  }
  return out;
}

Result<std::optional<std::vector<core::UserInputAnswer>>> TtyApprovalPrompt::AskUserInput(
    const std::vector<core::UserInputQuestion>& questions, const core::CancelToken& cancel) {
  if (cancel.cancelled()) return CancelledError("interrupted");
  std::optional<std::vector<core::UserInputAnswer>> answers;
  if (!run_on_ui_) {
    answers = AskQuestionsHere(questions);
  } else {
    run_on_ui_([&] { answers = AskQuestionsHere(questions); });
  }
  if (!answers) return CancelledError("the user interrupted the questions");
  return answers;
}

std::optional<std::vector<core::UserInputAnswer>> TtyApprovalPrompt::AskQuestionsHere(
    const std::vector<core::UserInputQuestion>& questions) {
  view_.PauseSpinner();
  terminal_.Write("\r\n");
  std::vector<core::UserInputAnswer> answers;
  size_t index = 0;
  size_t selected = 0;
  bool notes_open = false;
  std::string notes;
  DrawnLines drawn;
  auto erase = [&] {
    int up = drawn.RowsAboveCursor(terminal_.Columns(), terminal_.reflows());
    return (up > 0 ? "\x1b[" + std::to_string(up) + "A" : std::string()) + kEraseToEnd;
  };
  auto draw = [&] {
    std::string text =
        DescribeUserInputQuestion(questions, index, selected, notes_open, notes, style_);
    std::string out = drawn.empty() ? std::string() : erase();
    drawn.Record(text, text.size(), terminal_.Columns());
    terminal_.Write(out + text);
  };
  // One key: false when the user interrupted.
  auto handle = [&](const Key& key) {
    const core::UserInputQuestion& q = questions[index];
    const size_t count = q.options.size() + 1;  // and "None of the above"
    const bool interrupt = key.code == KeyCode::kCtrl && key.ctrl == 'c';
    if (interrupt) return false;
    if (key.code == KeyCode::kEsc) {
      if (!notes_open) return false;
      notes_open = false;
      notes.clear();
      return true;
    }
    if (key.code == KeyCode::kTab) {
      notes_open = !notes_open;
      notes.clear();
      return true;
    }
    if (key.code == KeyCode::kUp) selected = (selected + count - 1) % count;
    if (key.code == KeyCode::kDown) selected = (selected + 1) % count;
    if (key.code == KeyCode::kEnter) {
      core::UserInputAnswer a;
      a.id = q.id;
      a.label = selected < q.options.size() ? q.options[selected].label
                                            : std::string(core::kUserInputOtherLabel);
      a.note = notes_open ? notes : "";
      answers.push_back(std::move(a));
      ++index;
      selected = 0;
      notes_open = false;
      notes.clear();
      return true;
    }
    if (notes_open) {
      if (key.code == KeyCode::kText || key.code == KeyCode::kPaste) notes += key.text;
      if (key.code == KeyCode::kBackspace && !notes.empty()) {
        do {
          notes.pop_back();
        } while (!notes.empty() && (static_cast<unsigned char>(notes.back()) & 0xC0) == 0x80);
      }
      return true;
    }
    if (key.code == KeyCode::kText && key.text.size() == 1 && key.text[0] >= '1' &&
        key.text[0] <= '9') {
      const size_t n = static_cast<size_t>(key.text[0] - '1');
      if (n < count) selected = n;
    }
    return true;
  };
  draw();
  bool interrupted = false;
  KeyDecoder decoder;
  while (!interrupted && index < questions.size()) {
    std::string bytes;
    ReadStatus status = terminal_.Read(&bytes, decoder.has_pending() ? 50 : -1);
    if (status == ReadStatus::kEof) {
      interrupted = true;
      break;
    }
    decoder.Feed(bytes);
    while (!interrupted && index < questions.size()) {
      std::optional<Key> key = status == ReadStatus::kTimeout ? decoder.Flush() : decoder.Next();
      if (!key) break;
      interrupted = !handle(*key);
    }
    if (!interrupted && index < questions.size()) draw();
  }
  terminal_.Write(erase());
  if (interrupted) {
    view_.ResumeSpinner();
    return std::nullopt;
  }
  const std::string summary = DescribeUserInputAnswers(questions, answers, style_);
  terminal_.Write(summary);
  view_.Remember(summary);  // printed again should a resize lay the transcript out again
  view_.ResumeSpinner();
  return answers;
}

Result<std::optional<std::vector<core::UserInputAnswer>>> LineApprovalPrompt::AskUserInput(
    const std::vector<core::UserInputQuestion>& questions, const core::CancelToken& cancel) {
  std::vector<core::UserInputAnswer> answers;
  for (size_t i = 0; i < questions.size(); ++i) {
    if (cancel.cancelled()) return CancelledError("interrupted");
    const core::UserInputQuestion& q = questions[i];
    std::string text = "Question " + std::to_string(i + 1) + "/" +
                       std::to_string(questions.size()) + ": " + NeutralizeControls(q.question) +
                       "\n";
    for (size_t o = 0; o < q.options.size(); ++o) {
      text += "  " + std::to_string(o + 1) + ". " + NeutralizeControls(q.options[o].label) + " - " +
              NeutralizeControls(q.options[o].description) + "\n";
    }
    text += "  " + std::to_string(q.options.size() + 1) + ". " +
            std::string(core::kUserInputOtherLabel) + "\n";
    PrintText(err_, text);
    PrintText(err_, "answer (a number, or your own words): ");
    std::fflush(err_);
    std::string line;
    int c;
    while ((c = std::fgetc(in_)) != EOF && c != '\n') line += static_cast<char>(c);
    if (c == EOF && line.empty()) {
      PrintText(err_, "\n");
      return CancelledError("the user interrupted the questions");
    }
    line = std::string(Trim(line));
    core::UserInputAnswer a;
    a.id = q.id;
    size_t n = 0;
    const bool number =
        !line.empty() && line.size() < 4 && std::all_of(line.begin(), line.end(), [](char ch) {
          return std::isdigit(static_cast<unsigned char>(ch)) != 0;
        });
    if (number) n = static_cast<size_t>(std::stoul(line));
    if (number && n >= 1 && n <= q.options.size()) {
      a.label = q.options[n - 1].label;
    } else {
      a.label = std::string(core::kUserInputOtherLabel);
      if (!(number && n == q.options.size() + 1)) a.note = line;
    }
    PrintF(err_, "answer: %s\n", NeutralizeControls(a.label).c_str());
    answers.push_back(std::move(a));
  }
  return std::optional<std::vector<core::UserInputAnswer>>(std::move(answers));
}

ReviewDecision LineApprovalPrompt::AskUser(const ApprovalQuestion& question) {
  Style plain(Color::kDisabled);
  PrintText(err_, DescribeApproval(question, plain, 40).c_str());
  auto answered = [&](ReviewDecision d) {
    PrintF(err_, "%s\n", DescribeDecision(question, d).c_str());
    return d;
  };
  while (true) {
    PrintText(err_,
              "approve? [y]es once, [a]lways this session, [n]o (tell the model), [s]top the "
              "turn: ");
    std::fflush(err_);
    std::string line;
    int c;
    while ((c = std::fgetc(in_)) != EOF && c != '\n') line += static_cast<char>(c);
    if (c == EOF && line.empty()) {
      PrintText(err_, "\n");
      return ReviewDecision::kAbort;
    }
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    std::string a = Lower(line);
    if (a == "y" || a == "yes") return answered(ReviewDecision::kApproveOnce);
    if (a == "a" || a == "always") return answered(ReviewDecision::kApproveForSession);
    if (a == "n" || a == "no") return answered(ReviewDecision::kDeny);
    if (a == "s" || a == "stop") return answered(ReviewDecision::kAbort);
    PrintF(err_, "error: '%s' is not an answer; type y, a, n or s\n", line.c_str());
  }
}

}  // namespace codex::cli
