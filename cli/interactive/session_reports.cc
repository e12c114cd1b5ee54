#include "cli/interactive/session_reports.h"

#include <stdio.h>

#include <algorithm>
#include <cstdio>

#include "base/time.h"
#include "cli/interactive/approval_prompt.h"
#include "cli/interactive/local_shell.h"
#include "cli/interactive/markdown.h"
#include "cli/interactive/session_picker.h"
#include "cli/interactive/slash_commands.h"
#include "cli/terminal_text.h"
#include "core/host_git.h"
#include "core/tool_router.h"
#include "core/transcript.h"
#include "storage/session_database.h"

namespace codex::cli {

std::string BannerLine(const core::Config& config, const core::SessionInfo& session, bool resumed) {
  return std::string(resumed ? "resumed " : "") + "session " + session.id + " · model " +
         config.model + " · provider " + config.model_provider_id;
}

std::string BannerText(const Style& style, const core::Config& config,
                       const core::SessionInfo& session, bool resumed, int width) {
  std::string settings = config.cwd + " · approval " +
                         std::string(core::ApprovalPolicyName(config.approval_policy)) +
                         " · sandbox " + std::string(core::SandboxModeName(config.sandbox_mode)) +
                         " · /help for commands, Ctrl-D to exit";
  return WrapLine(style.Bold(">_ codex") + "  " + style.Dim(BannerLine(config, session, resumed)),
                  width, "", "   ") +
         WrapLine(style.Dim(settings), width, "   ", "   ") + "\n";
}

std::string TokenUsageLine(const core::TokenUsage& usage) {
  std::string line = "Token usage: total=" + GroupThousands(usage.total_tokens) +
                     " input=" + GroupThousands(usage.input_tokens - usage.cached_input_tokens);
  if (usage.cached_input_tokens > 0) {
    line += " (+ " + GroupThousands(usage.cached_input_tokens) + " cached)";
  }
  line += " output=" + GroupThousands(usage.output_tokens);
  if (usage.reasoning_output_tokens > 0) {
    line += " (reasoning " + GroupThousands(usage.reasoning_output_tokens) + ")";
  }
  return line;
}

namespace {

std::string MessagesText(const Style& style, const std::vector<core::StoredItem>& items, int width,
                         size_t shown);

}  // namespace

std::string ReplayText(const Style& style, const std::vector<core::StoredItem>& items, int width) {
  return MessagesText(style, items, width, 6);
}

std::string TranscriptText(const Style& style, const std::vector<core::StoredItem>& items,
                           int width) {
  return MessagesText(style, items, width, SIZE_MAX);
}

namespace {

std::string MessagesText(const Style& style, const std::vector<core::StoredItem>& items, int width,
                         size_t shown) {
  std::vector<const core::Item*> messages;
  for (const auto& stored : items) {
    const core::Item& item = stored.item;
    if ((item.kind == core::ItemKind::kMessage && item.role == "assistant") ||
        core::IsTypedUserMessage(item)) {
      messages.push_back(&item);
    }
  }
  size_t first = messages.size() > shown ? messages.size() - shown : 0;
  std::string out;
  if (first > 0) out += style.Dim("  … " + std::to_string(first) + " earlier messages") + "\n";
  for (size_t i = first; i < messages.size(); ++i) {
    std::string text = NeutralizeControls(core::MessageText(*messages[i]));
    if (messages[i]->role == "user") {
      out += style.Cyan("› ") + style.Dim(text) + "\n\n";
    } else {
      out += style.Bold(style.Magenta("codex")) + "\n" + RenderMarkdown(text, style, width) + "\n";
    }
  }
  return out;
}

}  // namespace

std::string HelpText(const Style& style, bool keys) {
  std::string out = style.Bold("Commands") + "\n";
  for (const auto& c : SlashCommands()) {
    std::string name = std::string(c.name) + (c.args.empty() ? "" : " " + std::string(c.args));
    out += "  " + style.Cyan(name) + std::string(name.size() < 20 ? 20 - name.size() : 1, ' ') +
           std::string(c.help) + "\n";
  }
  if (keys) {
    out += style.Bold("Keys") + "\n" +
           "  Enter send · Alt-Enter, Shift-Enter, Ctrl-J or a trailing \\ new line · ↑/↓ history\n"
           "  Ctrl-C interrupt the turn (twice: quit) · Ctrl-D quit · Tab complete a command\n";
  }
  return out;
}

std::string StatusText(const Style& style, const core::Config& config,
                       const core::SessionInfo& session, int64_t run_tokens,
                       int context_left_percent, int64_t next_request_tokens) {
  auto row = [&](std::string_view key, const std::string& value) {
    std::string k(key);
    k.resize(12, ' ');
    return "  " + style.Dim(k) + value + "\n";
  };
  std::string out = style.Bold("Status") + "\n";
  out += row("model", config.model);
  out += row("provider", config.model_provider_id + " (" + config.provider.base_url + ")");
  out +=
      row("session",
          NeutralizeControls(session.id + (session.name.empty() ? "" : " (" + session.name + ")")));
  if (!session.forked_from_session.empty()) out += row("forked from", session.forked_from_session);
  out += row("directory", config.cwd);
  out += row("approval", std::string(core::ApprovalPolicyName(config.approval_policy)));
  out += row("sandbox", std::string(core::SandboxModeName(config.sandbox_mode)));
  // Tokens summed over requests and the context window are
  // different things: one row each, each saying what it counts.
  out += row("tokens", GroupThousands(session.tokens_used) + " over this session's requests · " +
                           GroupThousands(run_tokens) + " in this run");
  out += row("context", std::to_string(context_left_percent) +
                            "% of the window left · the next request sends ~" +
                            GroupThousands(next_request_tokens) + " tokens");
  return out;
}

std::string SessionsText(const Style& style, const std::vector<core::SessionInfo>& sessions,
                         const std::string& current_id, const std::string& cwd, int64_t now_ms) {
  if (sessions.empty()) return "no sessions in " + cwd + "\n";
  std::string out = style.Bold("Recent sessions in " + cwd) + "\n";
  for (const auto& s : sessions) {
    std::string when = Ago(s.updated_at_ms, now_ms);
    when.resize(std::max<size_t>(when.size(), 9), ' ');
    std::string title = NeutralizeControls(s.name.empty() ? s.title : s.name + ": " + s.title);
    if (title.empty()) title = "(no message yet)";
    out += (s.id == current_id ? style.Cyan("* ") : "  ") + NeutralizeControls(s.id) + "  " +
           style.Dim(when) + " " + title + "\n";
  }
  out += style.Dim("/resume ID switches to one") + "\n";
  return out;
}

Result<std::string> WorkspaceDiff(const std::string& cwd, const Style& style) {
  // git runs the one safe way (core/host_git.h): the workspace's git config,
  // attributes and hooks are the model's to write.
  ASSIGN_OR_RETURN(core::HostGit git, core::HostGit::Open(cwd));
  auto inside = git.Run({"rev-parse", "--is-inside-work-tree"});
  if (!inside.ok()) return inside.status();
  if (inside->exit_code != 0) {
    return FailedPreconditionError(cwd + " is not inside a git repository; /diff needs one");
  }
  std::vector<std::string> diff_args = {"diff"};
  for (const auto& a : core::HostGitDiffArgs()) diff_args.push_back(a);
  auto tracked = git.Run(diff_args);
  if (!tracked.ok()) return tracked.status();
  std::string diff = tracked->stdout_text + tracked->stderr_text;
  auto untracked = git.Run({"ls-files", "--others", "--exclude-standard", "-z"});
  if (!untracked.ok()) return untracked.status();
  const std::string& names = untracked->stdout_text;
  size_t pos = 0;
  int shown = 0;
  constexpr int kMaxUntracked = 200;
  while (pos < names.size()) {
    size_t end = names.find('\0', pos);
    if (end == std::string::npos) end = names.size();
    std::string file = names.substr(pos, end - pos);
    pos = end + 1;
    if (file.empty()) continue;
    if (++shown > kMaxUntracked) {
      diff += "… more untracked files not shown\n";
      break;
    }
    std::vector<std::string> args = {"diff", "--no-index"};
    for (const auto& a : core::HostGitDiffArgs()) args.push_back(a);
    args.insert(args.end(), {"--", "/dev/null", file});
    auto one = git.Run(args);
    if (!one.ok()) return one.status();
    diff += one->stdout_text + one->stderr_text;
  }
  if (diff.find_first_not_of(" \t\r\n") == std::string::npos) return std::string();
  // File names and contents are the model's: each line made safe, then styled.
  std::string out;
  pos = 0;
  while (pos < diff.size()) {
    size_t nl = diff.find('\n', pos);
    if (nl == std::string::npos) nl = diff.size();
    out += StyledDiffLine(style, diff.substr(pos, nl - pos)) + "\n";
    pos = nl + 1;
  }
  return out;
}

std::vector<Choice> ModelChoices(const std::string& current) {
  std::vector<Choice> out = {{current, "the current model"}};
  for (const char* m : {"gpt-5.1-codex", "gpt-5.1-codex-mini", "gpt-5-codex", "gpt-5.1", "gpt-5",
                        "gpt-5-mini", "o4-mini", "o3"}) {
    if (m != current) out.push_back({m, ""});
  }
  return out;
}

std::vector<Choice> ApprovalChoices() {
  return {{"untrusted", "ask before any command that is not known to be safe"},
          {"on-request", "the model asks when it needs to leave the sandbox"},
          {"on-failure", "run in the sandbox; ask to run outside it when that fails"},
          {"never", "never ask; failures go back to the model"}};
}

}  // namespace codex::cli
