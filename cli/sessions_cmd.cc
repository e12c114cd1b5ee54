#include "cli/sessions_cmd.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "compaction/token_accounting.h"
#include "core/config.h"
#include "core/instructions.h"
#include "storage/rollout.h"
#include "storage/sqlite_session_store.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;
using storage::SqliteSessionStore;

Result<std::unique_ptr<SqliteSessionStore>> OpenStore() {
  return storage::OpenSessionStore(core::DefaultCodexHome());
}

std::string LocalTime(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

// At most `max` code points of `s`, "…" appended when cut; newlines become spaces.
std::string Clip(std::string_view s, size_t max) {
  std::string out;
  size_t points = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80) {
      if (points == max) return out + "…";
      ++points;
    }
    out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : static_cast<char>(c);
  }
  return out;
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

Json SessionJson(const core::SessionInfo& s) {
  Json j;
  j["id"] = s.id;
  j["name"] = s.name;
  j["title"] = s.title;
  j["cwd"] = s.cwd;
  j["model"] = s.model;
  j["provider"] = s.provider;
  j["source"] = s.source;
  j["created_at_ms"] = s.created_at_ms;
  j["updated_at_ms"] = s.updated_at_ms;
  j["archived"] = s.archived;
  j["tokens_used"] = s.tokens_used;
  j["forked_from_session"] = s.forked_from_session;
  j["forked_from_item"] = s.forked_from_item ? Json(*s.forked_from_item) : Json(nullptr);
  j["head_item_id"] = s.head_item_id ? Json(*s.head_item_id) : Json(nullptr);
  return j;
}

std::string Label(const core::SessionInfo& s) {
  std::string label = s.title.empty() ? "(untitled)" : s.title;
  if (!s.name.empty()) label = "[" + s.name + "] " + label;
  return label;
}

// Resolves a user-typed id, prefix or name to a full session.
Result<core::SessionInfo> Resolve(SqliteSessionStore& store, const std::string& id) {
  return store.FindSession(id);
}

// --- sessions list ---------------------------------------------------------

struct ListArgs {
  bool all = false;
  std::string cwd;
  int limit = 20;
  std::string cursor;
  bool archived = false;
  bool json = false;
};

int RunList(const ListArgs& args) {
  core::ListQuery q;
  if (!args.all) {
    if (!args.cwd.empty()) {
      std::error_code ec;
      auto abs = std::filesystem::absolute(args.cwd, ec);
      q.cwd = ec ? args.cwd : abs.lexically_normal().string();
      if (q.cwd->size() > 1 && q.cwd->back() == '/') q.cwd->pop_back();
    } else {
      std::error_code ec;
      auto cur = std::filesystem::current_path(ec);
      if (ec) {
        return ReportError(
            FailedPreconditionError("cannot read the current directory; pass --cwd DIR or --all"));
      }
      q.cwd = cur.string();
    }
  }
  q.limit = args.limit;
  q.cursor = args.cursor;
  q.archived = args.archived;
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  auto page = (*store)->ListSessions(q);
  if (!page.ok()) return ReportError(page.status());
  if (args.json) {
    for (const auto& s : page->sessions) std::cout << Dump(SessionJson(s)) << "\n";
    if (!page->next_cursor.empty()) {
      std::cout << Dump(Json{{"next_cursor", page->next_cursor}}) << "\n";
    }
    return kExitOk;
  }
  if (page->sessions.empty()) {
    std::string where = q.cwd ? " in " + *q.cwd : std::string();
    std::fprintf(stderr, "no %ssessions%s%s\n", args.archived ? "archived " : "", where.c_str(),
                 q.cwd ? "; use --all to list every directory" : "");
    return kExitOk;
  }
  std::printf("%-36s  %-16s  %-30s  %s\n", "ID", "UPDATED", "CWD", "TITLE");
  for (const auto& s : page->sessions) {
    std::string cwd = s.cwd;
    if (cwd.size() > 30) cwd = "…" + cwd.substr(cwd.size() - 29);
    std::printf("%-36s  %-16s  %-30s  %s\n", s.id.c_str(), LocalTime(s.updated_at_ms).c_str(),
                cwd.c_str(), Clip(Label(s), 60).c_str());
  }
  if (!page->next_cursor.empty()) {
    std::string more = "next page: codex sessions list";
    if (args.all) {
      more += " --all";
    } else if (!args.cwd.empty()) {
      more += " --cwd '" + *q.cwd + "'";
    }
    if (args.archived) more += " --archived";
    if (args.limit != 20) more += " --limit " + std::to_string(args.limit);
    more += " --cursor " + page->next_cursor;
    std::printf("%s\n", more.c_str());
  }
  return kExitOk;
}

// --- sessions show -----------------------------------------------------------

std::string Indent(std::string_view text, std::string_view prefix, size_t max_lines) {
  std::string out;
  size_t lines = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    if (lines == max_lines) {
      size_t rest = 1;
      for (size_t i = nl; i < text.size(); ++i) rest += text[i] == '\n';
      out += std::string(prefix) + "… (" + std::to_string(rest) + " more lines)\n";
      break;
    }
    out += std::string(prefix) + std::string(text.substr(start, nl - start)) + "\n";
    ++lines;
    if (nl == text.size()) break;
    start = nl + 1;
  }
  return out;
}

std::string OutputText(const Json& body) {
  auto it = body.find("output");
  if (it == body.end()) return {};
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    std::string text;
    for (const auto& part : *it) {
      if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        text += part["text"].get<std::string>();
      }
    }
    return text;
  }
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    return (*it)["content"].get<std::string>();
  }
  return Dump(*it);
}

void PrintItem(const core::StoredItem& stored) {
  const core::Item& item = stored.item;
  const Json body = Json::parse(item.body, nullptr, false);
  const bool obj = body.is_object();
  auto str = [&](const char* key) {
    return obj && body.contains(key) && body[key].is_string() ? body[key].get<std::string>()
                                                              : std::string();
  };
  switch (item.kind) {
    case core::ItemKind::kMessage: {
      const std::string text = core::MessageText(item);
      if (item.role == "user" && !storage::IsRealUserMessage(item)) {
        std::printf("  [context] %s\n", Clip(text, 70).c_str());
      } else if (item.role == "developer" || item.role == "system") {
        std::printf("  [%s] %s\n", item.role.c_str(), Clip(text, 70).c_str());
      } else {
        std::printf("%s:\n%s", item.role.c_str(), Indent(text, "  ", 40).c_str());
      }
      break;
    }
    case core::ItemKind::kReasoning: {
      std::string summary;
      if (obj && body.contains("summary") && body["summary"].is_array()) {
        for (const auto& part : body["summary"]) {
          if (part.is_object() && part.contains("text") && part["text"].is_string()) {
            summary += part["text"].get<std::string>();
          }
        }
      }
      std::printf("  (reasoning%s)\n", summary.empty() ? "" : (": " + Clip(summary, 70)).c_str());
      break;
    }
    case core::ItemKind::kFunctionCall:
      std::printf("tool call %s %s [%s]\n", str("name").c_str(),
                  Clip(str("arguments"), 200).c_str(), item.call_id.c_str());
      break;
    case core::ItemKind::kCustomToolCall:
      std::printf("tool call %s [%s]\n%s", str("name").c_str(), item.call_id.c_str(),
                  Indent(str("input"), "  | ", 20).c_str());
      break;
    case core::ItemKind::kLocalShellCall: {
      std::string cmd;
      if (obj && body.contains("action") && body["action"].is_object()) {
        cmd = Dump(body["action"].value("command", Json::array()));
      }
      std::printf("tool call local_shell %s [%s]\n", cmd.c_str(), item.call_id.c_str());
      break;
    }
    case core::ItemKind::kFunctionCallOutput:
    case core::ItemKind::kCustomToolCallOutput:
    case core::ItemKind::kLocalShellCallOutput:
      std::printf("  output [%s]:\n%s", item.call_id.c_str(),
                  Indent(obj ? OutputText(body) : item.body, "    ", 12).c_str());
      break;
    case core::ItemKind::kCompaction:
      std::printf("  (compaction: encrypted summary from the server)\n");
      break;
    case core::ItemKind::kCompactionCheckpoint:
      std::printf("=== compaction (item %lld): the model's view restarts here ===\n",
                  static_cast<long long>(stored.id));
      break;
    case core::ItemKind::kOther:
      std::printf("  (%s item)\n", obj ? str("type").c_str() : "unparsable");
      break;
  }
}

// How full the model's view of `session` is: the items after the newest
// checkpoint (plus the instructions) against the context window of its model.
struct ContextFill {
  int64_t tokens = 0;
  int64_t window = 0;
  int left_percent = 100;
};

ContextFill EstimateContextFill(const core::SessionInfo& session,
                                const std::vector<core::StoredItem>& history) {
  size_t from = 0;
  for (size_t i = history.size(); i-- > 0;) {
    if (history[i].item.kind == core::ItemKind::kCompactionCheckpoint) {
      from = i + 1;
      break;
    }
  }
  std::vector<core::Item> view;
  for (size_t i = from; i < history.size(); ++i) view.push_back(history[i].item);
  ContextFill fill;
  auto config = core::LoadConfig(core::DefaultCodexHome(), {});
  std::optional<int64_t> window, limit;
  std::string instructions(core::BaseInstructions());
  if (config.ok()) {
    window = config->model_context_window;
    limit = config->model_auto_compact_token_limit;
    if (!config->instructions.empty()) instructions = config->instructions;
  }
  fill.tokens = compaction::EstimateTokens(view) + static_cast<int64_t>(instructions.size() / 4);
  auto limits = compaction::ResolveContextLimits(session.model, window, limit);
  fill.window = limits.ok() ? limits->context_window : compaction::kFallbackContextWindow;
  fill.left_percent = compaction::ContextLeftPercent(fill.tokens, fill.window);
  return fill;
}

int RunShow(const std::string& id, bool json) {
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  auto s = Resolve(**store, id);
  if (!s.ok()) return ReportError(s.status());
  auto d = (*store)->Show(s->id);
  if (!d.ok()) return ReportError(d.status());
  if (json) {
    Json out;
    out["session"] = SessionJson(d->session);
    Json items = Json::array();
    for (const auto& it : d->history) {
      Json j;
      j["id"] = it.id;
      j["parent_id"] = it.parent_id ? Json(*it.parent_id) : Json(nullptr);
      j["session_id"] = it.session_id;
      j["turn_id"] = it.turn_id;
      j["kind"] = core::ItemKindName(it.item.kind);
      j["created_at_ms"] = it.created_at_ms;
      Json body = Json::parse(it.item.body, nullptr, false);
      j["body"] = body.is_discarded() ? Json(it.item.body) : body;
      items.push_back(std::move(j));
    }
    out["items"] = std::move(items);
    Json turns = Json::array();
    for (const auto& t : d->turns) {
      turns.push_back({{"turn_id", t.turn_id},
                       {"status", storage::TurnStatusName(t.status)},
                       {"error", t.error},
                       {"started_at_ms", t.started_at_ms},
                       {"ended_at_ms", t.ended_at_ms},
                       {"usage",
                        {{"input_tokens", t.usage.input_tokens},
                         {"cached_input_tokens", t.usage.cached_input_tokens},
                         {"output_tokens", t.usage.output_tokens},
                         {"reasoning_output_tokens", t.usage.reasoning_output_tokens},
                         {"total_tokens", t.usage.total_tokens}}}});
    }
    out["turns"] = std::move(turns);
    Json events = Json::array();
    for (const auto& e : d->events) {
      Json payload = Json::parse(e.payload_json, nullptr, false);
      events.push_back({{"id", e.id},
                        {"turn_id", e.turn_id},
                        {"type", e.type},
                        {"created_at_ms", e.created_at_ms},
                        {"payload", payload.is_discarded() ? Json(e.payload_json) : payload}});
    }
    out["events"] = std::move(events);
    Json forks = Json::array();
    for (const auto& f : d->forks) forks.push_back(SessionJson(f));
    out["forks"] = std::move(forks);
    const ContextFill fill = EstimateContextFill(d->session, d->history);
    out["context"] = {{"estimated_tokens", fill.tokens},
                      {"context_window", fill.window},
                      {"context_left_percent", fill.left_percent}};
    std::cout << Dump(out) << "\n";
    return kExitOk;
  }
  const core::SessionInfo& ss = d->session;
  std::printf("session  %s%s\n", ss.id.c_str(),
              ss.name.empty() ? "" : (" (" + ss.name + ")").c_str());
  std::printf("title    %s\n", ss.title.empty() ? "(untitled)" : ss.title.c_str());
  std::printf("cwd      %s\n", ss.cwd.c_str());
  std::printf("model    %s (%s)\n", ss.model.c_str(), ss.provider.c_str());
  std::printf("created  %s   updated %s%s\n", LocalTime(ss.created_at_ms).c_str(),
              LocalTime(ss.updated_at_ms).c_str(), ss.archived ? "   [archived]" : "");
  std::printf("source   %s", ss.source.c_str());
  if (!ss.forked_from_session.empty()) {
    std::printf(" (forked from %s at item %lld)", ss.forked_from_session.c_str(),
                static_cast<long long>(ss.forked_from_item.value_or(0)));
  }
  std::printf("\ntokens   %lld\n", static_cast<long long>(ss.tokens_used));
  const ContextFill fill = EstimateContextFill(ss, d->history);
  std::printf("context  ~%lld tokens in the model's view, %d%% of the %lld-token window left\n",
              static_cast<long long>(fill.tokens), fill.left_percent,
              static_cast<long long>(fill.window));
  for (const auto& f : d->forks) {
    std::printf("fork     %s  %s\n", f.id.c_str(), Clip(Label(f), 60).c_str());
  }
  const std::vector<size_t> starts = storage::TurnStartIndexes(d->history);
  size_t next_start = 0;
  std::printf("\n");
  for (size_t i = 0; i < d->history.size(); ++i) {
    if (next_start < starts.size() && starts[next_start] == i) {
      std::printf("%s── turn %zu ──\n", i == 0 ? "" : "\n", ++next_start);
    }
    PrintItem(d->history[i]);
    if (auto n = storage::CheckpointReplacementItems(d->history[i].item); n && *n > 0) {
      std::printf("    (the next %lld items are the compacted history)\n",
                  static_cast<long long>(*n));
    }
  }
  if (!d->turns.empty()) {
    std::printf("\nusage per turn:\n");
    int n = 0;
    for (const auto& t : d->turns) {
      std::printf(
          "  %2d. %-11s input %lld (cached %lld), output %lld (reasoning %lld), total %lld%s\n",
          ++n, std::string(storage::TurnStatusName(t.status)).c_str(),
          static_cast<long long>(t.usage.input_tokens),
          static_cast<long long>(t.usage.cached_input_tokens),
          static_cast<long long>(t.usage.output_tokens),
          static_cast<long long>(t.usage.reasoning_output_tokens),
          static_cast<long long>(t.usage.total_tokens),
          t.error.empty() ? "" : ("  error: " + Clip(t.error, 80)).c_str());
    }
  }
  if (!d->events.empty()) {
    std::map<std::string, int> counts;
    for (const auto& e : d->events) ++counts[e.type];
    std::string list;
    for (const auto& [type, count] : counts) {
      list += (list.empty() ? "" : ", ") + type + " ×" + std::to_string(count);
    }
    std::printf("\nevents: %s\n", list.c_str());
  }
  return kExitOk;
}

// --- tree, search, rm, archive, rename, purge, fork --------------------------

int RunTree(const std::string& id) {
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  auto s = Resolve(**store, id);
  if (!s.ok()) return ReportError(s.status());
  auto tree = (*store)->Tree(s->id);
  if (!tree.ok()) return ReportError(tree.status());
  for (const auto& node : *tree) {
    std::string indent;
    for (int i = 1; i < node.depth; ++i) indent += "   ";
    if (node.depth > 0) indent += "└─ ";
    std::printf("%s%s %s  %s  %s\n", indent.c_str(), node.session.id == s->id ? "*" : " ",
                node.session.id.c_str(), LocalTime(node.session.updated_at_ms).c_str(),
                Clip(Label(node.session), 60).c_str());
  }
  return kExitOk;
}

int RunSearch(const std::vector<std::string>& words, int limit, bool json) {
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  auto hits = (*store)->Search(text, limit);
  if (!hits.ok()) return ReportError(hits.status());
  for (const auto& h : *hits) {
    if (json) {
      Json j = SessionJson(h.session);
      j["item_id"] = h.item_id;
      j["snippet"] = h.snippet;
      std::cout << Dump(j) << "\n";
    } else {
      std::printf("%s  %s  %s\n    %s\n", h.session.id.c_str(),
                  LocalTime(h.session.updated_at_ms).c_str(), Clip(Label(h.session), 60).c_str(),
                  Clip(h.snippet, 160).c_str());
    }
  }
  if (hits->empty() && !json) std::fprintf(stderr, "no session matches '%s'\n", text.c_str());
  return kExitOk;
}

int RunRemove(const std::string& id) {
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  auto s = Resolve(**store, id);
  if (!s.ok()) return ReportError(s.status());
  auto stats = (*store)->Remove(s->id);
  if (!stats.ok()) return ReportError(stats.status());
  std::printf("removed session %s (%lld items deleted; items shared with forks kept)\n",
              s->id.c_str(), static_cast<long long>(stats->items));
  return kExitOk;
}

int RunArchive(const std::string& id, bool archive) {
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  auto s = Resolve(**store, id);
  if (!s.ok()) return ReportError(s.status());
  Status st = archive ? (*store)->Archive(s->id) : (*store)->Unarchive(s->id);
  if (!st.ok()) return ReportError(st);
  std::printf("%s session %s\n", archive ? "archived" : "unarchived", s->id.c_str());
  return kExitOk;
}

int RunRename(const std::string& id, const std::string& name) {
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  auto s = Resolve(**store, id);
  if (!s.ok()) return ReportError(s.status());
  Status st = (*store)->Rename(s->id, name);
  if (!st.ok()) return ReportError(st);
  std::printf("renamed session %s to '%s'\n", s->id.c_str(), name.c_str());
  return kExitOk;
}

// "30d", "12h", "90m", "2w", "45s" -> milliseconds.
Result<int64_t> ParseAge(const std::string& text) {
  size_t i = 0;
  int64_t n = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && n < 1'000'000'000) {
    n = n * 10 + (text[i++] - '0');
  }
  const std::string unit = text.substr(i);
  int64_t scale = 0;
  if (unit == "d") scale = 86'400'000;
  if (unit == "h") scale = 3'600'000;
  if (unit == "m") scale = 60'000;
  if (unit == "s") scale = 1'000;
  if (unit == "w") scale = 7 * 86'400'000LL;
  if (i == 0 || scale == 0) {
    return InvalidArgumentError("--older-than '" + text +
                                "' is not a duration; use a number with s, m, h, d or w, e.g. 30d");
  }
  return n * scale;
}

int RunPurge(const GlobalOptions& global, const std::string& older_than) {
  int64_t age_ms = 0;
  if (!older_than.empty()) {
    auto age = ParseAge(older_than);
    if (!age.ok()) return ReportError(age.status());
    age_ms = *age;
  } else {
    core::ConfigOverrides overrides;
    overrides.dash_c = global.dash_c;
    auto config = core::LoadConfig(core::DefaultCodexHome(), overrides);
    if (!config.ok()) return ReportError(config.status());
    if (!config->history_retention_days) {
      return ReportError(InvalidArgumentError(
          "purge needs --older-than AGE (e.g. 30d) or [history] retention_days in config.toml"));
    }
    if (*config->history_retention_days < 0) {
      return ReportError(InvalidArgumentError("[history] retention_days must not be negative"));
    }
    age_ms = int64_t{*config->history_retention_days} * 86'400'000;
  }
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  auto stats = (*store)->Purge(now - age_ms);
  if (!stats.ok()) return ReportError(stats.status());
  std::printf("purged %lld sessions (%lld items) last updated before %s\n",
              static_cast<long long>(stats->sessions), static_cast<long long>(stats->items),
              LocalTime(now - age_ms).c_str());
  return kExitOk;
}

int RunFork(const std::string& id, int at_turn) {
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  auto s = Resolve(**store, id);
  if (!s.ok()) return ReportError(s.status());
  std::optional<int> turn;
  if (at_turn != 0) turn = at_turn;
  auto fork = (*store)->Fork(s->id, turn);
  if (!fork.ok()) return ReportError(fork.status());
  std::printf("%s\n", fork->id.c_str());
  return kExitOk;
}

int RunExport(const std::string& id, const std::string& format, const std::string& output) {
  storage::ExportFormat fmt;
  if (format == "jsonl") {
    fmt = storage::ExportFormat::kJsonl;
  } else if (format == "markdown" || format == "md") {
    fmt = storage::ExportFormat::kMarkdown;
  } else {
    return ReportError(
        InvalidArgumentError("unknown export format '" + format + "'; use jsonl or markdown"));
  }
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  auto s = Resolve(**store, id);
  if (!s.ok()) return ReportError(s.status());
  auto text = storage::ExportSession(**store, s->id, fmt);
  if (!text.ok()) return ReportError(text.status());
  if (output.empty() || output == "-") {
    std::cout << *text;
    std::cout.flush();
    return std::cout ? kExitOk : ReportError(InternalError("cannot write to stdout"));
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << *text;
  out.close();
  if (!out) {
    return ReportError(FailedPreconditionError("cannot write " + output +
                                               "; check the directory exists and is writable"));
  }
  std::fprintf(stderr, "exported session %s to %s\n", s->id.c_str(), output.c_str());
  return kExitOk;
}

int RunImport(const std::vector<std::string>& paths) {
  auto files = storage::CollectRolloutFiles(paths);
  if (!files.ok()) return ReportError(files.status());
  if (files->empty()) {
    return ReportError(NotFoundError("no .jsonl rollout files found under the given paths"));
  }
  auto store = OpenStore();
  if (!store.ok()) return ReportError(store.status());
  int exit = kExitOk;
  int imported = 0, skipped = 0;
  for (const std::string& file : *files) {
    auto outcome = storage::ImportRolloutFile(**store, file);
    if (!outcome.ok()) {
      exit = ReportError(outcome.status());
      continue;
    }
    if (outcome->imported) {
      ++imported;
      std::printf("imported %s from %s\n", outcome->session_id.c_str(), file.c_str());
    } else {
      ++skipped;
      std::printf("skipped %s from %s (already imported)\n", outcome->session_id.c_str(),
                  file.c_str());
    }
  }
  std::fprintf(stderr, "%d imported, %d already present, %d failed\n", imported, skipped,
               static_cast<int>(files->size()) - imported - skipped);
  return exit;
}

}  // namespace

void RegisterSessionsCommands(CLI::App& app, GlobalOptions& global, int* exit_code) {
  CLI::App* sessions = app.add_subcommand("sessions", "List, inspect and manage stored sessions");
  sessions->require_subcommand(1);

  auto list_args = std::make_shared<ListArgs>();
  CLI::App* list = sessions->add_subcommand("list", "List sessions, newest first");
  auto* all = list->add_flag("--all", list_args->all, "Every directory, not just the current one");
  list->add_option("--cwd", list_args->cwd, "Sessions started in DIR (default: current directory)")
      ->excludes(all);
  list->add_option("--limit", list_args->limit, "Sessions per page (default 20)")
      ->check(CLI::Range(1, 10'000));
  list->add_option("--cursor", list_args->cursor, "Continue from a previous page");
  list->add_flag("--archived", list_args->archived, "List archived sessions instead");
  list->add_flag("--json", list_args->json, "JSON Lines output");
  list->callback([list_args, exit_code] { *exit_code = RunList(*list_args); });

  auto show_id = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  CLI::App* show = sessions->add_subcommand("show", "Print a session's transcript and usage");
  show->add_option("ID", *show_id, "Session id, unique prefix or name")->required();
  show->add_flag("--json", *show_json, "One JSON object");
  show->callback([show_id, show_json, exit_code] { *exit_code = RunShow(*show_id, *show_json); });

  auto tree_id = std::make_shared<std::string>();
  CLI::App* tree = sessions->add_subcommand("tree", "Show the fork tree a session belongs to");
  tree->add_option("ID", *tree_id, "Session id, unique prefix or name")->required();
  tree->callback([tree_id, exit_code] { *exit_code = RunTree(*tree_id); });

  auto search_words = std::make_shared<std::vector<std::string>>();
  auto search_json = std::make_shared<bool>(false);
  auto search_limit = std::make_shared<int>(20);
  CLI::App* search =
      sessions->add_subcommand("search", "Full-text search of messages and tool output");
  search->add_option("TEXT", *search_words, "Words that must all appear")->required();
  search->add_option("--limit", *search_limit, "Sessions to show (default 20)")
      ->check(CLI::Range(1, 10'000));
  search->add_flag("--json", *search_json, "JSON Lines output");
  search->callback([search_words, search_limit, search_json, exit_code] {
    *exit_code = RunSearch(*search_words, *search_limit, *search_json);
  });

  auto rm_id = std::make_shared<std::string>();
  CLI::App* rm = sessions->add_subcommand("rm", "Delete a session (items shared with forks stay)");
  rm->add_option("ID", *rm_id, "Session id, unique prefix or name")->required();
  rm->callback([rm_id, exit_code] { *exit_code = RunRemove(*rm_id); });

  auto archive_id = std::make_shared<std::string>();
  CLI::App* archive = sessions->add_subcommand("archive", "Hide a session from lists and --last");
  archive->add_option("ID", *archive_id, "Session id, unique prefix or name")->required();
  archive->callback([archive_id, exit_code] { *exit_code = RunArchive(*archive_id, true); });

  auto unarchive_id = std::make_shared<std::string>();
  CLI::App* unarchive = sessions->add_subcommand("unarchive", "Bring an archived session back");
  unarchive->add_option("ID", *unarchive_id, "Session id, unique prefix or name")->required();
  unarchive->callback([unarchive_id, exit_code] { *exit_code = RunArchive(*unarchive_id, false); });

  auto rename_args = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* rename =
      sessions->add_subcommand("rename", "Name a session (usable instead of its id)");
  rename->add_option("ID", rename_args->first, "Session id, unique prefix or name")->required();
  rename->add_option("NAME", rename_args->second, "The new name (\"\" clears it)")->required();
  rename->callback([rename_args, exit_code] {
    *exit_code = RunRename(rename_args->first, rename_args->second);
  });

  auto purge_age = std::make_shared<std::string>();
  CLI::App* purge = sessions->add_subcommand(
      "purge", "Delete sessions not updated for a while ([history] retention_days by default)");
  purge->add_option("--older-than", *purge_age, "Age such as 30d, 12h, 2w");
  purge->callback([&global, purge_age, exit_code] { *exit_code = RunPurge(global, *purge_age); });

  struct ExportArgs {
    std::string id;
    std::string format = "jsonl";
    std::string output;
  };
  auto export_args = std::make_shared<ExportArgs>();
  CLI::App* exp =
      sessions->add_subcommand("export", "Write a session as a Codex rollout or Markdown");
  exp->add_option("ID", export_args->id, "Session id, unique prefix or name")->required();
  exp->add_option("--format", export_args->format, "jsonl (Codex rollout, default) or markdown");
  exp->add_option("-o,--output", export_args->output, "Write to FILE instead of stdout");
  exp->callback([export_args, exit_code] {
    *exit_code = RunExport(export_args->id, export_args->format, export_args->output);
  });

  auto import_paths = std::make_shared<std::vector<std::string>>();
  CLI::App* imp = sessions->add_subcommand(
      "import", "Import Codex rollout files (directories are searched for *.jsonl)");
  imp->add_option("PATH", *import_paths, "Rollout files or directories")->required();
  imp->callback([import_paths, exit_code] { *exit_code = RunImport(*import_paths); });

  auto fork_id = std::make_shared<std::string>();
  auto fork_turn = std::make_shared<int>(0);
  CLI::App* fork = app.add_subcommand("fork", "Branch a session; prints the new session id");
  fork->add_option("ID", *fork_id, "Session id, unique prefix or name")->required();
  fork->add_option("--at-turn", *fork_turn, "Branch after turn N (1-based) instead of the head")
      ->check(CLI::PositiveNumber);
  fork->callback([fork_id, fork_turn, exit_code] { *exit_code = RunFork(*fork_id, *fork_turn); });
}

}  // namespace codex::cli
