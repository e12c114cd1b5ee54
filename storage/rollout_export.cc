// Rollout export: a session's whole history as Codex rollout JSON Lines (see
// rollout.h), and ExportSession choosing it or the Markdown renderer.
#include <algorithm>

#include "core/instructions.h"
#include "core/item.h"
#include "core/version.h"
#include "storage/rollout.h"
#include "storage/rollout_format.h"

namespace codex::storage {

using core::ItemKind;

namespace rollout_internal {
namespace {

// Writes rollout lines as Codex 0.169 does: {"timestamp","ordinal","type","payload"},
// the ordinal counting lines from 0.
class LineWriter {
 public:
  void Add(int64_t ts, std::string_view type, std::string_view payload) {
    out_ += "{\"timestamp\":\"" + FormatRfc3339Ms(ts) + "\",\"ordinal\":";
    out_ += std::to_string(ordinal_++);
    out_ += ",\"type\":\"";
    out_ += type;
    out_ += "\",\"payload\":";
    out_ += payload;
    out_ += "}\n";
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
  int64_t ordinal_ = 0;
};

// Codex's SessionSource values: ours map to "exec" or "cli" (interactive).
std::string CodexSource(const std::string& source) {
  return source == "interactive" ? "cli" : "exec";
}

int64_t ReplacementCount(const core::StoredItem& checkpoint, const std::vector<core::StoredItem>& h,
                         size_t index) {
  if (auto n = CheckpointReplacementItems(checkpoint.item)) return *n;
  // Without a count, the replacement runs to the next checkpoint.
  int64_t n = 0;
  for (size_t i = index + 1; i < h.size() && h[i].item.kind != ItemKind::kCompactionCheckpoint;
       ++i) {
    ++n;
  }
  return n;
}

Json UsageJson(const core::TokenUsage& u) {
  return {
      {"input_tokens", u.input_tokens},   {"cached_input_tokens", u.cached_input_tokens},
      {"output_tokens", u.output_tokens}, {"reasoning_output_tokens", u.reasoning_output_tokens},
      {"total_tokens", u.total_tokens},   {"cache_write_input_tokens", u.cache_write_input_tokens}};
}

// The session_meta payload.
Json SessionMeta(const core::SessionInfo& s) {
  // The session_meta fields Codex 0.169 reads (its own files carry them all):
  // without cli_version or base_instructions it refuses to resume the file.
  // The store does not keep a per-session instructions override: the
  // built-in text is written (Codex sends it again on resume).
  const std::string instructions(core::BaseInstructions());
  Json meta = {{"session_id", s.id},
               {"id", s.id},
               {"timestamp", FormatRfc3339Ms(s.created_at_ms)},
               {"cwd", s.cwd},
               {"originator", s.source == "interactive" ? "codex_cli_rs" : "codex_exec"},
               {"cli_version", core::kCodexVersion},
               {"source", CodexSource(s.source)},
               {"thread_source", "user"},
               {"model_provider", s.provider},
               {"instructions", instructions},
               {"base_instructions", {{"text", instructions}}},
               {"git", Json::object()},
               {"model", s.model},
               {"title", s.title}};
  if (!s.forked_from_session.empty()) meta["forked_from_id"] = s.forked_from_session;
  return meta;
}

// An event or turn record line, merged into the item stream by time.
struct Extra {
  int64_t ts;
  std::string type;
  std::string payload;
};

// The events and turn records as lines, oldest first.
std::vector<Extra> Extras(const SessionDetails& d) {
  std::vector<Extra> extras;
  static const std::vector<std::string> kReserved = {"session_meta", "response_item", "compacted",
                                                     "codex_turn", "event_msg"};
  for (const EventRecord& e : d.events) {
    const Json p = Json::parse(e.payload_json, nullptr, false);
    if (p.is_object() && p.value("type", std::string()) == e.type) {
      extras.push_back({e.created_at_ms, "event_msg", e.payload_json});
    } else if (std::find(kReserved.begin(), kReserved.end(), e.type) == kReserved.end()) {
      extras.push_back({e.created_at_ms, e.type, e.payload_json});
    }
  }
  for (const core::TurnRecord& t : d.turns) {
    Json p = {{"turn_id", t.turn_id},
              {"status", TurnStatusName(t.status)},
              {"error", t.error},
              {"started_at_ms", t.started_at_ms},
              {"ended_at_ms", t.ended_at_ms},
              {"usage", UsageJson(t.usage)}};
    const int64_t ts = t.ended_at_ms != 0 ? t.ended_at_ms : t.started_at_ms;
    extras.push_back({ts, "codex_turn", Dump(p)});
  }
  std::stable_sort(extras.begin(), extras.end(),
                   [](const Extra& a, const Extra& b) { return a.ts < b.ts; });
  return extras;
}

// The compacted line's payload for the checkpoint h[i]: its summary, its
// body, and the n items after it that replaced the history; `*end` is the
// index after them.
std::string CompactedPayload(const std::vector<core::StoredItem>& h, size_t i, size_t* end) {
  const core::StoredItem& it = h[i];
  const int64_t n = ReplacementCount(it, h, i);
  const Json body = Json::parse(it.item.body, nullptr, false);
  std::string message;
  if (body.is_object() && body.contains("summary") && body["summary"].is_string()) {
    message = body["summary"].get<std::string>();
  }
  std::string payload = "{\"message\":" + Dump(Json(message));
  if (body.is_object()) payload += ",\"checkpoint\":" + it.item.body;
  payload += ",\"replacement_history\":[";
  size_t j = i + 1;
  for (int64_t k = 0; k < n && j < h.size(); ++k, ++j) {
    if (k) payload += ",";
    payload += h[j].item.body;
  }
  payload += "]}";
  *end = j;
  return payload;
}

}  // namespace

Result<std::string> RenderJsonl(const SessionDetails& d, const ExportProgress& progress) {
  const core::SessionInfo& s = d.session;
  const Json meta = SessionMeta(s);
  LineWriter out;
  out.Add(s.created_at_ms, "session_meta", Dump(meta));

  const std::vector<Extra> extras = Extras(d);
  size_t next_extra = 0;
  auto flush_until = [&](int64_t ts) {
    while (next_extra < extras.size() && extras[next_extra].ts <= ts) {
      const Extra& e = extras[next_extra++];
      out.Add(e.ts, e.type, e.payload);
    }
  };

  const auto& h = d.history;
  std::string turn;
  for (size_t i = 0; i < h.size(); ++i) {
    if (progress) progress(static_cast<int64_t>(i), static_cast<int64_t>(h.size()));
    const core::StoredItem& it = h[i];
    flush_until(it.created_at_ms - 1);
    if (it.turn_id != turn && !it.turn_id.empty()) {
      turn = it.turn_id;
      // The fields Codex's TurnContextItem requires; the policies are not
      // stored per turn, so the most restrictive ones are written.
      const Json context = {{"turn_id", turn},
                            {"cwd", s.cwd},
                            {"approval_policy", "never"},
                            {"sandbox_policy", {{"type", "read-only"}}},
                            {"model", s.model},
                            {"summary", "auto"}};
      out.Add(it.created_at_ms, "turn_context", Dump(context));
    }
    if (it.item.kind == ItemKind::kCompactionCheckpoint) {
      size_t j = 0;
      const std::string payload = CompactedPayload(h, i, &j);
      out.Add(it.created_at_ms, "compacted", payload);
      i = j - 1;
      continue;
    }
    const Json check = Json::parse(it.item.body, nullptr, false);
    if (!check.is_object()) {
      return DataLossError("item " + std::to_string(it.id) + " of session " + s.id +
                           " is not a JSON object and cannot be exported as a rollout line");
    }
    out.Add(it.created_at_ms, "response_item", it.item.body);
  }
  flush_until(INT64_MAX);
  if (progress) progress(static_cast<int64_t>(h.size()), static_cast<int64_t>(h.size()));
  return out.Take();
}

}  // namespace rollout_internal

Result<std::string> ExportSession(SessionDatabase& store, std::string_view session_id,
                                  ExportFormat format, const ExportProgress& progress) {
  ASSIGN_OR_RETURN(SessionDetails d, store.Show(session_id));
  if (format == ExportFormat::kMarkdown) return rollout_internal::RenderMarkdown(d, progress);
  return rollout_internal::RenderJsonl(d, progress);
}

}  // namespace codex::storage
