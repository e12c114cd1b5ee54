#include "cli/exec_cmd.h"

#include <unistd.h>

#include <memory>
#include <optional>

#include "base/file.h"
#include "cli/engine.h"
#include "cli/image_input.h"
#include "cli/interactive/style.h"
#include "cli/interrupt.h"
#include "cli/json_events.h"
#include "cli/notify.h"
#include "cli/progress_printer.h"
#include "cli/review_display.h"
#include "cli/run_flags.h"
#include "cli/session_controller.h"
#include "cli/session_resolution.h"
#include "cli/terminal_text.h"
#include "core/review.h"
#include "core/sandboxed_runner.h"

namespace codex::cli {

namespace {

struct ExecArgs {
  RunFlags flags;
  std::string prompt;
  std::vector<std::string> images;  // -i/--image FILE (repeatable, comma-separated)
  std::string output_last_message;  // -o FILE
  std::string color = "auto";       // --color always|never|auto
  // resume / fork
  std::vector<std::string> positionals;
  bool last = false;
  bool all = false;       // resume --last: the newest of every directory
  bool existing = false;  // resume --last: fail when none is in scope, not start one
  int at_turn = kNoTurn;
  // review: exactly one of these says what to review
  bool review_uncommitted = false;
  std::string review_base;
  std::string review_commit;
  std::string review_title;
  std::string review_prompt;  // custom review instructions ("-": stdin)
};

enum class ExecMode { kNew, kResume, kFork, kReview };

// The prompt text: the argument, or stdin for "-" (or when absent and stdin
// is not a terminal). With a prompt argument, piped stdin is appended as a
// <stdin> block, as Codex does.
Result<std::string> ReadPrompt(const std::string& arg) {
  std::string prompt = arg;
  const bool piped = !isatty(STDIN_FILENO);
  const auto blank = [](const std::string& text) {
    return text.find_first_not_of(" \t\r\n") == std::string::npos;
  };
  if (arg == "-" || (arg.empty() && piped)) {
    Result<std::string> input = ReadToEnd(STDIN_FILENO, "stdin");
    if (!input.ok()) {
      return InvalidArgumentError("cannot read the prompt from " + input.status().message() +
                                  "; pipe the prompt in, or pass it as an argument");
    }
    prompt = std::move(*input);
    if (arg == "-" && blank(prompt)) {
      return InvalidArgumentError(
          "no prompt: '-' reads it from stdin, and stdin was empty; pipe the prompt in, or pass "
          "it as an argument");
    }
  } else if (piped) {
    // A stdin that cannot be read (closed: `<&-`) adds nothing, as an empty one.
    Result<std::string> read = ReadToEnd(STDIN_FILENO, "stdin");
    std::string input = read.ok() ? std::move(*read) : std::string();
    while (!input.empty() && (input.back() == '\n' || input.back() == '\r')) input.pop_back();
    if (!input.empty()) prompt += "\n\n<stdin>\n" + input + "\n</stdin>";
  }
  if (blank(prompt)) {
    return InvalidArgumentError("no prompt: pass it as an argument, or '-' to read it from stdin");
  }
  return prompt;
}

// What `exec review` reviews: one of --uncommitted, --base, --commit, PROMPT.
Result<core::ReviewTarget> ReviewTargetFrom(const ExecArgs& args) {
  std::vector<std::string> given;
  core::ReviewTarget target;
  if (args.review_uncommitted) {
    given.push_back("--uncommitted");
    target.kind = core::ReviewTarget::Kind::kUncommitted;
  }
  if (!args.review_base.empty()) {
    given.push_back("--base");
    target.kind = core::ReviewTarget::Kind::kBaseBranch;
    target.branch = args.review_base;
  }
  if (!args.review_commit.empty()) {
    given.push_back("--commit");
    target.kind = core::ReviewTarget::Kind::kCommit;
    target.sha = args.review_commit;
    target.title = args.review_title;
  }
  if (!args.review_prompt.empty()) {
    given.push_back("PROMPT");
    target.kind = core::ReviewTarget::Kind::kCustom;
    ASSIGN_OR_RETURN(target.instructions, ReadPrompt(args.review_prompt));
  }
  if (!args.review_title.empty() && args.review_commit.empty()) {
    return InvalidArgumentError("--title names the commit of --commit SHA; add --commit");
  }
  if (given.empty()) {
    return InvalidArgumentError(
        "review needs --uncommitted, --base BRANCH, --commit SHA, or PROMPT (your own review "
        "instructions)");
  }
  if (given.size() > 1) {
    return InvalidArgumentError("review takes one of --uncommitted, --base, --commit or PROMPT; " +
                                given[0] + " and " + given[1] + " were both given");
  }
  return target;
}

// Writes the final message for -o/--output-last-message.
Status WriteLastMessage(const std::string& path, const std::string& message) {
  if (Status written = ReplaceWholeFile(path, message); !written.ok()) {
    return FailedPreconditionError("cannot write the last message to -o " + written.message() +
                                   "; choose a writable file");
  }
  return OkStatus();
}

Status RunExec(const GlobalOptions& global, ExecArgs& args, ExecMode mode) {
  std::string id;
  std::string prompt_arg = args.prompt;
  if (mode == ExecMode::kResume) {
    if (args.last) {
      if (args.positionals.size() > 1) {
        return InvalidArgumentError(
            "exec resume --last takes one PROMPT; quote it if it has spaces");
      }
      if (!args.positionals.empty()) prompt_arg = args.positionals[0];
    } else {
      if (args.all || args.existing) {
        return InvalidArgumentError(std::string(args.all ? "--all" : "--existing") +
                                    " only applies to exec resume --last; drop it or the ID");
      }
      if (args.positionals.empty()) {
        return InvalidArgumentError(
            "exec resume needs a session id or --last; 'codex sessions list' shows them");
      }
      id = args.positionals[0];
      if (args.positionals.size() > 2) {
        return InvalidArgumentError("exec resume takes ID and one PROMPT; quote the prompt");
      }
      if (args.positionals.size() == 2) prompt_arg = args.positionals[1];
    }
  } else if (mode == ExecMode::kFork) {
    if (args.positionals.empty()) {
      return InvalidArgumentError("exec fork needs the id of the session to branch");
    }
    id = args.positionals[0];
    if (args.positionals.size() > 2) {
      return InvalidArgumentError("exec fork takes ID and one PROMPT; quote it");
    }
    if (args.positionals.size() == 2) prompt_arg = args.positionals[1];
  }

  if (args.flags.ephemeral && mode != ExecMode::kNew) {
    return InvalidArgumentError(
        "--ephemeral starts a session that is not saved; it cannot resume or fork one");
  }
  Color color = Color::kDisabled;
  if (args.color == "always") {
    color = Color::kEnabled;
  } else if (args.color == "auto") {
    color = DetectColor(STDERR_FILENO);
  } else if (args.color != "never") {
    return InvalidArgumentError("--color '" + args.color + "' is not one of always, never, auto");
  }
  std::vector<std::string> image_urls;
  for (const std::string& path : args.images) {
    ASSIGN_OR_RETURN(std::string url, ImageDataUrl(path));
    image_urls.push_back(std::move(url));
  }
  std::optional<core::ReviewTarget> review;
  if (mode == ExecMode::kReview) {
    ASSIGN_OR_RETURN(review, ReviewTargetFrom(args));
    args.flags.review = true;
  }
  std::string prompt;
  if (!review) {
    ASSIGN_OR_RETURN(prompt, ReadPrompt(prompt_arg));
  }
  args.flags.runs_commands = true;
  ASSIGN_OR_RETURN(std::unique_ptr<SessionController> session,
                   SessionController::Open(global, args.flags));
  std::string review_hint;
  if (review) {
    // Before anything is sent: the git it runs goes through core/host_git.h.
    ASSIGN_OR_RETURN(core::ReviewRequest request,
                     core::PrepareReview(*review, session->config().cwd));
    prompt = request.prompt;
    review_hint = request.hint;
  }

  // Cancelled by Ctrl-C, or by --json events that can no longer be written.
  core::CancelToken cancel;
  std::unique_ptr<core::TurnObserver> observer;
  JsonEventWriter* json = nullptr;
  if (args.flags.json) {
    auto writer = std::make_unique<JsonEventWriter>(stdout, session->config().cwd,
                                                    session->config().hide_agent_reasoning);
    writer->CancelWhenOutputLost(&cancel);
    json = writer.get();
    observer = std::move(writer);
  } else {
    observer = std::make_unique<ProgressPrinter>(stderr, color,
                                                 session->config().show_raw_agent_reasoning);
  }
  // A review's answer (the findings as JSON) is shown rendered (cli/review_display.h).
  std::unique_ptr<core::TurnObserver> review_display;
  if (review) review_display = std::make_unique<ReviewDisplayObserver>(*observer);
  // codex exec never asks: a request for approval is declined and the model told.
  RETURN_IF_ERROR(
      session->StartModel(review_display ? *review_display : *observer, /*approver=*/nullptr));

  core::SessionStore& store = session->store();
  const core::Config& config = session->config();
  // `resume --last` with no session in scope (cli/session_resolution.h)
  // starts a new one, as Codex 0.169 does; --existing makes it an error.
  std::optional<core::SessionInfo> resumed;
  if (mode == ExecMode::kResume && args.last) {
    ASSIGN_OR_RETURN(resumed, LatestInScope(store, config.cwd, args.all));
    if (!resumed && args.existing) return NoSessionInScope(config.cwd, args.all);
  }
  if (mode == ExecMode::kNew || mode == ExecMode::kReview || (args.last && !resumed)) {
    RETURN_IF_ERROR(session->StartNew(review ? "review" : "exec"));
  } else {
    ASSIGN_OR_RETURN(core::SessionInfo chosen,
                     resumed ? Result<core::SessionInfo>(*resumed)
                             : ResolveSession(store, id, false, false, config.cwd));
    if (mode == ExecMode::kFork) {
      std::optional<int> at;
      if (args.at_turn != kNoTurn) at = args.at_turn;
      RETURN_IF_ERROR(session->ForkAndResume(chosen, at).status());
    } else {
      RETURN_IF_ERROR(session->Resume(chosen));
    }
  }
  core::Conversation* conversation = &session->conversation();
  session->engine().BindSession(conversation->session().id);
  // Refused here, before anything is printed or sent, while another process
  // runs a turn on this session.
  RETURN_IF_ERROR(conversation->AcquireTurnLease());
  if (json) {
    json->ThreadStarted(conversation->session().id);
    if (json->output_lost()) {
      // Nobody can read the events (stdout closed or full): run nothing.
      Status lost = StdoutWritten();
      return Status(lost.code(), lost.message() + "; nothing was sent").WithReason(lost.reason());
    }
  } else {
    if (mode == ExecMode::kResume && !resumed && args.last) {
      PrintF(stderr, "no session in %s to resume (--all widens); starting a new session\n",
             config.cwd.c_str());
    }
    PrintF(stderr, "session %s · model %s · provider %s · sandbox %s\n",
           conversation->session().id.c_str(), config.model.c_str(),
           config.model_provider_id.c_str(),
           std::string(core::SandboxModeName(config.sandbox_mode)).c_str());
    if (review) PrintF(stderr, "review: %s\n", review_hint.c_str());
  }

  InstallInterruptHandler(&cancel);
  auto result = session->RunTurn(prompt, cancel, image_urls);
  RemoveInterruptHandler();
  session->engine().ReportMcpNotices(/*at_exit=*/true);
  const std::string session_id = conversation->session().id;
  if (json && json->output_lost()) {
    // The reader went away mid-turn: the turn stopped as Ctrl-C stops it;
    // what it did is saved.
    Status lost = StdoutWritten();
    return Status(lost.code(), lost.message() + "; the turn was stopped and saved: resume with " +
                                   "'codex exec resume " + session_id + "'");
  }
  if (!result.ok()) {
    const Status& failed = result.status();
    if (failed.code() != StatusCode::kCancelled) return failed;
    Status interrupted(failed.code(), failed.message() + "; resume with 'codex exec resume " +
                                          conversation->session().id + "'");
    return interrupted.WithReason(failed.reason());
  }
  if (review) result->final_message = ReviewShownText(result->final_message);
  RunNotify(config.notify,
            NotificationJson({conversation->session().id,
                              result->turn_id,
                              config.cwd,
                              {prompt},
                              result->final_message}),
            core::ModelWritableRootsFor(core::SandboxPolicyFor(config), config.cwd));
  if (!args.flags.json) {
    const std::string shown = TextForStream(result->final_message, isatty(fileno(stdout)) != 0);
    PrintText(stdout, shown);
    if (shown.empty() || shown.back() != '\n') {
      PrintText(stdout, "\n");
    }
  }
  // -o after stdout: a file that cannot be written loses neither.
  Status written = StdoutWritten();
  if (written.ok() && !args.output_last_message.empty()) {
    written = WriteLastMessage(args.output_last_message, result->final_message);
  }
  if (!written.ok()) {
    return Status(written.code(), written.message() + "; the turn is saved: read its answer with " +
                                      "'codex sessions show " + session_id + "'");
  }
  return OkStatus();
}

// The flags of `codex exec` (and its resume/fork) beyond the shared RunFlags.
void AddExecFlags(CLI::App* cmd, ExecArgs& args) {
  // As Codex's `-i, --image <FILE>...`: one or more files (and comma lists);
  // end the list with `--` before a prompt: `-i a.png b.png -- "describe"`.
  cmd->add_option("-i,--image", args.images, "Attach images to the prompt: FILE... (repeatable)")
      ->delimiter(',')
      ->allow_extra_args(true);
  cmd->add_option("-o,--output-last-message", args.output_last_message,
                  "Write the agent's last message to FILE")
      ->check(NonEmptyValue());
  cmd->add_option("--output-schema", args.flags.output_schema_file,
                  "JSON Schema FILE the final message must follow (sent as text.format)")
      ->check(NonEmptyValue());
  cmd->add_option("--color", args.color, "Colour on stderr: always | never | auto (default)");
  cmd->add_flag("--ephemeral", args.flags.ephemeral, "Do not save the session");
  cmd->add_flag("--ignore-user-config", args.flags.ignore_user_config,
                "Do not read $CODEX_HOME/config.toml (-c, -p and flags still apply)");
}

}  // namespace

void RegisterExecCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  auto args = std::make_shared<ExecArgs>();
  CLI::App* exec = app.add_subcommand("exec", "Run one non-interactive turn");
  exec->alias("e");
  AddRunFlags(exec, args->flags);
  AddExecFlags(exec, *args);
  exec->add_option("PROMPT", args->prompt,
                   "The prompt, or '-' to read it from stdin (piped stdin with a prompt is "
                   "appended as a <stdin> block)");
  exec->require_subcommand(0, 1);

  CLI::App* resume =
      exec->add_subcommand("resume", "Continue a session: ID or --last, then PROMPT");
  resume->fallthrough();
  resume->add_flag("--last", args->last,
                   "Resume the most recent session of this directory (or project); a new "
                   "session when it has none");
  resume->add_flag("--all", args->all, "With --last: the most recent session of every directory");
  resume->add_flag("--existing", args->existing,
                   "With --last: fail (exit 4) when there is no session to resume, instead of "
                   "starting a new one");
  resume->add_option("ARGS", args->positionals, "[ID] PROMPT");
  AddRunFlags(resume, args->flags);
  AddExecFlags(resume, *args);

  CLI::App* fork = exec->add_subcommand("fork", "Branch a session, then continue the branch");
  fork->fallthrough();
  fork->add_option("--at-turn", args->at_turn, "Keep only the first N turns (0 to the count)");
  fork->add_option("ARGS", args->positionals, "ID PROMPT");
  AddRunFlags(fork, args->flags);
  AddExecFlags(fork, *args);

  CLI::App* review = exec->add_subcommand(
      "review", "Review code changes: --uncommitted, --base BRANCH, --commit SHA, or PROMPT");
  review->fallthrough();
  review->add_flag("--uncommitted", args->review_uncommitted,
                   "Review staged, unstaged and untracked changes");
  review->add_option("--base", args->review_base,
                     "Review the changes against BRANCH (from their merge base)");
  review->add_option("--commit", args->review_commit, "Review the changes made by commit SHA");
  review->add_option("--title", args->review_title,
                     "The commit's title, for the prompt and the summary (with --commit)");
  review->add_option("PROMPT", args->review_prompt,
                     "Your own review instructions, or '-' to read them from stdin");
  AddRunFlags(review, args->flags);
  AddExecFlags(review, *args);

  exec->callback([&global, args, &result, resume, fork, review]() {
    ExecMode mode = ExecMode::kNew;
    if (resume->parsed()) mode = ExecMode::kResume;
    if (fork->parsed()) mode = ExecMode::kFork;
    if (review->parsed()) mode = ExecMode::kReview;
    result.Set(RunExec(global, *args, mode));
  });
}

}  // namespace codex::cli
