#include "cli/interactive/trust_prompt.h"

#include <optional>
#include <vector>

#include "cli/interactive/drawn_lines.h"
#include "cli/interactive/keys.h"
#include "cli/terminal_text.h"

namespace codex::cli {

TrustAnswer AskTrust(Terminal& terminal, const Style& style, const std::string& project) {
  const std::vector<std::string> choices = {
      "Yes, trust this folder: codex may edit files here (workspace-write) and asks before "
      "going further",
      "No: codex only reads here (read-only) and asks before any change"};
  int selected = 0;
  DrawnLines drawn;
  auto text = [&] {
    std::string out = style.Bold("Trust this folder?") + "\r\n" +
                      style.Cyan(NeutralizeControls(project)) + "\r\n" +
                      style.Dim(
                          "Codex can read, edit and run files here, subject to your "
                          "permission settings. Folder settings can run code. Continue "
                          "only if you trust these files; your decision is saved in "
                          "config.toml.") +
                      "\r\n";
    for (size_t i = 0; i < choices.size(); ++i) {
      const std::string line = std::to_string(i + 1) + ". " + choices[i];
      out += static_cast<int>(i) == selected ? style.Cyan("› " + line) : "  " + line;
      out += "\r\n";
    }
    return out + style.Dim("enter choose · esc: not trusted · ctrl-c quit") + "\r\n";
  };
  auto erase = [&] {
    int up = drawn.RowsAboveCursor(terminal.Columns(), terminal.reflows());
    return (up > 0 ? "\x1b[" + std::to_string(up) + "A" : std::string()) + kEraseToEnd;
  };
  auto draw = [&] {
    std::string out = drawn.empty() ? std::string() : erase();
    std::string shown = text();
    drawn.Record(shown, shown.size(), terminal.Columns());
    terminal.Write(out + shown);
  };
  draw();
  KeyDecoder decoder;
  std::optional<TrustAnswer> answer;
  while (!answer) {
    std::string bytes;
    ReadStatus status = terminal.Read(&bytes, decoder.has_pending() ? 50 : -1);
    if (status == ReadStatus::kEof) return TrustAnswer::kQuit;
    decoder.Feed(bytes);
    while (!answer) {
      std::optional<Key> key = status == ReadStatus::kTimeout ? decoder.Flush() : decoder.Next();
      if (!key) break;
      if (key->code == KeyCode::kUp || key->code == KeyCode::kDown) {
        selected = 1 - selected;
      } else if (key->code == KeyCode::kEnter) {
        answer = selected == 0 ? TrustAnswer::kTrusted : TrustAnswer::kUntrusted;
      } else if (key->code == KeyCode::kEsc) {
        answer = TrustAnswer::kUntrusted;
      } else if (key->code == KeyCode::kCtrl && (key->ctrl == 'c' || key->ctrl == 'd')) {
        answer = TrustAnswer::kQuit;
      } else if (key->code == KeyCode::kText && (key->text == "1" || key->text == "y")) {
        answer = TrustAnswer::kTrusted;
      } else if (key->code == KeyCode::kText && (key->text == "2" || key->text == "n")) {
        answer = TrustAnswer::kUntrusted;
      }
    }
    if (!answer) draw();  // the choice moved, or the window was resized
  }
  terminal.Write(erase());
  return *answer;
}

std::string TrustSandbox(const std::string& trust_level) {
  return trust_level == "trusted" ? "workspace-write" : "read-only";
}

std::string TrustApproval(const std::string& trust_level) {
  (void)trust_level;  // on-request either way, as Codex: the model asks to go further
  return "on-request";
}

}  // namespace codex::cli
