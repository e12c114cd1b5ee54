// Code review (`codex review`, `codex exec review`, the interactive `/review`),
// run the way Codex 0.169 runs it: a session of its own whose first item is a
// developer message with the review guidelines (ReviewGuidelines, ending with
// the JSON output schema Codex's reviewer answers in) and which sends no base
// instructions; one user message saying what to review; the model inspects
// the workspace with its own (sandboxed) tools; its final message is the
// findings as JSON, which ParseReviewOutput reads and RenderReviewOutput shows
// as Codex does ("<explanation>\n\nReview comment:\n\n- <title> — <path>:<a>-<b>\n  <body>").
//
// The one git command codex itself runs for a review (on a workspace the model
// may have written) goes through core/host_git.h: `git merge-base` for a base
// branch and `git status` to refuse an empty --uncommitted review.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codex::core {

struct ReviewTarget {
  enum class Kind { kUncommitted, kBaseBranch, kCommit, kCustom };
  Kind kind = Kind::kUncommitted;
  std::string branch;        // kBaseBranch
  std::string sha;           // kCommit
  std::string title;         // kCommit, optional (--title)
  std::string instructions;  // kCustom: the user's own review instructions
};

// What a review sends and shows.
struct ReviewRequest {
  std::string prompt;  // the user message
  std::string hint;    // what is reviewed, for the user ("current changes", "commit abc1234")
};

// Builds the request for `target` in the git work tree `cwd`. A base branch is
// resolved to its merge base with HEAD (the prompt names both); when that fails
// (no such branch here) the prompt asks the model to find it from the branch's
// upstream, as Codex does. An uncommitted review of a clean tree is
// kFailedPrecondition ("nothing to review"); outside a git work tree,
// kFailedPrecondition naming the directory.
Result<ReviewRequest> PrepareReview(const ReviewTarget& target, const std::string& cwd);

// What the interactive /review picker offers (cli/interactive), read from the
// git work tree `cwd` through core/host_git.h like the rest of a review:
// the local branches, the current one (`current`, "" on a detached HEAD)
// last and the others by their latest commit, newest first; and the newest
// `limit` commits of HEAD with their subjects. Branch names and subjects are
// the repository's (a subject may hold any byte but a newline): callers show
// them through the terminal-safe rule. Outside a work tree,
// kFailedPrecondition naming the directory.
struct ReviewBranches {
  std::string current;
  std::vector<std::string> names;
};
Result<ReviewBranches> ListReviewBranches(const std::string& cwd);

struct ReviewCommit {
  std::string sha;  // abbreviated as git abbreviates it: unique in the repository
  std::string subject;
};
Result<std::vector<ReviewCommit>> RecentReviewCommits(const std::string& cwd, size_t limit);

// The developer message a review session starts with.
std::string_view ReviewGuidelines();

struct ReviewFinding {
  std::string title;
  std::string body;
  double confidence_score = 0;
  std::optional<int> priority;  // 0..3 (P0..P3)
  std::string path;             // code_location.absolute_file_path
  int line_start = 0;
  int line_end = 0;
};

struct ReviewOutput {
  std::vector<ReviewFinding> findings;
  std::string overall_correctness;  // "patch is correct" | "patch is incorrect"
  std::string overall_explanation;
  double overall_confidence_score = 0;
};

// The model's final message as a ReviewOutput: the whole text as JSON, else
// the outermost {...} in it (a fenced answer), else the text itself as the
// explanation with no findings (as Codex does with a prose answer).
ReviewOutput ParseReviewOutput(std::string_view text);

// What the user sees: the explanation, then "Review comment:" (one finding)
// or "Full review comments:" (several), each "- TITLE — PATH:START-END" with
// its body indented by two spaces; sections separated by a blank line.
std::string RenderReviewOutput(const ReviewOutput& output);

}  // namespace codex::core
