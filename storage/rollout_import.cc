// Rollout import: ParseRollout turns a rollout file's lines into an
// ImportedSession (see rollout.h for the mapping); ImportRolloutFile stores it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "base/file.h"
#include "core/item.h"
#include "core/uuid.h"
#include "storage/rollout.h"
#include "storage/rollout_format.h"

namespace codex::storage {

using core::Item;
using core::ItemKind;
using namespace rollout_internal;

namespace {

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

// A turn record as the lines of its turn build it up.
struct TurnAcc {
  core::TurnRecord record;
  bool has_usage_record = false;
  bool explicit_record = false;
  bool completed = false;
};

// One rollout line, parsed once.
struct Line {
  std::string where;  // "<source>:<line>: " for errors
  std::string type;
  int64_t ts = 0;
  const Json* payload = nullptr;                // {} when the line has none
  std::optional<std::string_view> raw_payload;  // its exact text
};

// Reads a rollout's lines in order, one step per line kind. Throws only what
// nlohmann throws on a field of an unexpected type (ParseRollout catches it).
class RolloutParser {
 public:
  explicit RolloutParser(const std::string& source_name) : source_name_(source_name) {
    out_.spec.source = "import";
  }

  Status Parse(std::string_view text) {
    size_t line_no = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      const bool terminated = nl != std::string_view::npos;
      if (!terminated) nl = text.size();
      std::string_view line = text.substr(pos, nl - pos);
      pos = nl + 1;
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (SkipWs(line, 0) == line.size()) continue;
      // Codex writes each line with its newline in one write: a last line
      // without one that is not a JSON object is what a crash cut off. The
      // lines before it are whole; Codex resumes such a file, and so do we.
      if (!terminated && !Json::accept(line)) {
        out_.dropped_tail = DroppedTail{line_no, line.size()};
        break;
      }
      // A malformed complete line is dropped and named; the others are kept.
      Status parsed;
      try {
        parsed = ParseLine(line, "");
      } catch (const std::exception& e) {
        parsed = InvalidArgumentError(std::string("malformed rollout line: ") + e.what());
      }
      if (!parsed.ok()) out_.dropped_lines.push_back({line_no, parsed.message()});
    }
    return OkStatus();
  }

  Result<ImportedSession> Finish() {
    if (!have_meta_ && out_.dropped_tail) {
      // A crash before Codex finished writing the session_meta line.
      return InvalidArgumentError(
          source_name_ + ":" + std::to_string(out_.dropped_tail->line) +
          ": the session_meta line was cut off (" + std::to_string(out_.dropped_tail->bytes) +
          " bytes without a newline, what a crash leaves); there is no session to import");
    }
    if (!have_meta_) {
      std::string first;
      if (!out_.dropped_lines.empty()) {
        first = " (the first malformed line, " + source_name_ + ":" +
                std::to_string(out_.dropped_lines.front().line) + ": " +
                out_.dropped_lines.front().why + ")";
      }
      return InvalidArgumentError(
          source_name_ + ": no session_meta line; this is not a Codex rollout file" + first);
    }
    for (const std::string& id : turn_order_) {
      core::TurnRecord r = turns_[id].record;
      r.session_id = out_.spec.id;
      out_.turns.push_back(std::move(r));
    }
    out_.updated_at_ms = last_ts_;
    return std::move(out_);
  }

 private:
  Status ParseLine(std::string_view text, std::string where) {
    const Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("type") || !j["type"].is_string()) {
      return InvalidArgumentError(where + "not a rollout line (a JSON object with \"type\")");
    }
    static const Json kEmpty = Json::object();
    Line line;
    line.where = std::move(where);
    line.type = j["type"].get<std::string>();
    line.ts = ParseTimestamp(StringField(j, "timestamp"));
    if (line.ts != 0) last_ts_ = std::max(last_ts_, line.ts);
    line.payload = j.contains("payload") ? &j["payload"] : &kEmpty;
    line.raw_payload = RawMember(text, "payload");

    if (line.type == "session_meta") return SessionMeta(line);
    if (line.type == "response_item") return ResponseItem(line);
    if (line.type == "compacted") return Compacted(line);
    if (line.type == "codex_turn") {
      CodexTurn(*line.payload);
      return OkStatus();
    }
    if (line.type == "turn_context") {
      TurnContext(*line.payload);
      return OkStatus();
    }
    Event(line);
    return OkStatus();
  }

  TurnAcc& Turn(const std::string& id) {
    auto [it, inserted] = turns_.try_emplace(id);
    if (inserted) {
      turn_order_.push_back(id);
      it->second.record.turn_id = id;
      it->second.record.status = core::TurnStatus::kInterrupted;
    }
    return it->second;
  }

  // The session row; later metas (e.g. of a parent) do not rename the session.
  Status SessionMeta(const Line& line) {
    if (have_meta_) return OkStatus();
    const Json& payload = *line.payload;
    std::string id = StringField(payload, "id");
    if (id.empty()) id = StringField(payload, "session_id");
    if (!core::LooksLikeUuid(id)) {
      return InvalidArgumentError(line.where + "session_meta has no valid \"id\"");
    }
    out_.spec.id = id;
    out_.spec.cwd = StringField(payload, "cwd");
    out_.spec.provider = StringField(payload, "model_provider");
    out_.spec.model = StringField(payload, "model");
    out_.spec.title = StringField(payload, "title");
    const int64_t created = ParseTimestamp(StringField(payload, "timestamp"));
    out_.spec.created_at_ms = created != 0 ? created : line.ts;
    have_meta_ = true;
    return OkStatus();
  }

  Status ResponseItem(const Line& line) {
    if (!line.raw_payload) return InvalidArgumentError(line.where + "response_item has no payload");
    auto item = ItemFromPayload(*line.raw_payload);
    if (!item.ok()) return InvalidArgumentError(line.where + item.status().message());
    out_.items.push_back(
        {TurnIdOf(*line.payload, current_turn_), line.ts, std::move(item).value()});
    return OkStatus();
  }

  // A compaction: a checkpoint item, then the replacement history.
  Status Compacted(const Line& line) {
    const Json& payload = *line.payload;
    std::vector<Item> replacement;
    if (line.raw_payload) {
      if (auto hist = RawMember(*line.raw_payload, "replacement_history")) {
        for (std::string_view raw : RawElements(*hist)) {
          auto item = ItemFromPayload(raw);
          if (!item.ok()) {
            return InvalidArgumentError(line.where +
                                        "replacement_history: " + item.status().message());
          }
          replacement.push_back(std::move(item).value());
        }
      }
    }
    const bool remote = std::any_of(replacement.begin(), replacement.end(),
                                    [](const Item& i) { return i.kind == ItemKind::kCompaction; });
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
      if (auto raw = RawMember(*line.raw_payload, "checkpoint"))
        checkpoint.body = std::string(*raw);
    }
    out_.items.push_back({current_turn_, line.ts, std::move(checkpoint)});
    for (Item& item : replacement) out_.items.push_back({current_turn_, line.ts, std::move(item)});
    return OkStatus();
  }

  // Our own turn records: they win over what events say.
  void CodexTurn(const Json& payload) {
    const std::string id = StringField(payload, "turn_id");
    if (id.empty()) return;
    // Every field read (a wrong type throws) before the turn changes: a
    // dropped line leaves nothing behind.
    const std::string status = StringField(payload, "status");
    const int64_t started = payload.value("started_at_ms", int64_t{0});
    const int64_t ended = payload.value("ended_at_ms", int64_t{0});
    const core::TokenUsage usage = UsageFrom(payload.value("usage", Json::object()));
    TurnAcc& acc = Turn(id);
    acc.explicit_record = true;
    acc.record.status = status == "failed"        ? core::TurnStatus::kFailed
                        : status == "interrupted" ? core::TurnStatus::kInterrupted
                                                  : core::TurnStatus::kCompleted;
    acc.record.error = StringField(payload, "error");
    acc.record.started_at_ms = started;
    acc.record.ended_at_ms = ended;
    acc.record.usage = usage;
  }

  // Per-turn settings: they give the turn of the items that follow and the
  // model; not kept as events (export writes its own).
  void TurnContext(const Json& payload) {
    const std::string id = StringField(payload, "turn_id");
    if (!id.empty()) current_turn_ = id;
    if (out_.spec.model.empty()) out_.spec.model = StringField(payload, "model");
  }

  // An event_msg: task_started / task_complete / turn_aborted shape the turn
  // records, token_count the reported totals and the turn's usage.
  void EventMsg(const std::string& event_type, const Json& payload, int64_t ts) {
    const std::string id = StringField(payload, "turn_id");
    if (event_type == "task_started" && !id.empty()) {
      current_turn_ = id;
      TurnAcc& acc = Turn(id);
      if (!acc.explicit_record) acc.record.started_at_ms = ts;
    } else if ((event_type == "task_complete" || event_type == "turn_aborted") && !id.empty()) {
      TurnAcc& acc = Turn(id);
      if (!acc.explicit_record) {
        acc.record.ended_at_ms = ts;
        acc.completed = event_type == "task_complete";
        acc.record.status =
            acc.completed ? core::TurnStatus::kCompleted : core::TurnStatus::kInterrupted;
      }
    }
    if (event_type != "token_count") return;
    const bool has_info = payload.contains("info") && payload["info"].is_object();
    const core::TokenUsage last =
        has_info ? UsageFrom(payload["info"].value("last_token_usage", Json::object()))
                 : core::TokenUsage{};
    // The server's count for the last request, with the item it followed:
    // a resumed import estimates its context from it.
    if (has_info && !out_.items.empty() && last.total_tokens > 0) {
      out_.reported_totals[out_.items.size() - 1] = last.total_tokens;
    }
    if (!current_turn_.empty()) {
      TurnAcc& acc = Turn(current_turn_);
      if (has_info && !acc.has_usage_record && !acc.explicit_record) acc.record.usage += last;
    }
  }

  void TokenUsageRecord(const Json& payload) {
    const std::string id = StringField(payload, "turn_id");
    if (id.empty()) return;
    // turn_token_usage is cumulative within the turn: the last one wins.
    const core::TokenUsage usage = UsageFrom(payload.value("turn_token_usage", Json::object()));
    TurnAcc& acc = Turn(id);
    if (acc.explicit_record) return;
    acc.has_usage_record = true;
    acc.record.usage = usage;
  }

  // Everything else is an event; a few also shape the turn records.
  void Event(const Line& line) {
    const Json& payload = *line.payload;
    std::string event_type = line.type;
    if (line.type == "event_msg") {
      event_type = StringField(payload, "type");
      if (event_type.empty()) event_type = "event_msg";
      EventMsg(event_type, payload, line.ts);
    } else if (line.type == "token_usage_record") {
      TokenUsageRecord(payload);
    }
    if (!payload.is_object() || !line.raw_payload) return;
    EventRecord e;
    e.turn_id = StringField(payload, "turn_id");
    if (e.turn_id.empty()) e.turn_id = current_turn_;
    e.type = std::move(event_type);
    e.payload_json = std::string(*line.raw_payload);
    e.created_at_ms = line.ts;
    out_.events.push_back(std::move(e));
  }

  const std::string& source_name_;
  ImportedSession out_;
  bool have_meta_ = false;
  std::string current_turn_;
  std::vector<std::string> turn_order_;
  std::map<std::string, TurnAcc> turns_;
  int64_t last_ts_ = 0;
};

// Whether the stored session's history and events are where `session` (a
// rollout of the same id) starts: item for item (kind and body) and event for
// event (type and payload).
bool StartsWithStored(const ImportedSession& session, const std::vector<core::StoredItem>& history,
                      const std::vector<EventRecord>& events) {
  if (history.size() > session.items.size() || events.size() > session.events.size()) {
    return false;
  }
  for (size_t i = 0; i < history.size(); ++i) {
    const Item& stored = history[i].item;
    const Item& parsed = session.items[i].item;
    if (stored.kind != parsed.kind || stored.body != parsed.body) return false;
  }
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].type != session.events[i].type) return false;
  }
  return true;
}

}  // namespace

Result<ImportedSession> ParseRollout(std::string_view text, const std::string& source_name) {
  // nlohmann throws on fields of an unexpected type; that is malformed input.
  try {
    RolloutParser parser(source_name);
    RETURN_IF_ERROR(parser.Parse(text));
    return parser.Finish();
  } catch (const std::exception& e) {
    return InvalidArgumentError(source_name + ": malformed rollout: " + e.what());
  }
}

namespace {

// The *.jsonl files under `dir`, recursively (symlinked directories are not
// followed). A directory that cannot be read is reported in `errors`, never
// skipped in silence: its rollouts were not imported.
void CollectDirectory(const std::filesystem::path& dir, std::vector<std::string>* found,
                      std::vector<Status>* errors) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  for (const std::filesystem::directory_iterator end; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_directory(type_ec) && !it->is_symlink(type_ec)) {
      CollectDirectory(it->path(), found, errors);
    } else if (it->is_regular_file(type_ec) && it->path().extension() == ".jsonl") {
      found->push_back(it->path().string());
    }
  }
  if (ec) {
    errors->push_back(FailedPreconditionError("cannot read directory " + dir.string() + ": " +
                                              ec.message() +
                                              "; the rollouts in it were not imported (check its "
                                              "permissions)"));
  }
}

}  // namespace

RolloutFiles CollectRolloutFiles(const std::vector<std::string>& paths) {
  RolloutFiles out;
  for (const std::string& p : paths) {
    std::error_code ec;
    const auto status = std::filesystem::status(p, ec);
    if (!std::filesystem::exists(status)) {
      out.errors.push_back(NotFoundError(p + ": no such file or directory; check the path"));
      continue;
    }
    if (ec) {
      out.errors.push_back(FailedPreconditionError("cannot read " + p + ": " + ec.message()));
      continue;
    }
    if (std::filesystem::is_directory(status)) {
      std::vector<std::string> found;
      CollectDirectory(p, &found, &out.errors);
      std::sort(found.begin(), found.end());
      out.files.insert(out.files.end(), found.begin(), found.end());
    } else {
      out.files.push_back(p);
    }
  }
  return out;
}

Result<ImportOutcome> ImportRolloutFile(
    SessionDatabase& store, const std::string& path,
    const std::function<void(size_t stored, size_t total)>& progress) {
  auto text = ReadWholeFile(path);
  if (!text.ok()) {
    return Status(text.status().code(), "cannot read " + text.status().message());
  }
  ASSIGN_OR_RETURN(ImportedSession session, ParseRollout(*text, path));
  ImportOutcome outcome;
  outcome.path = path;
  outcome.session_id = session.spec.id;
  outcome.dropped_tail = session.dropped_tail;
  outcome.dropped_lines = session.dropped_lines;
  if (progress) {
    const size_t total = session.items.size();
    session.progress = [&progress, total](size_t stored) { progress(stored, total); };
  }
  ASSIGN_OR_RETURN(outcome.imported, store.ImportSession(session));
  if (outcome.imported) return outcome;
  ASSIGN_OR_RETURN(core::SessionInfo info, store.FindSession(outcome.session_id));
  ASSIGN_OR_RETURN(std::vector<core::StoredItem> history, store.LoadHistory(info));
  ASSIGN_OR_RETURN(std::vector<EventRecord> events, store.LoadEvents(info.id));
  if (!StartsWithStored(session, history, events) ||
      (history.size() == session.items.size() && events.size() == session.events.size())) {
    return outcome;
  }
  if (progress) {  // the items already stored count as done
    const size_t total = session.items.size(), before = history.size();
    session.progress = [&progress, total, before](size_t stored) {
      progress(before + stored, total);
    };
  }
  ASSIGN_OR_RETURN(bool extended, store.ExtendImportedSession(session, info.head_item_id,
                                                              history.size(), events.size()));
  if (!extended) {
    return FailedPreconditionError(path + ": session " + info.id +
                                   " changed while it was being imported; run the import again");
  }
  outcome.items_added = session.items.size() - history.size();
  outcome.events_added = session.events.size() - events.size();
  return outcome;
}

}  // namespace codex::storage
