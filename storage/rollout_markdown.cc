// The Markdown renderer: a session as a readable transcript (turns, tool
// calls and outputs in code blocks, compactions, usage per turn, forks).
#include <algorithm>

#include "core/item.h"
#include "core/transcript.h"
#include "storage/rollout_format.h"

namespace codex::storage::rollout_internal {

using core::Item;
using core::ItemKind;

namespace {

std::string Fence(std::string_view text) {
  size_t run = 0, longest = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

std::string CodeBlock(std::string_view text, std::string_view lang = "") {
  const std::string fence = Fence(text);
  std::string out = fence + std::string(lang) + "\n" + std::string(text);
  if (out.back() != '\n') out += "\n";
  return out + fence + "\n\n";
}

// The title line and the session's facts.
std::string Header(const core::SessionInfo& s) {
  std::string out = "# " + (s.title.empty() ? std::string("Session ") + s.id : s.title) + "\n\n";
  out += "- session: `" + s.id + "`" + (s.name.empty() ? "" : " (" + s.name + ")") + "\n";
  out += "- cwd: `" + s.cwd + "`\n";
  out += "- model: " + s.model + " (" + s.provider + ")\n";
  out += "- created: " + FormatRfc3339Ms(s.created_at_ms) + ", updated " +
         FormatRfc3339Ms(s.updated_at_ms) + "\n";
  if (!s.forked_from_session.empty()) {
    out += "- forked from: `" + s.forked_from_session + "`\n";
  }
  out += "- tokens used: " + std::to_string(s.tokens_used) + "\n\n";
  return out;
}

// One item; `turn_start` when it opens turn number ++`turn`.
std::string RenderItem(const Item& item, bool turn_start, int& turn) {
  std::string out;
  const Json body = Json::parse(item.body, nullptr, false);
  const auto field = [&](const char* key) { return StringField(body, key); };
  switch (item.kind) {
    case ItemKind::kMessage: {
      const std::string text = core::MessageText(item);
      if (turn_start) {
        out += "## Turn " + std::to_string(++turn) + "\n\n**User**\n\n" + text + "\n\n";
      } else if (core::IsRealUserMessage(item) || core::IsSummaryMessage(item)) {
        out += "**User** _(compacted history)_\n\n" + text + "\n\n";
      } else if (item.role == "assistant") {
        out += "**Assistant**\n\n" + text + "\n\n";
      } else {
        out += "<details><summary>" + item.role + " context</summary>\n\n" + CodeBlock(text) +
               "</details>\n\n";
      }
      break;
    }
    case ItemKind::kReasoning:
      out += "_(reasoning)_\n\n";
      break;
    case ItemKind::kFunctionCall:
      out += "**Tool call** `" + field("name") + "` (`" + item.call_id + "`)\n\n" +
             CodeBlock(field("arguments"), "json");
      break;
    case ItemKind::kCustomToolCall:
      out += "**Tool call** `" + field("name") + "` (`" + item.call_id + "`)\n\n" +
             CodeBlock(field("input"));
      break;
    case ItemKind::kLocalShellCall:
      out += "**Tool call** `local_shell` (`" + item.call_id + "`)\n\n" +
             CodeBlock(body.is_object() && body.contains("action") ? Dump(body["action"]) : "",
                       "json");
      break;
    case ItemKind::kFunctionCallOutput:
    case ItemKind::kCustomToolCallOutput:
    case ItemKind::kLocalShellCallOutput: {
      std::string text;
      if (body.is_object() && body.contains("output")) {
        const Json& o = body["output"];
        if (o.is_string()) {
          text = o.get<std::string>();
        } else if (o.is_array()) {
          for (const auto& p : o) text += StringField(p, "text");
        } else {
          text = Dump(o);
        }
      }
      out += "**Output** (`" + item.call_id + "`)\n\n" + CodeBlock(text);
      break;
    }
    case ItemKind::kCompaction:
      out += "_(server compaction: encrypted summary)_\n\n";
      break;
    case ItemKind::kCompactionCheckpoint:
      out += "---\n\n> **Compaction.** The model's view restarts here";
      if (body.is_object() && body.contains("summary") && body["summary"].is_string()) {
        out += "; summary:\n>\n> " + body["summary"].get<std::string>();
      }
      out += "\n\n";
      break;
    case ItemKind::kOther:
      out += "_(" + field("type") + " item)_\n\n";
      break;
  }
  return out;
}

// The usage table and the list of forks, when there are any.
std::string Footer(const SessionDetails& d) {
  std::string out;
  if (!d.turns.empty()) {
    out +=
        "## Usage per turn\n\n| # | status | input | cached | output | reasoning | total |\n"
        "|---|---|---|---|---|---|---|\n";
    int n = 0;
    for (const core::TurnRecord& t : d.turns) {
      out += "| " + std::to_string(++n) + " | " + std::string(TurnStatusName(t.status)) + " | " +
             std::to_string(t.usage.input_tokens) + " | " +
             std::to_string(t.usage.cached_input_tokens) + " | " +
             std::to_string(t.usage.output_tokens) + " | " +
             std::to_string(t.usage.reasoning_output_tokens) + " | " +
             std::to_string(t.usage.total_tokens) + " |\n";
    }
    out += "\n";
  }
  if (!d.forks.empty()) {
    out += "## Forks\n\n";
    for (const auto& f : d.forks) out += "- `" + f.id + "` " + f.title + "\n";
    out += "\n";
  }
  return out;
}

}  // namespace

std::string RenderMarkdown(const SessionDetails& d, const ExportProgress& progress) {
  std::string out = Header(d.session);
  int turn = 0;
  const std::vector<size_t> starts = TurnStartIndexes(d.history);
  size_t next_start = 0;
  const auto total = static_cast<int64_t>(d.history.size());
  for (size_t index = 0; index < d.history.size(); ++index) {
    if (progress) progress(static_cast<int64_t>(index), total);
    const bool turn_start = next_start < starts.size() && starts[next_start] == index;
    if (turn_start) ++next_start;
    out += RenderItem(d.history[index].item, turn_start, turn);
  }
  if (progress) progress(total, total);
  return out + Footer(d);
}

}  // namespace codex::storage::rollout_internal
