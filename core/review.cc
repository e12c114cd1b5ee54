#include "core/review.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json.h"
#include "base/strings.h"
#include "core/host_git.h"

namespace codex::core {

namespace {

using Json = nlohmann::json;

// The guidelines are this codex's own words; the output schema at the end is
// the format Codex's reviewer answers in (ParseReviewOutput reads it).
constexpr std::string_view kGuidelines = R"(# Code review

You are reviewing a change another engineer made. Inspect it with your tools
(read the diff and the files around it; do not modify anything) and report the
problems its author would want to fix before merging.

What counts as a finding:
- It affects correctness, security, performance or maintainability in a way
  that matters, and the change introduced it (not a pre-existing problem).
- It is one concrete, actionable problem, shown by the code rather than
  assumed about the rest of the codebase or the author's intent.
- Fixing it does not ask for more rigour than the codebase shows elsewhere.
- It is not plainly a deliberate choice of the author.
Skip style nits unless they hide meaning or break documented rules. Project
instruction files (AGENTS.md and the like) that apply to the changed files
are part of the rules; more specific ones win, and the user's own review
instructions win over everything.

Each finding: a title starting with its priority tag ([P0] blocks a release
or breaks every user; [P1] fix in the next cycle; [P2] should be fixed;
[P3] nice to have) and the numeric "priority" 0..3 to match; a body of one
paragraph saying why it is wrong, under which inputs or conditions, without
flattery and with any code kept to three lines; the smallest line range
(a few lines) that shows it, overlapping the change. List every finding the
author would fix; none at all is a fine answer when there is nothing.

End with a verdict: "patch is correct" when existing code and tests keep
working and nothing blocking is wrong, else "patch is incorrect", explained
in one to three sentences.

Answer with this JSON only (no Markdown fence, no prose around it):

{
  "findings": [
    {
      "title": "<at most 80 characters, imperative>",
      "body": "<Markdown: why this is a problem; cite files, lines, functions>",
      "confidence_score": <float 0.0-1.0>,
      "priority": <int 0-3, optional>,
      "code_location": {
        "absolute_file_path": "<file path>",
        "line_range": {"start": <int>, "end": <int>}
      }
    }
  ],
  "overall_correctness": "patch is correct" | "patch is incorrect",
  "overall_explanation": "<1-3 sentences justifying the verdict>",
  "overall_confidence_score": <float 0.0-1.0>
})";

double NumberField(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

int IntField(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? static_cast<int>(it->get<double>()) : 0;
}

// The review JSON of `text`, or nullopt when it is not one (an object with a
// "findings" array or an "overall_explanation").
std::optional<ReviewOutput> FromJson(std::string_view text) {
  const Json j = Json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const auto findings = j.find("findings");
  const bool has_findings = findings != j.end() && findings->is_array();
  if (!has_findings && !j.contains("overall_explanation")) return std::nullopt;
  ReviewOutput out;
  out.overall_correctness = StringField(j, "overall_correctness");
  out.overall_explanation = StringField(j, "overall_explanation");
  out.overall_confidence_score = NumberField(j, "overall_confidence_score");
  if (!has_findings) return out;
  for (const Json& f : *findings) {
    if (!f.is_object()) continue;
    ReviewFinding finding;
    finding.title = StringField(f, "title");
    finding.body = StringField(f, "body");
    finding.confidence_score = NumberField(f, "confidence_score");
    if (auto p = f.find("priority"); p != f.end() && p->is_number()) {
      finding.priority = static_cast<int>(p->get<double>());
    }
    if (auto loc = f.find("code_location"); loc != f.end() && loc->is_object()) {
      finding.path = StringField(*loc, "absolute_file_path");
      if (auto range = loc->find("line_range"); range != loc->end() && range->is_object()) {
        finding.line_start = IntField(*range, "start");
        finding.line_end = IntField(*range, "end");
      }
    }
    out.findings.push_back(std::move(finding));
  }
  return out;
}

Status NotAWorkTree(const std::string& cwd) {
  return FailedPreconditionError("codex review needs a git work tree; " + cwd +
                                 " is not in one (run it inside the repository)");
}

}  // namespace

std::string_view ReviewGuidelines() { return kGuidelines; }

Result<ReviewRequest> PrepareReview(const ReviewTarget& target, const std::string& cwd) {
  ReviewRequest request;
  switch (target.kind) {
    case ReviewTarget::Kind::kCustom:
      request.prompt = target.instructions;
      request.hint = std::string(codex::Trim(target.instructions));
      return request;
    case ReviewTarget::Kind::kCommit: {
      if (target.sha.empty() || target.sha.starts_with("-")) {
        return InvalidArgumentError("--commit needs a commit, got '" + target.sha + "'");
      }
      const std::string short_sha = target.sha.substr(0, 7);
      request.prompt = "Review the changes made by commit " + target.sha;
      if (!target.title.empty()) request.prompt += " (\"" + target.title + "\")";
      request.prompt += ". Report prioritized, actionable findings.";
      request.hint = "commit " + short_sha + (target.title.empty() ? "" : ": " + target.title);
      return request;
    }
    case ReviewTarget::Kind::kUncommitted: {
      ASSIGN_OR_RETURN(HostGitResult status,
                       RunHostGit(cwd, {"status", "--porcelain", "--untracked-files=all"}));
      if (status.exit_code != 0) return NotAWorkTree(cwd);
      if (codex::Trim(status.stdout_text).empty()) {
        return FailedPreconditionError("nothing to review: " + cwd +
                                       " has no uncommitted changes (staged, unstaged or "
                                       "untracked); use --base BRANCH or --commit SHA");
      }
      request.prompt =
          "Review the current code changes (staged, unstaged and untracked files) and report "
          "prioritized, actionable findings.";
      request.hint = "current changes";
      return request;
    }
    case ReviewTarget::Kind::kBaseBranch: {
      const std::string& branch = target.branch;
      request.hint = "changes against '" + branch + "'";
      if (branch.empty() || branch.starts_with("-")) {
        return InvalidArgumentError("--base needs a branch name, got '" + branch + "'");
      }
      ASSIGN_OR_RETURN(HostGitResult base, RunHostGit(cwd, {"merge-base", "HEAD", branch}));
      const std::string sha = std::string(codex::Trim(base.stdout_text));
      if (base.exit_code == 0 && !sha.empty()) {
        request.prompt = "Review the code changes against the base branch '" + branch +
                         "'. Their merge base is commit " + sha + "; run `git diff " + sha +
                         "` to see the changes relative to " + branch +
                         ". Report prioritized, actionable findings.";
      } else {
        ASSIGN_OR_RETURN(HostGitResult top, RunHostGit(cwd, {"rev-parse", "--show-toplevel"}));
        if (top.exit_code != 0) return NotAWorkTree(cwd);
        request.prompt = "Review the code changes against the base branch '" + branch +
                         "'. First find the merge base of the current branch and " + branch +
                         "'s upstream (e.g. `git merge-base HEAD \"$(git rev-parse "
                         "--abbrev-ref \"" +
                         branch +
                         "@{upstream}\")\"`), then run `git diff` against it to see what would "
                         "be merged into " +
                         branch + ". Report prioritized, actionable findings.";
      }
      return request;
    }
  }
  return InternalError("unknown review target");
}

Result<ReviewBranches> ListReviewBranches(const std::string& cwd) {
  ASSIGN_OR_RETURN(HostGit git, HostGit::Open(cwd));
  ASSIGN_OR_RETURN(HostGitResult refs, git.Run({"for-each-ref", "--sort=-committerdate",
                                                "--format=%(refname:short)", "refs/heads/"}));
  if (refs.exit_code != 0) return NotAWorkTree(cwd);
  ReviewBranches out;
  ASSIGN_OR_RETURN(HostGitResult head, git.Run({"symbolic-ref", "--quiet", "--short", "HEAD"}));
  if (head.exit_code == 0) out.current = std::string(codex::Trim(head.stdout_text));
  std::istringstream in(refs.stdout_text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line != out.current) out.names.push_back(line);
  }
  if (!out.current.empty()) out.names.push_back(out.current);
  return out;
}

Result<std::vector<ReviewCommit>> RecentReviewCommits(const std::string& cwd, size_t limit) {
  ASSIGN_OR_RETURN(HostGitResult log,
                   RunHostGit(cwd, {"log", "--no-show-signature", "-n", std::to_string(limit),
                                    "--format=%h %s", "HEAD", "--"}));
  std::vector<ReviewCommit> out;
  if (log.exit_code != 0) {
    ASSIGN_OR_RETURN(HostGitResult top, RunHostGit(cwd, {"rev-parse", "--show-toplevel"}));
    if (top.exit_code != 0) return NotAWorkTree(cwd);
    return out;  // a repository without commits
  }
  std::istringstream in(log.stdout_text);
  for (std::string line; std::getline(in, line);) {
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    out.push_back({line.substr(0, sp), line.substr(sp + 1)});
  }
  return out;
}

ReviewOutput ParseReviewOutput(std::string_view text) {
  if (auto out = FromJson(text)) return *out;
  const size_t open = text.find('{');
  const size_t close = text.rfind('}');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
    if (auto out = FromJson(text.substr(open, close - open + 1))) return *out;
  }
  ReviewOutput prose;
  prose.overall_explanation = std::string(text);
  return prose;
}

std::string RenderReviewOutput(const ReviewOutput& output) {
  std::vector<std::string> sections;
  const std::string explanation = std::string(codex::Trim(output.overall_explanation));
  if (!explanation.empty()) sections.push_back(explanation);
  if (!output.findings.empty()) {
    std::string block =
        output.findings.size() == 1 ? "Review comment:\n" : "Full review comments:\n";
    for (const ReviewFinding& f : output.findings) {
      block += "\n- " + f.title + " — " + f.path + ":" + std::to_string(f.line_start) + "-" +
               std::to_string(f.line_end) + "\n";
      size_t start = 0;
      const std::string body = std::string(codex::Trim(f.body));
      while (start <= body.size()) {
        size_t nl = body.find('\n', start);
        if (nl == std::string::npos) nl = body.size();
        block += "  " + body.substr(start, nl - start) + "\n";
        start = nl + 1;
      }
    }
    sections.push_back(std::string(codex::Trim(block)));
  }
  if (sections.empty()) return "The review finished without findings or an explanation.";
  std::string out;
  for (size_t i = 0; i < sections.size(); ++i) {
    if (i > 0) out += "\n\n";
    out += sections[i];
  }
  return out;
}

}  // namespace codex::core
