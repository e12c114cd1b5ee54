// The slash commands added for daily use (issue 26): /init, /permissions,
// /copy, /export, /mcp, /rename. Members of InteractiveSession
// (interactive_session.h), kept apart from session_commands.cc.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/file.h"
#include "cli/image_input.h"
#include "cli/interactive/interactive_session.h"
#include "cli/review_display.h"
#include "cli/terminal_text.h"
#include "core/review.h"
#include "core/transcript.h"
#include "storage/rollout.h"
#include "storage/session_database.h"

namespace codex::cli::interactive_internal {

namespace {

// What /init asks the model (our words; the task is Codex's /init).
constexpr const char* kInitPrompt =
    "Write an AGENTS.md file at the root of this repository for agents that will work on it. "
    "Look at the project first (its layout, build and test commands, code style, how changes "
    "are committed) and describe what an agent needs to work here well: the structure, the "
    "commands to build, test and lint, conventions to follow, and anything easy to get "
    "wrong. Keep it short and specific to this project.";

struct PermissionPreset {
  const char* name;
  const char* sandbox;
  const char* approval;
  const char* help;
};

constexpr PermissionPreset kPresets[] = {
    {"read-only", "read-only", "on-request",
     "read files; ask before editing or running anything that writes"},
    {"auto", "workspace-write", "on-request",
     "read and edit in the workspace, run commands there; ask to go further"},
    {"full-access", "danger-full-access", "never",
     "everything, network included, without asking (take care)"},
};

}  // namespace

void InteractiveSession::InitCommand() {
  const std::filesystem::path agents = std::filesystem::path(engine().config().cwd) / "AGENTS.md";
  std::error_code ec;
  if (std::filesystem::exists(agents, ec)) {
    Say("AGENTS.md already exists here (" + NeutralizeControls(agents.string()) +
        "); ask the model to change it if it needs to\n");
    return;
  }
  if (tty_) EchoPrompt("/init");
  RunUserTurn(kInitPrompt);
}

// /review [base BRANCH | uncommitted | commit SHA [TITLE] | INSTRUCTIONS]:
// the review of `codex review` (core/review.h) as a session of its own, run
// here with its answer rendered as Codex renders it; the session the user is
// in goes on. On a terminal, `/review` alone opens Codex's four presets in the
// picker (OpenChoice), and `/review base` / `/review commit` the branches /
// recent commits to choose from; each choice submits the typed form, so a
// picked review is the typed one; as in Codex 0.169, Esc in a list chosen from
// the presets goes back to them, and typing searches the branches and commits
// (Composer::OpenChoice). `/review custom` puts "/review " in the composer for
// the instructions. Branch names and commit subjects are the
// repository's: the picker draws them through NeutralizeControls.
void InteractiveSession::ReviewCommand(const SlashCommand& cmd) {
  core::ReviewTarget target;
  const std::string& arg = cmd.arg;
  const std::string& cwd = engine().config().cwd;
  auto word_after = [&](size_t n) {
    std::string rest = arg.substr(std::min(arg.size(), n));
    rest.erase(0, std::min(rest.size(), rest.find_first_not_of(" \t")));
    return rest;
  };
  if (arg.empty() && tty_) {
    OpenChoice("review", "",
               {{"base", "Review against a base branch (PR Style)"},
                {"uncommitted", "Review uncommitted changes"},
                {"commit", "Review a commit"},
                {"custom", "Custom review instructions"}},
               "Select a review preset");
    return;
  }
  if (arg == "base" || arg == "commit") {
    if (!tty_) {
      Warn("/review " + arg + " needs " +
           (arg == "base" ? "a branch: /review base BRANCH"
                          : "a commit: /review commit SHA [TITLE]"));
      return;
    }
    std::vector<Choice> choices;
    std::string title;
    if (arg == "base") {
      auto branches = core::ListReviewBranches(cwd);
      if (!branches.ok()) {
        Warn(branches.status().message());
        return;
      }
      for (const std::string& b : branches->names) choices.push_back({"base " + b, "", b});
      title = "Select a base branch" +
              (branches->current.empty() ? "" : " (current branch: " + branches->current + ")");
    } else {
      auto commits = core::RecentReviewCommits(cwd, 12);
      if (!commits.ok()) {
        Warn(commits.status().message());
        return;
      }
      // The typed form with the subject as its title, as Codex titles a picked commit;
      // typing searches the id and the subject, as Codex's does.
      for (const core::ReviewCommit& c : *commits) {
        choices.push_back({"commit " + c.sha + (c.subject.empty() ? "" : " " + c.subject), "",
                           c.sha + " " + c.subject});
      }
      title = "Select a commit to review";
    }
    if (choices.empty()) {
      Warn(arg == "base" ? "no branch to review against here"
                         : "no commit to review here (the repository has none)");
      return;
    }
    OpenChoice("review", "", std::move(choices), title,
               arg == "base" ? "Type to search branches" : "Type to search commits");
    return;
  }
  if (arg == "custom" && tty_) {
    composer_.Prefill("/review ");
    Say(style_.Dim("Custom review instructions: type them after /review and press Enter") + "\n");
    return;
  }
  if (arg.starts_with("base ")) {
    target.kind = core::ReviewTarget::Kind::kBaseBranch;
    target.branch = word_after(5);
  } else if (arg.starts_with("commit ")) {
    target.kind = core::ReviewTarget::Kind::kCommit;
    const std::string rest = word_after(7);
    const size_t sp = rest.find_first_of(" \t");
    target.sha = rest.substr(0, sp);
    if (sp != std::string::npos) target.title = word_after(7 + sp);
  } else if (!arg.empty() && arg != "uncommitted") {
    target.kind = core::ReviewTarget::Kind::kCustom;
    target.instructions = arg;
  }
  auto request = core::PrepareReview(target, cwd);
  if (!request.ok()) {
    Warn(request.status().message());
    return;
  }
  core::Config config = engine().config();
  config.review_guidelines = std::string(core::ReviewGuidelines());
  ReviewDisplayObserver shown(observer());
  core::ConversationDeps deps = engine().Deps();
  deps.observer = &shown;
  auto review = core::Conversation::Create(config, deps, "review");
  if (!review.ok()) {
    Warn(review.status().message());
    return;
  }
  Say(style_.Bold(">> Code review started: " + NeutralizeControls(request->hint) + " <<") + "\n");
  // The review runs in place of the session for one turn; its prompt is not
  // the user's, so it stays out of history.jsonl.
  std::unique_ptr<core::Conversation> own = session_->Exchange(std::move(*review));
  in_history_.insert(request->prompt);
  RunUserTurn(request->prompt);
  session_->Exchange(std::move(own));
  engine().BindSession(conversation().session().id);
  Say(style_.Bold("<< Code review finished >>") + "\n");
}

void InteractiveSession::PermissionsCommand(const SlashCommand& cmd) {
  const core::Config& config = engine().config();
  const std::string sandbox(core::SandboxModeName(config.sandbox_mode));
  const std::string approval(core::ApprovalPolicyName(config.approval_policy));
  std::string current = "custom";
  for (const auto& p : kPresets) {
    if (sandbox == p.sandbox && approval == p.approval) current = p.name;
  }
  if (cmd.arg.empty() && tty_) {
    std::vector<Choice> choices;
    for (const auto& p : kPresets) choices.push_back({p.name, p.help});
    OpenChoice("permissions", current, choices);
    return;
  }
  if (cmd.arg.empty()) {
    Say("permissions: " + current + " (sandbox " + sandbox + ", approvals " + approval + ")\n");
    return;
  }
  const PermissionPreset* chosen = nullptr;
  for (const auto& p : kPresets) {
    if (cmd.arg == p.name) chosen = &p;
  }
  if (chosen == nullptr) {
    Warn("'" + cmd.arg + "' is not one of read-only, auto, full-access");
    return;
  }
  RunFlags flags = flags_;
  flags.sandbox = chosen->sandbox;
  flags.approval = chosen->approval;
  flags.full_auto = false;
  flags.bypass = false;
  Status s = Reopen(flags);
  if (!s.ok()) {
    Warn(s.message());
    return;
  }
  Say("permissions set to " + style_.Bold(chosen->name) + " (sandbox " + chosen->sandbox +
      ", approvals " + chosen->approval + ") for this session\n");
}

void InteractiveSession::CopyCommand() {
  auto items = engine().store().LoadTranscript(conversation().session());
  std::string last;
  if (items.ok() && conversation().persisted()) {
    for (const auto& stored : *items) {
      if (stored.item.kind == core::ItemKind::kMessage && stored.item.role == "assistant") {
        last = core::MessageText(stored.item);
      }
    }
  }
  if (last.empty()) {
    Warn("no answer to copy yet");
    return;
  }
  if (!tty_) {
    Warn("/copy needs a terminal (it sets the clipboard with OSC 52)");
    return;
  }
  // OSC 52: the terminal (or tmux, with set-clipboard) sets the clipboard,
  // over ssh too. The text is base64: nothing in it reaches the screen.
  terminal_->Write("\x1b]52;c;" + Base64Encode(last) + "\x07");
  Say("copied the last answer (" + std::to_string(last.size()) +
      " bytes) to the clipboard (OSC 52: your terminal must allow it)\n");
}

void InteractiveSession::ExportCommand(const SlashCommand& cmd) {
  if (!conversation().persisted()) {
    Warn("nothing to export yet: the session has no message");
    return;
  }
  auto* database = dynamic_cast<storage::SessionDatabase*>(&engine().store());
  if (database == nullptr) {
    Warn("this store cannot export sessions");
    return;
  }
  const std::string id = conversation().session().id;
  Result<std::string> text =
      storage::ExportSession(*database, id, storage::ExportFormat::kMarkdown);
  if (!text.ok()) {
    Warn(text.status().message());
    return;
  }
  std::filesystem::path file = cmd.arg.empty() ? "codex-" + id.substr(0, 8) + ".md" : cmd.arg;
  if (file.is_relative()) file = std::filesystem::path(engine().config().cwd) / file;
  std::error_code ec;
  if (std::filesystem::exists(file, ec)) {
    Warn(NeutralizeControls(file.string()) + " exists; give /export another file name");
    return;
  }
  // Whole or not at all: a crash mid-write leaves no cut file under the name.
  if (Status written = ReplaceWholeFile(file.string(), *text); !written.ok()) {
    Warn("could not write " + NeutralizeControls(written.message()));
    return;
  }
  Say("exported this session as Markdown to " + NeutralizeControls(file.string()) + "\n");
}

void InteractiveSession::McpCommand() {
  const core::Config& config = engine().config();
  if (config.mcp_servers.empty()) {
    Say("no MCP servers configured ([mcp_servers.<name>] in config.toml)\n");
    return;
  }
  // Each server's state now; its tools join the model's at the next turn
  // once it is ready.
  const std::vector<mcp::ServerStatus> servers = engine().McpServers();
  std::string out = style_.Bold("MCP servers") + "\n";
  for (const auto& [name, server] : config.mcp_servers) {
    std::string what = server.url.empty() ? server.command : server.url;
    const mcp::ServerStatus* status = nullptr;
    for (const auto& s : servers) {
      if (s.name == name) status = &s;
    }
    std::string state = "disabled";
    if (server.enabled && status != nullptr)
      state = std::string(mcp::ServerStateName(status->state));
    if (server.enabled && status == nullptr) state = "not started";
    out += "  " + style_.Cyan(NeutralizeControls(name)) + "  " + NeutralizeControls(what) + "  " +
           (state == "ready" ? state : style_.Dim(state)) + "\n";
    if (status != nullptr && status->state == mcp::ServerState::kFailed) {
      out += "    error: " + NeutralizeControls(status->error) + "\n";
    }
    if (status != nullptr && status->state == mcp::ServerState::kStarting) {
      out +=
          "    " + style_.Dim("its tools are offered from the first turn after it is ready") + "\n";
    }
    std::string names;
    if (status != nullptr) {
      for (const auto& t : status->tools) names += (names.empty() ? "" : ", ") + t;
    }
    out += "    tools: " + (names.empty() ? style_.Dim("none") : NeutralizeControls(names)) + "\n";
  }
  Say(out);
}

void InteractiveSession::RenameCommand(const SlashCommand& cmd) {
  if (!conversation().persisted()) {
    Warn("nothing to rename yet: send a message first (the session is stored with it)");
    return;
  }
  auto* database = dynamic_cast<storage::SessionDatabase*>(&engine().store());
  if (database == nullptr) {
    Warn("this store cannot rename sessions");
    return;
  }
  Status s = database->Rename(conversation().session().id, cmd.arg);
  if (!s.ok()) {
    Warn(s.message());
    return;
  }
  Say("session named " + style_.Bold(NeutralizeControls(cmd.arg)) + " (codex resume " +
      NeutralizeControls(cmd.arg) + ")\n");
}

}  // namespace codex::cli::interactive_internal
