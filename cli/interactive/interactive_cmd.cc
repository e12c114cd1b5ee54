#include "cli/interactive/interactive_cmd.h"

#include <memory>

#include "cli/engine.h"
#include "cli/exit_codes.h"
#include "cli/interactive/interactive_app.h"

namespace codex::cli {

namespace {

struct InteractiveArgs {
  InteractiveOptions top;     // codex [PROMPT]
  InteractiveOptions resume;  // codex resume ...
  std::vector<std::string> resume_args;
  bool last = false;
};

}  // namespace

void RegisterInteractiveCommands(CLI::App& app, GlobalOptions& global, CommandOutcome& outcome) {
  auto args = std::make_shared<InteractiveArgs>();
  app.add_option("PROMPT", args->top.prompt,
                 "Start an interactive session with this first prompt (quote it)");
  AddRunFlags(&app, args->top.flags);
  // --json belongs to `codex exec`; the interactive session has no JSON mode.
  app.remove_option(app.get_option("--json"));

  CLI::App* resume = app.add_subcommand(
      "resume", "Continue a session interactively: ID, --last, or pick one from a list");
  resume->add_flag("--last", args->last,
                   "Resume the most recent session of this directory (or project); a new "
                   "session when it has none");
  resume->add_flag("--all", args->resume.all,
                   "The sessions of every directory (the picker, or --last)");
  resume->add_flag("--existing", args->resume.existing,
                   "With --last: fail (exit 4) when there is no session to resume, instead of "
                   "starting a new one");
  resume->add_option("ARGS", args->resume_args, "[ID] [PROMPT]");
  AddRunFlags(resume, args->resume.flags);
  resume->remove_option(resume->get_option("--json"));
  resume->callback([&global, args, &outcome]() {
    InteractiveOptions options = args->resume;
    const auto& rest = args->resume_args;
    if (args->last) {
      if (rest.size() > 1) {
        outcome.Set(InvalidArgumentError("resume --last takes at most one PROMPT; quote it"));
        return;
      }
      options.start = SessionStart::kResumeLast;
      if (!rest.empty()) options.prompt = rest[0];
    } else if (rest.empty()) {
      options.start = SessionStart::kPick;
    } else {
      if (rest.size() > 2) {
        outcome.Set(
            InvalidArgumentError("resume takes ID and at most one PROMPT; quote the prompt"));
        return;
      }
      options.start = SessionStart::kResumeId;
      options.session_id = rest[0];
      if (rest.size() == 2) options.prompt = rest[1];
    }
    if (options.all && options.start == SessionStart::kResumeId) {
      outcome.Set(InvalidArgumentError("--all applies to the picker and --last; drop the ID"));
      return;
    }
    if (options.existing && options.start != SessionStart::kResumeLast) {
      outcome.Set(InvalidArgumentError("--existing only applies to resume --last"));
      return;
    }
    outcome.Set(RunInteractive(global, std::move(options)));
  });

  app.callback([&app, &global, args, &outcome]() {
    if (!app.get_subcommands().empty()) return;  // a subcommand ran
    outcome.Set(RunInteractive(global, args->top));
  });
}

}  // namespace codex::cli
