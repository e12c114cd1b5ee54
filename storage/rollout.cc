#include "storage/rollout.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "core/instructions.h"
#include "core/item.h"
#include "core/transcript.h"
#include "core/uuid.h"
#include "core/version.h"

namespace codex::storage {

using Json = nlohmann::ordered_json;
using core::Item;
using core::ItemKind;

namespace {

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// --- Raw JSON spans ----------------------------------------------------------
// Just enough of a scanner to find the exact text of a member or of array
// elements, so bodies can be kept byte for byte. Input is already known to
// parse as JSON.

size_t SkipWs(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

// The index just past the JSON value starting at `i` (npos when malformed).
size_t SkipValue(std::string_view s, size_t i) {
  i = SkipWs(s, i);
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') {
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\') {
        ++i;
      } else if (s[i] == '"') {
        return i + 1;
      }
    }
    return std::string_view::npos;
  }
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '"') {
        const size_t end = SkipValue(s, i);
        if (end == std::string_view::npos) return end;
        i = end - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return std::string_view::npos;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
         s[i] != '\r' && s[i] != '\t') {
    ++i;
  }
  return i;
}

// The raw text of member `key` of the object `obj`.
std::optional<std::string_view> RawMember(std::string_view obj, std::string_view key) {
  size_t i = SkipWs(obj, 0);
  if (i >= obj.size() || obj[i] != '{') return std::nullopt;
  ++i;
  while (true) {
    i = SkipWs(obj, i);
    if (i >= obj.size() || obj[i] == '}') return std::nullopt;
    const size_t key_end = SkipValue(obj, i);
    if (key_end == std::string_view::npos) return std::nullopt;
    const std::string_view k = obj.substr(i + 1, key_end - i - 2);
    i = SkipWs(obj, key_end);
    if (i >= obj.size() || obj[i] != ':') return std::nullopt;
    const size_t start = SkipWs(obj, i + 1);
    const size_t end = SkipValue(obj, start);
    if (end == std::string_view::npos) return std::nullopt;
    if (k == key) return obj.substr(start, end - start);
    i = SkipWs(obj, end);
    if (i < obj.size() && obj[i] == ',') ++i;
  }
}

// The raw texts of the elements of the array `arr`.
std::vector<std::string_view> RawElements(std::string_view arr) {
  std::vector<std::string_view> out;
  size_t i = SkipWs(arr, 0);
  if (i >= arr.size() || arr[i] != '[') return out;
  ++i;
  while (true) {
    i = SkipWs(arr, i);
    if (i >= arr.size() || arr[i] == ']') return out;
    const size_t end = SkipValue(arr, i);
    if (end == std::string_view::npos) return out;
    out.push_back(arr.substr(i, end - i));
    i = SkipWs(arr, end);
    if (i < arr.size() && arr[i] == ',') ++i;
  }
}

// --- Time ------------------------------------------------------------------

// "2026-11-21T05:44:45.282Z" (or +00:00, or no fraction) -> Unix ms; 0 if unparsable.
int64_t ParseTimestamp(const std::string& text) {
  int y, mo, d, h, mi, s;
  char rest[32] = {0};
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%31s", &y, &mo, &d, &h, &mi, &s, rest) <
      6) {
    return 0;
  }
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
  if (rest[0] == '.') {
    int64_t frac = 0;
    int digits = 0;
    for (const char* p = rest + 1; *p >= '0' && *p <= '9'; ++p) {
      if (digits < 3) {
        frac = frac * 10 + (*p - '0');
        ++digits;
      }
    }
    while (digits < 3) {
      frac *= 10;
      ++digits;
    }
    ms += frac;
  }
  return ms;
}

std::string FormatTimestamp(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms % 1000));
  return out;
}

// --- Import ------------------------------------------------------------------

struct TurnAcc {
  core::TurnRecord record;
  bool has_usage_record = false;
  bool explicit_record = false;
  bool completed = false;
};

std::string StringField(const Json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

core::TokenUsage UsageFrom(const Json& j) {
  core::TokenUsage u;
  if (!j.is_object()) return u;
  auto get = [&](const char* key) -> int64_t {
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  u.input_tokens = get("input_tokens");
  u.cached_input_tokens = get("cached_input_tokens");
  u.output_tokens = get("output_tokens");
  u.reasoning_output_tokens = get("reasoning_output_tokens");
  u.total_tokens = get("total_tokens");
  return u;
}

// A wire item from a payload: decoded (classified, stripped), but keeping the
// exact text when there was nothing to strip.
Result<Item> ItemFromPayload(std::string_view raw) {
  ASSIGN_OR_RETURN(Item item, core::DecodeItem(raw));
  const Json j = Json::parse(raw, nullptr, false);
  const bool strip_id = item.kind != ItemKind::kLocalShellCall && j.contains("id");
  if (!strip_id && !j.contains("status") &&
      !j.contains("internal_chat_message_metadata_passthrough")) {
    item.body = std::string(raw);
  }
  return item;
}

std::string TurnIdOf(const Json& payload, const std::string& current) {
  if (payload.is_object()) {
    auto meta = payload.find("internal_chat_message_metadata_passthrough");
    if (meta != payload.end() && meta->is_object()) {
      const std::string t = StringField(*meta, "turn_id");
      if (!t.empty()) return t;
    }
  }
  return current;
}

}  // namespace

namespace {

Result<ImportedSession> ParseRolloutOrThrow(std::string_view text, const std::string& source_name) {
  ImportedSession out;
  out.spec.source = "import";
  bool have_meta = false;
  std::string current_turn;
  std::vector<std::string> turn_order;
  std::map<std::string, TurnAcc> turns;
  auto turn = [&](const std::string& id) -> TurnAcc& {
    auto [it, inserted] = turns.try_emplace(id);
    if (inserted) {
      turn_order.push_back(id);
      it->second.record.turn_id = id;
      it->second.record.status = core::TurnStatus::kInterrupted;
    }
    return it->second;
  };
  int64_t last_ts = 0;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (SkipWs(line, 0) == line.size()) continue;
    const std::string where = source_name + ":" + std::to_string(line_no) + ": ";
    const Json j = Json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("type") || !j["type"].is_string()) {
      return InvalidArgumentError(where + "not a rollout line (a JSON object with \"type\")");
    }
    const std::string type = j["type"].get<std::string>();
    const int64_t ts = ParseTimestamp(StringField(j, "timestamp"));
    if (ts != 0) last_ts = std::max(last_ts, ts);
    const Json empty = Json::object();
    const Json& payload = j.contains("payload") ? j["payload"] : empty;
    const std::optional<std::string_view> raw_payload = RawMember(line, "payload");

    if (type == "session_meta") {
      if (have_meta) continue;  // later metas (e.g. of a parent) do not rename the session
      std::string id = StringField(payload, "id");
      if (id.empty()) id = StringField(payload, "session_id");
      if (!core::LooksLikeUuid(id)) {
        return InvalidArgumentError(where + "session_meta has no valid \"id\"");
      }
      out.spec.id = id;
      out.spec.cwd = StringField(payload, "cwd");
      out.spec.provider = StringField(payload, "model_provider");
      out.spec.model = StringField(payload, "model");
      out.spec.title = StringField(payload, "title");
      const int64_t created = ParseTimestamp(StringField(payload, "timestamp"));
      out.spec.created_at_ms = created != 0 ? created : ts;
      have_meta = true;
      continue;
    }
    if (type == "response_item") {
      if (!raw_payload) return InvalidArgumentError(where + "response_item has no payload");
      auto item = ItemFromPayload(*raw_payload);
      if (!item.ok()) return InvalidArgumentError(where + item.status().message());
      out.items.push_back({TurnIdOf(payload, current_turn), ts, std::move(item).value()});
      continue;
    }
    if (type == "compacted") {
      std::vector<Item> replacement;
      if (raw_payload) {
        if (auto hist = RawMember(*raw_payload, "replacement_history")) {
          for (std::string_view raw : RawElements(*hist)) {
            auto item = ItemFromPayload(raw);
            if (!item.ok()) {
              return InvalidArgumentError(where +
                                          "replacement_history: " + item.status().message());
            }
            replacement.push_back(std::move(item).value());
          }
        }
      }
      const bool remote = std::any_of(replacement.begin(), replacement.end(), [](const Item& i) {
        return i.kind == ItemKind::kCompaction;
      });
      const std::string message = StringField(payload, "message");
      Json body = {{"type", "compaction_checkpoint"},
                   {"mode", remote ? "remote" : "local"},
                   {"trigger", "auto"},
                   {"tokens_before", 0},
                   {"tokens_after", 0},
                   {"replacement_items", replacement.size()},
                   {"dropped_items", 0},
                   {"summary", message.empty() ? Json(nullptr) : Json(message)}};
      Item checkpoint;
      checkpoint.kind = ItemKind::kCompactionCheckpoint;
      checkpoint.body = Dump(body);
      // Our own exports carry the checkpoint body verbatim.
      if (payload.contains("checkpoint") && payload["checkpoint"].is_object() &&
          StringField(payload["checkpoint"], "type") == "compaction_checkpoint") {
        if (auto raw = RawMember(*raw_payload, "checkpoint")) checkpoint.body = std::string(*raw);
      }
      out.items.push_back({current_turn, ts, std::move(checkpoint)});
      for (Item& item : replacement) out.items.push_back({current_turn, ts, std::move(item)});
      continue;
    }
    if (type == "codex_turn") {
      const std::string id = StringField(payload, "turn_id");
      if (id.empty()) continue;
      TurnAcc& acc = turn(id);
      acc.explicit_record = true;
      const std::string status = StringField(payload, "status");
      acc.record.status = status == "failed"        ? core::TurnStatus::kFailed
                          : status == "interrupted" ? core::TurnStatus::kInterrupted
                                                    : core::TurnStatus::kCompleted;
      acc.record.error = StringField(payload, "error");
      acc.record.started_at_ms = payload.value("started_at_ms", int64_t{0});
      acc.record.ended_at_ms = payload.value("ended_at_ms", int64_t{0});
      acc.record.usage = UsageFrom(payload.value("usage", Json::object()));
      continue;
    }

    // Everything else is an event; a few also shape the turn records.
    std::string event_type = type;
    if (type == "event_msg") {
      event_type = StringField(payload, "type");
      if (event_type.empty()) event_type = "event_msg";
      const std::string id = StringField(payload, "turn_id");
      if (event_type == "task_started" && !id.empty()) {
        current_turn = id;
        TurnAcc& acc = turn(id);
        if (!acc.explicit_record) acc.record.started_at_ms = ts;
      } else if ((event_type == "task_complete" || event_type == "turn_aborted") && !id.empty()) {
        TurnAcc& acc = turn(id);
        if (!acc.explicit_record) {
          acc.record.ended_at_ms = ts;
          acc.completed = event_type == "task_complete";
          acc.record.status =
              acc.completed ? core::TurnStatus::kCompleted : core::TurnStatus::kInterrupted;
        }
      }
      if (event_type == "token_count" && !out.items.empty() && payload.contains("info") &&
          payload["info"].is_object()) {
        // The server's count for the last request, with the item it followed:
        // a resumed import estimates its context from it.
        const core::TokenUsage last =
            UsageFrom(payload["info"].value("last_token_usage", Json::object()));
        if (last.total_tokens > 0) out.reported_totals[out.items.size() - 1] = last.total_tokens;
      }
      if (event_type == "token_count" && !current_turn.empty()) {
        TurnAcc& acc = turn(current_turn);
        if (!acc.has_usage_record && !acc.explicit_record && payload.contains("info") &&
            payload["info"].is_object()) {
          acc.record.usage += UsageFrom(payload["info"].value("last_token_usage", Json::object()));
        }
      }
    } else if (type == "turn_context") {
      // Per-turn settings: they give the turn of the items that follow and the
      // model; not kept as events (export writes its own).
      const std::string id = StringField(payload, "turn_id");
      if (!id.empty()) current_turn = id;
      if (out.spec.model.empty()) out.spec.model = StringField(payload, "model");
      continue;
    } else if (type == "token_usage_record") {
      const std::string id = StringField(payload, "turn_id");
      if (!id.empty()) {
        TurnAcc& acc = turn(id);
        if (!acc.explicit_record) {
          if (!acc.has_usage_record) acc.record.usage = {};
          acc.has_usage_record = true;
          // turn_token_usage is cumulative within the turn: the last one wins.
          acc.record.usage = UsageFrom(payload.value("turn_token_usage", Json::object()));
        }
      }
    }
    if (!payload.is_object() || !raw_payload) continue;
    EventRecord e;
    e.turn_id = StringField(payload, "turn_id");
    if (e.turn_id.empty()) e.turn_id = current_turn;
    e.type = std::move(event_type);
    e.payload_json = std::string(*raw_payload);
    e.created_at_ms = ts;
    out.events.push_back(std::move(e));
  }
  if (!have_meta) {
    return InvalidArgumentError(source_name +
                                ": no session_meta line; this is not a Codex rollout file");
  }
  for (const std::string& id : turn_order) {
    core::TurnRecord r = turns[id].record;
    r.session_id = out.spec.id;
    out.turns.push_back(std::move(r));
  }
  out.updated_at_ms = last_ts;
  return out;
}

}  // namespace

Result<ImportedSession> ParseRollout(std::string_view text, const std::string& source_name) {
  // nlohmann throws on fields of an unexpected type; that is malformed input.
  try {
    return ParseRolloutOrThrow(text, source_name);
  } catch (const std::exception& e) {
    return InvalidArgumentError(source_name + ": malformed rollout: " + e.what());
  }
}

Result<std::vector<std::string>> CollectRolloutFiles(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    const auto status = std::filesystem::status(p, ec);
    if (ec || !std::filesystem::exists(status)) {
      return NotFoundError("no such file or directory: " + p);
    }
    if (std::filesystem::is_directory(status)) {
      std::vector<std::string> found;
      for (auto it = std::filesystem::recursive_directory_iterator(
               p, std::filesystem::directory_options::skip_permission_denied, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file(ec) && it->path().extension() == ".jsonl") {
          found.push_back(it->path().string());
        }
      }
      if (ec) return FailedPreconditionError("cannot read directory " + p + ": " + ec.message());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(p);
    }
  }
  return files;
}

Result<ImportOutcome> ImportRolloutFile(SessionDatabase& store, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return FailedPreconditionError("error reading " + path);
  ASSIGN_OR_RETURN(ImportedSession session, ParseRollout(buf.str(), path));
  ImportOutcome outcome;
  outcome.path = path;
  outcome.session_id = session.spec.id;
  ASSIGN_OR_RETURN(outcome.imported, store.ImportSession(session));
  return outcome;
}

// --- Export ------------------------------------------------------------------

namespace {

// Writes rollout lines as Codex 0.169 does: {"timestamp","ordinal","type","payload"},
// the ordinal counting lines from 0.
class LineWriter {
 public:
  void Add(int64_t ts, std::string_view type, std::string_view payload) {
    out_ += "{\"timestamp\":\"" + FormatTimestamp(ts) + "\",\"ordinal\":";
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

Result<std::string> ExportJsonl(const SessionDetails& d) {
  const core::SessionInfo& s = d.session;
  // The session_meta fields Codex 0.169 reads (its own files carry them all):
  // without cli_version or base_instructions it refuses to resume the file.
  // The store does not keep a per-session instructions override: the
  // built-in text is written (Codex sends it again on resume).
  const std::string instructions(core::BaseInstructions());
  Json meta = {{"session_id", s.id},
               {"id", s.id},
               {"timestamp", FormatTimestamp(s.created_at_ms)},
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
  LineWriter out;
  out.Add(s.created_at_ms, "session_meta", Dump(meta));

  // Events and turn records, merged into the item stream by time.
  struct Extra {
    int64_t ts;
    std::string type;
    std::string payload;
  };
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
  return out.Take();
}

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

std::string ExportMarkdown(const SessionDetails& d) {
  const core::SessionInfo& s = d.session;
  std::string out = "# " + (s.title.empty() ? std::string("Session ") + s.id : s.title) + "\n\n";
  out += "- session: `" + s.id + "`" + (s.name.empty() ? "" : " (" + s.name + ")") + "\n";
  out += "- cwd: `" + s.cwd + "`\n";
  out += "- model: " + s.model + " (" + s.provider + ")\n";
  out += "- created: " + FormatTimestamp(s.created_at_ms) + ", updated " +
         FormatTimestamp(s.updated_at_ms) + "\n";
  if (!s.forked_from_session.empty()) {
    out += "- forked from: `" + s.forked_from_session + "`\n";
  }
  out += "- tokens used: " + std::to_string(s.tokens_used) + "\n\n";
  int turn = 0;
  const std::vector<size_t> starts = TurnStartIndexes(d.history);
  size_t next_start = 0;
  for (size_t index = 0; index < d.history.size(); ++index) {
    const core::StoredItem& it = d.history[index];
    const Item& item = it.item;
    const bool turn_start = next_start < starts.size() && starts[next_start] == index;
    if (turn_start) ++next_start;
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
  }
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

Result<std::string> ExportSession(SessionDatabase& store, std::string_view session_id,
                                  ExportFormat format) {
  ASSIGN_OR_RETURN(SessionDetails d, store.Show(session_id));
  if (format == ExportFormat::kMarkdown) return ExportMarkdown(d);
  return ExportJsonl(d);
}

}  // namespace codex::storage
