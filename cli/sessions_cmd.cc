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
#include <span>
#include <string>
#include <vector>

#include "cli/config_overrides.h"
#include "cli/exit_codes.h"
#include "cli/sessions_migrate.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "compaction/token_accounting.h"
#include "compaction/working_state.h"
#include "core/config.h"
#include "core/context_budget.h"
#include "core/instructions.h"
#include "core/tool_router.h"
#include "core/transcript.h"
#include "storage/rollout.h"
#include "storage/search_text.h"
#include "storage/sqlite_session_store.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;
using storage::SessionDatabase;

// The global options (-c, -p) of this run, set by RegisterSessionsCommands:
// they choose the store (session_store).
const GlobalOptions* g_global = nullptr;

// Read-only commands (list, show, tree, search, export) open read-only: they
// never wait for a writer and work from a read-only CODEX_HOME.
Result<std::unique_ptr<SessionDatabase>> OpenStore(bool read_only = false) {
  static const GlobalOptions kNone;
  return OpenConfiguredStore(g_global != nullptr ? *g_global : kNone, read_only);
}

constexpr int kNoTurn = -2147483647 - 1;  // --at-turn not given

// The directory a command is scoped to: --cwd DIR (absolute, normalised), or
// the current directory; nullopt with --all.
Result<std::optional<std::string>> ScopeDir(bool all, const std::string& cwd) {
  if (all) return std::optional<std::string>();
  std::error_code ec;
  if (!cwd.empty()) {
    auto abs = std::filesystem::absolute(cwd, ec);
    std::string dir = ec ? cwd : abs.lexically_normal().string();
    if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    return std::optional<std::string>(dir);
  }
  auto cur = std::filesystem::current_path(ec);
  if (ec) {
    return FailedPreconditionError("cannot read the current directory; pass --cwd DIR or --all");
  }
  return std::optional<std::string>(cur.string());
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
  j["host"] = s.host;
  j["project"] = s.project;
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
Result<core::SessionInfo> Resolve(SessionDatabase& store, const std::string& id) {
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

Status RunList(const ListArgs& args) {
  core::ListQuery q;
  ASSIGN_OR_RETURN(auto scope, ScopeDir(args.all, args.cwd));
  q.cwd = scope;
  q.limit = args.limit;
  q.cursor = args.cursor;
  q.archived = args.archived;
  ASSIGN_OR_RETURN(auto store, OpenStore(/*read_only=*/true));
  ASSIGN_OR_RETURN(auto page, store->ListSessions(q));
  if (args.json) {
    for (const auto& s : page.sessions) std::cout << Dump(SessionJson(s)) << "\n";
    if (!page.next_cursor.empty()) {
      std::cout << Dump(Json{{"next_cursor", page.next_cursor}}) << "\n";
    }
    return OkStatus();
  }
  if (page.sessions.empty()) {
    std::string where = q.cwd ? " in " + *q.cwd : std::string();
    std::fprintf(stderr, "no %ssessions%s%s\n", args.archived ? "archived " : "", where.c_str(),
                 q.cwd ? "; use --all to list every directory" : "");
    return OkStatus();
  }
  std::printf("%-36s  %-16s  %-16s  %-30s  %s\n", "ID", "UPDATED", "HOST", "CWD", "TITLE");
  for (const auto& s : page.sessions) {
    std::string cwd = s.cwd;
    if (cwd.size() > 30) cwd = "…" + cwd.substr(cwd.size() - 29);
    std::printf("%-36s  %-16s  %-16s  %-30s  %s\n", s.id.c_str(),
                LocalTime(s.updated_at_ms).c_str(), Clip(s.host.empty() ? "?" : s.host, 16).c_str(),
                cwd.c_str(), Clip(Label(s), 60).c_str());
  }
  if (!page.next_cursor.empty()) {
    std::string more = "next page: codex sessions list";
    if (args.all) {
      more += " --all";
    } else if (!args.cwd.empty()) {
      more += " --cwd '" + *q.cwd + "'";
    }
    if (args.archived) more += " --archived";
    if (args.limit != 20) more += " --limit " + std::to_string(args.limit);
    more += " --cursor " + page.next_cursor;
    std::fprintf(stderr, "%s\n", more.c_str());
  }
  return OkStatus();
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
      out +=
          std::string(prefix) + "… (" + std::to_string(rest) + " more lines; --full shows all)\n";
      break;
    }
    out += std::string(prefix) + std::string(text.substr(start, nl - start)) + "\n";
    ++lines;
    if (nl == text.size()) break;
    start = nl + 1;
  }
  return out;
}

// Tool outputs and long messages are cut to a few lines unless `full`.
void PrintItem(const core::StoredItem& stored, bool full) {
  const size_t kAll = static_cast<size_t>(-1);
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
      // A summary reads like the user message it is sent as.
      if (core::IsUserRoleMessage(item) && !core::IsRealUserMessage(item) &&
          !core::IsSummaryMessage(item)) {
        std::printf("  [context] %s\n", Clip(text, 70).c_str());
      } else if (item.role == "developer" || item.role == "system") {
        std::printf("  [%s] %s\n", item.role.c_str(), Clip(text, 70).c_str());
      } else {
        std::printf("%s:\n%s", item.role.c_str(), Indent(text, "  ", full ? kAll : 40).c_str());
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
    case core::ItemKind::kFunctionCall: {
      // Decoded: the command line or the argument values, not escaped JSON.
      std::string args = storage::SearchText(item);
      const std::string name = str("name");
      if (args.rfind(name + "\n", 0) == 0) args.erase(0, name.size() + 1);
      std::printf("tool call %s [%s]\n%s", name.c_str(), item.call_id.c_str(),
                  Indent(args, "  $ ", full ? kAll : 12).c_str());
      break;
    }
    case core::ItemKind::kCustomToolCall:
      std::printf("tool call %s [%s]\n%s", str("name").c_str(), item.call_id.c_str(),
                  Indent(str("input"), "  | ", full ? kAll : 20).c_str());
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
      std::printf(
          "  output [%s]:\n%s", item.call_id.c_str(),
          Indent(obj ? storage::SearchText(item) : item.body, "    ", full ? kAll : 12).c_str());
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

// How full the model's view of `session` is, estimated as the turn loop does
// (core::ContextBudget): the items after the newest checkpoint, from the
// newest total the server reported for them (item_usage) plus an estimate of
// what came after; without any reported total, the instructions and
// built-in tools plus every item. Against the context window of its model.
struct ContextFill {
  int64_t tokens = 0;
  int64_t window = 0;
  int left_percent = 100;
  bool reported = false;  // started from a server-reported total
};

// The window and limit come from the config as this run sees it (-c, -p).
ContextFill EstimateContextFill(const GlobalOptions& global, const core::SessionInfo& session,
                                const std::vector<core::StoredItem>& history) {
  size_t from = 0;
  for (size_t i = history.size(); i-- > 0;) {
    if (history[i].item.kind == core::ItemKind::kCompactionCheckpoint) {
      from = i + 1;
      break;
    }
  }
  const std::span<const core::StoredItem> stored_view(history.data() + from, history.size() - from);
  std::vector<core::Item> view;
  view.reserve(stored_view.size());
  for (const auto& s : stored_view) view.push_back(s.item);
  ContextFill fill;
  auto config = core::LoadConfig(core::DefaultCodexHome(), GlobalOverrides(global));
  std::optional<int64_t> window, limit;
  std::string instructions(core::BaseInstructions());
  std::string tools = "[]";
  if (config.ok()) {
    window = config->model_context_window;
    limit = config->model_auto_compact_token_limit;
    if (!config->instructions.empty()) instructions = config->instructions;
    tools = core::BuiltinToolsJson(*config);
  }
  auto limits = compaction::ResolveContextLimits(session.model, window, limit);
  fill.window = limits.ok() ? limits->context_window : compaction::kFallbackContextWindow;
  core::ContextBudget budget(limits.ok() ? limits->auto_compact_limit : 0, fill.window);
  const std::optional<core::UsageMark> mark = core::NewestUsageMark(stored_view);
  budget.Seed(view, mark, core::EstimateTextTokens(instructions.size() + tools.size()));
  fill.tokens = budget.usage();
  fill.reported = mark.has_value();
  fill.left_percent = compaction::ContextLeftPercent(fill.tokens, fill.window);
  return fill;
}

// The execution frontier the newest compaction of the view kept (its
// working-state message, compaction/working_state.h), "" when none.
std::string NewestFrontier(std::span<const core::StoredItem> history) {
  std::string text;
  for (const auto& stored : history) {
    if (compaction::IsWorkingStateMessage(stored.item)) text = core::MessageText(stored.item);
  }
  return text;
}

Status RunShow(const GlobalOptions& global, const std::string& id, bool json, bool full) {
  ASSIGN_OR_RETURN(auto store, OpenStore(/*read_only=*/true));
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  ASSIGN_OR_RETURN(auto d, store->Show(s.id));
  if (json) {
    Json out;
    out["session"] = SessionJson(d.session);
    Json items = Json::array();
    for (const auto& it : d.history) {
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
    for (const auto& t : d.turns) {
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
    for (const auto& e : d.events) {
      Json payload = Json::parse(e.payload_json, nullptr, false);
      events.push_back({{"id", e.id},
                        {"turn_id", e.turn_id},
                        {"type", e.type},
                        {"created_at_ms", e.created_at_ms},
                        {"payload", payload.is_discarded() ? Json(e.payload_json) : payload}});
    }
    out["events"] = std::move(events);
    Json forks = Json::array();
    for (const auto& f : d.forks) forks.push_back(SessionJson(f));
    out["forks"] = std::move(forks);
    const ContextFill fill = EstimateContextFill(global, d.session, d.history);
    out["context"] = {{"estimated_tokens", fill.tokens},
                      {"context_window", fill.window},
                      {"context_left_percent", fill.left_percent},
                      {"from_reported_usage", fill.reported}};
    const std::string frontier = NewestFrontier(d.history);
    out["frontier"] = frontier.empty() ? Json(nullptr) : Json(frontier);
    std::cout << Dump(out) << "\n";
    return OkStatus();
  }
  const core::SessionInfo& ss = d.session;
  std::printf("session  %s%s\n", ss.id.c_str(),
              ss.name.empty() ? "" : (" (" + ss.name + ")").c_str());
  std::printf("title    %s\n", ss.title.empty() ? "(untitled)" : ss.title.c_str());
  std::printf("cwd      %s\n", ss.cwd.c_str());
  std::printf("host     %s\n",
              ss.host.empty() ? "? (made before hosts were recorded)" : ss.host.c_str());
  if (!ss.project.empty()) std::printf("project  %s\n", ss.project.c_str());
  std::printf("model    %s (%s)\n", ss.model.c_str(), ss.provider.c_str());
  std::printf("created  %s   updated %s%s\n", LocalTime(ss.created_at_ms).c_str(),
              LocalTime(ss.updated_at_ms).c_str(), ss.archived ? "   [archived]" : "");
  std::printf("source   %s", ss.source.c_str());
  if (!ss.forked_from_session.empty()) {
    std::printf(" (forked from %s at item %lld)", ss.forked_from_session.c_str(),
                static_cast<long long>(ss.forked_from_item.value_or(0)));
  }
  std::printf("\ntokens   %lld\n", static_cast<long long>(ss.tokens_used));
  const ContextFill fill = EstimateContextFill(global, ss, d.history);
  std::printf(
      "context  ~%lld tokens in the model's view (%s), %d%% of the %lld-token window "
      "left\n",
      static_cast<long long>(fill.tokens),
      fill.reported ? "the server's last count plus what came after" : "estimated",
      fill.left_percent, static_cast<long long>(fill.window));
  for (const auto& f : d.forks) {
    std::printf("fork     %s  %s\n", f.id.c_str(), Clip(Label(f), 60).c_str());
  }
  if (const std::string frontier = NewestFrontier(d.history); !frontier.empty()) {
    std::printf(
        "\nfrontier kept by the last compaction (written by codex from the stored items):\n%s",
        Indent(NeutralizeControls(frontier), "  ", static_cast<size_t>(-1)).c_str());
  }
  const std::vector<size_t> starts = storage::TurnStartIndexes(d.history);
  size_t next_start = 0;
  std::printf("\n");
  for (size_t i = 0; i < d.history.size(); ++i) {
    if (next_start < starts.size() && starts[next_start] == i) {
      std::printf("%s── turn %zu ──\n", i == 0 ? "" : "\n", ++next_start);
    }
    PrintItem(d.history[i], full);
    if (auto n = storage::CheckpointReplacementItems(d.history[i].item); n && *n > 0) {
      std::printf("    (the next %lld items are the compacted history)\n",
                  static_cast<long long>(*n));
    }
  }
  if (!d.turns.empty()) {
    std::printf("\nusage per turn:\n");
    int n = 0;
    for (const auto& t : d.turns) {
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
  if (!d.events.empty()) {
    std::map<std::string, int> counts;
    for (const auto& e : d.events) ++counts[e.type];
    std::string list;
    for (const auto& [type, count] : counts) {
      list += (list.empty() ? "" : ", ") + type + " ×" + std::to_string(count);
    }
    std::printf("\nevents: %s\n", list.c_str());
  }
  return OkStatus();
}

// --- tree, search, rm, archive, rename, purge, fork --------------------------

// The turn of `parent`'s history that `fork` branched after (1-based; 0 =
// before the first turn), counted with TurnStartIndexes.
int ForkTurn(SessionDatabase& store, const core::SessionInfo& fork) {
  if (!fork.forked_from_item) return 0;
  core::SessionInfo at = fork;
  at.head_item_id = fork.forked_from_item;
  auto chain = store.LoadHistory(at);
  if (!chain.ok()) return 0;
  return static_cast<int>(storage::TurnStartIndexes(*chain).size());
}

Status RunTree(const std::string& id, bool json) {
  ASSIGN_OR_RETURN(auto store, OpenStore(/*read_only=*/true));
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  ASSIGN_OR_RETURN(auto tree, store->Tree(s.id));
  const auto& nodes = tree;
  // last[d]: whether the newest node at depth d is the last of its siblings,
  // which decides "└─" against "├─" and whether "│" continues below it.
  std::vector<bool> last;
  for (size_t n = 0; n < nodes.size(); ++n) {
    const auto& node = nodes[n];
    const int fork_turn = node.depth > 0 ? ForkTurn(*store, node.session) : 0;
    if (json) {
      Json j = SessionJson(node.session);
      j["depth"] = node.depth;
      j["fork_turn"] = node.depth > 0 ? Json(fork_turn) : Json(nullptr);
      j["current"] = node.session.id == s.id;
      std::cout << Dump(j) << "\n";
      continue;
    }
    bool is_last = true;
    for (size_t m = n + 1; m < nodes.size() && nodes[m].depth >= node.depth; ++m) {
      if (nodes[m].depth == node.depth) {
        is_last = false;
        break;
      }
    }
    last.resize(static_cast<size_t>(node.depth) + 1);
    last[static_cast<size_t>(node.depth)] = is_last;
    std::string indent;
    for (int d = 1; d < node.depth; ++d) indent += last[static_cast<size_t>(d)] ? "   " : "│  ";
    if (node.depth > 0) indent += is_last ? "└─ " : "├─ ";
    std::string where;
    if (node.depth > 0) {
      where = fork_turn == 0 ? "  (forked before turn 1)"
                             : "  (forked after turn " + std::to_string(fork_turn) + ")";
    }
    std::printf("%s%s %s  %s  %s%s\n", indent.c_str(), node.session.id == s.id ? "*" : " ",
                node.session.id.c_str(), LocalTime(node.session.updated_at_ms).c_str(),
                Clip(Label(node.session), 60).c_str(), where.c_str());
  }
  return OkStatus();
}

struct SearchArgs {
  std::vector<std::string> words;
  int limit = 20;
  bool json = false;
  bool all = false;
  std::string cwd;
};

Status RunSearch(const SearchArgs& args) {
  storage::SearchQuery q;
  for (const auto& w : args.words) q.text += (q.text.empty() ? "" : " ") + w;
  q.limit = args.limit;
  ASSIGN_OR_RETURN(auto scope, ScopeDir(args.all, args.cwd));
  q.cwd = scope;
  ASSIGN_OR_RETURN(auto store, OpenStore(/*read_only=*/true));
  ASSIGN_OR_RETURN(auto hits, store->Search(q));
  for (const auto& h : hits) {
    if (args.json) {
      Json sessions = Json::array();
      for (const auto& w : h.sessions) {
        Json j = SessionJson(w.session);
        j["turn"] = w.turn;
        sessions.push_back(std::move(j));
      }
      std::cout << Dump(Json{{"item_id", h.item_id},
                             {"kind", h.kind},
                             {"role", h.role},
                             {"snippet", h.snippet},
                             {"sessions", std::move(sessions)}})
                << "\n";
      continue;
    }
    std::string what = h.kind == "message" ? h.role : h.kind;
    for (const auto& w : h.sessions) {
      std::printf("%s  turn %d  %s\n", w.session.id.c_str(), w.turn,
                  Clip(Label(w.session), 60).c_str());
    }
    std::printf("    %s: %s\n", what.c_str(), Clip(h.snippet, 160).c_str());
  }
  if (hits.empty() && !args.json) {
    std::fprintf(
        stderr, "nothing matches '%s'%s\n", q.text.c_str(),
        q.cwd ? (" in sessions of " + *q.cwd + "; --all searches every directory").c_str() : "");
  }
  return OkStatus();
}

Status RunRemove(const std::string& id) {
  ASSIGN_OR_RETURN(auto store, OpenStore());
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  ASSIGN_OR_RETURN(auto stats, store->Remove(s.id));
  std::printf("removed session %s (%lld items deleted; items shared with forks kept)\n",
              s.id.c_str(), static_cast<long long>(stats.items));
  return OkStatus();
}

Status RunArchive(const std::string& id, bool archive) {
  ASSIGN_OR_RETURN(auto store, OpenStore());
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  RETURN_IF_ERROR(archive ? store->Archive(s.id) : store->Unarchive(s.id));
  std::printf("%s session %s\n", archive ? "archived" : "unarchived", s.id.c_str());
  return OkStatus();
}

Status RunRename(const std::string& id, const std::string& name) {
  ASSIGN_OR_RETURN(auto store, OpenStore());
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  RETURN_IF_ERROR(store->Rename(s.id, name));
  std::printf("renamed session %s to '%s'\n", s.id.c_str(), name.c_str());
  return OkStatus();
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

struct PurgeArgs {
  std::string older_than;
  bool dry_run = false;
  bool yes = false;
  bool all = false;
  std::string cwd;
};

Status RunPurge(const GlobalOptions& global, const PurgeArgs& args) {
  int64_t age_ms = 0;
  if (!args.older_than.empty()) {
    ASSIGN_OR_RETURN(auto age, ParseAge(args.older_than));
    age_ms = age;
  } else {
    ASSIGN_OR_RETURN(auto config,
                     core::LoadConfig(core::DefaultCodexHome(), GlobalOverrides(global)));
    if (!config.history_retention_days) {
      return InvalidArgumentError(
          "purge needs --older-than AGE (e.g. 30d) or [history] retention_days in config.toml");
    }
    if (*config.history_retention_days < 0) {
      return InvalidArgumentError("[history] retention_days must not be negative");
    }
    age_ms = int64_t{*config.history_retention_days} * 86'400'000;
  }
  storage::PurgeQuery q;
  ASSIGN_OR_RETURN(auto scope, ScopeDir(args.all, args.cwd));
  q.cwd = scope;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  q.updated_before_ms = now - age_ms;
  const std::string where = q.cwd ? " in " + *q.cwd : std::string(" in every directory");
  ASSIGN_OR_RETURN(auto store, OpenStore());
  q.dry_run = true;
  ASSIGN_OR_RETURN(auto candidates, store->Purge(q, nullptr));
  if (candidates.empty()) {
    std::printf("no session%s was last updated before %s; nothing to purge\n", where.c_str(),
                LocalTime(q.updated_before_ms).c_str());
    return OkStatus();
  }
  auto list = [&](FILE* out) {
    for (const auto& si : candidates) {
      std::fprintf(out, "  %s  %s  %s\n", si.id.c_str(), LocalTime(si.updated_at_ms).c_str(),
                   Clip(Label(si), 60).c_str());
    }
  };
  const std::string count =
      std::to_string(candidates.size()) + " session" + (candidates.size() == 1 ? "" : "s");
  if (args.dry_run) {
    std::printf("would remove %s%s last updated before %s:\n", count.c_str(), where.c_str(),
                LocalTime(q.updated_before_ms).c_str());
    list(stdout);
    return OkStatus();
  }
  if (!args.yes) {
    if (!isatty(STDIN_FILENO)) {
      return InvalidArgumentError(
          "purge would remove " + count + where +
          "; pass --yes to confirm (stdin is not a terminal), or --dry-run to list them");
    }
    std::fprintf(stderr, "remove %s%s last updated before %s?\n", count.c_str(), where.c_str(),
                 LocalTime(q.updated_before_ms).c_str());
    list(stderr);
    std::fprintf(stderr, "remove them? [y/N] ");
    std::fflush(stderr);
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      std::fprintf(stderr, "nothing removed\n");
      return OkStatus();
    }
  }
  q.dry_run = false;
  storage::RemoveStats stats;
  ASSIGN_OR_RETURN(auto removed, store->Purge(q, &stats));
  std::printf("purged %lld sessions (%lld items)%s last updated before %s\n",
              static_cast<long long>(stats.sessions), static_cast<long long>(stats.items),
              where.c_str(), LocalTime(q.updated_before_ms).c_str());
  return OkStatus();
}

Status RunFork(const std::string& id, int at_turn) {
  ASSIGN_OR_RETURN(auto store, OpenStore());
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  std::optional<int> turn;
  if (at_turn != kNoTurn) turn = at_turn;
  ASSIGN_OR_RETURN(auto fork, store->Fork(s.id, turn));
  std::printf("%s\n", fork.id.c_str());
  return OkStatus();
}

Status RunExport(const std::string& id, const std::string& format, const std::string& output) {
  storage::ExportFormat fmt;
  if (format == "jsonl") {
    fmt = storage::ExportFormat::kJsonl;
  } else if (format == "markdown" || format == "md") {
    fmt = storage::ExportFormat::kMarkdown;
  } else {
    return InvalidArgumentError("unknown export format '" + format + "'; use jsonl or markdown");
  }
  ASSIGN_OR_RETURN(auto store, OpenStore(/*read_only=*/true));
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  ASSIGN_OR_RETURN(auto text, storage::ExportSession(*store, s.id, fmt));
  if (output.empty() || output == "-") {
    std::cout << text;
    std::cout.flush();
    return std::cout ? OkStatus() : InternalError("cannot write to stdout");
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    return FailedPreconditionError("cannot write " + output +
                                   "; check the directory exists and is writable");
  }
  std::fprintf(stderr, "exported session %s to %s\n", s.id.c_str(), output.c_str());
  return OkStatus();
}

// Goes on after a file that fails (its error line printed at once); the exit
// code is the last failure's.
Result<int> RunImport(const std::vector<std::string>& paths) {
  ASSIGN_OR_RETURN(auto files, storage::CollectRolloutFiles(paths));
  if (files.empty()) {
    return NotFoundError("no .jsonl rollout files found under the given paths");
  }
  ASSIGN_OR_RETURN(auto store, OpenStore());
  int exit = kExitOk;
  int imported = 0, skipped = 0;
  for (const std::string& file : files) {
    auto outcome = storage::ImportRolloutFile(*store, file);
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
               static_cast<int>(files.size()) - imported - skipped);
  return exit;
}

}  // namespace

void RegisterSessionsCommands(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  g_global = &global;
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
  list->add_flag("--json", list_args->json,
                 "JSON Lines: one session per line, then {\"next_cursor\"} when there is more");
  list->callback([list_args, &result] { result.Set(RunList(*list_args)); });

  auto show_id = std::make_shared<std::string>();
  auto show_json = std::make_shared<bool>(false);
  auto show_full = std::make_shared<bool>(false);
  CLI::App* show = sessions->add_subcommand("show", "Print a session's transcript and usage");
  show->add_option("ID", *show_id, "Session id, unique prefix or name")->required();
  show->add_flag("--json", *show_json, "One JSON document (see docs/json-output.md)");
  show->add_flag("--full", *show_full, "Print tool outputs and messages whole, not cut");
  show->callback([&global, show_id, show_json, show_full, &result] {
    result.Set(RunShow(global, *show_id, *show_json, *show_full));
  });

  auto tree_id = std::make_shared<std::string>();
  auto tree_json = std::make_shared<bool>(false);
  CLI::App* tree = sessions->add_subcommand("tree", "Show the fork tree a session belongs to");
  tree->add_option("ID", *tree_id, "Session id, unique prefix or name")->required();
  tree->add_flag("--json", *tree_json, "JSON Lines: one session per line, parents first");
  tree->callback([tree_id, tree_json, &result] { result.Set(RunTree(*tree_id, *tree_json)); });

  auto search_args = std::make_shared<SearchArgs>();
  CLI::App* search = sessions->add_subcommand(
      "search",
      "Full-text search of what a session showed: messages, reasoning summaries, tool commands "
      "and tool output. Words must all appear; \"a phrase\" matches words in a row; word* "
      "matches words starting with it");
  search->add_option("TEXT", search_args->words, "Words, \"phrases\" and prefix*")->required();
  auto* search_all =
      search->add_flag("--all", search_args->all, "Every directory, not just the current one");
  search->add_option("--cwd", search_args->cwd, "Sessions started in DIR (default: current)")
      ->excludes(search_all);
  search->add_option("--limit", search_args->limit, "Matching items to show (default 20)")
      ->check(CLI::Range(1, 10'000));
  search->add_flag("--json", search_args->json, "JSON Lines: one matching item per line");
  search->callback([search_args, &result] { result.Set(RunSearch(*search_args)); });

  auto rm_id = std::make_shared<std::string>();
  CLI::App* rm = sessions->add_subcommand("rm", "Delete a session (items shared with forks stay)");
  rm->add_option("ID", *rm_id, "Session id, unique prefix or name")->required();
  rm->callback([rm_id, &result] { result.Set(RunRemove(*rm_id)); });

  auto archive_id = std::make_shared<std::string>();
  CLI::App* archive = sessions->add_subcommand("archive", "Hide a session from lists and --last");
  archive->add_option("ID", *archive_id, "Session id, unique prefix or name")->required();
  archive->callback([archive_id, &result] { result.Set(RunArchive(*archive_id, true)); });

  auto unarchive_id = std::make_shared<std::string>();
  CLI::App* unarchive = sessions->add_subcommand("unarchive", "Bring an archived session back");
  unarchive->add_option("ID", *unarchive_id, "Session id, unique prefix or name")->required();
  unarchive->callback([unarchive_id, &result] { result.Set(RunArchive(*unarchive_id, false)); });

  auto rename_args = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* rename =
      sessions->add_subcommand("rename", "Name a session (usable instead of its id)");
  rename->add_option("ID", rename_args->first, "Session id, unique prefix or name")->required();
  rename->add_option("NAME", rename_args->second, "The new name (\"\" clears it)")->required();
  rename->callback(
      [rename_args, &result] { result.Set(RunRename(rename_args->first, rename_args->second)); });

  auto purge_args = std::make_shared<PurgeArgs>();
  CLI::App* purge = sessions->add_subcommand(
      "purge",
      "Delete sessions of this directory not updated for a while (--older-than, or [history] "
      "retention_days); asks first on a terminal. With retention_days set, codex also applies it "
      "by itself at start (at most once an hour, every directory)");
  purge->add_option("--older-than", purge_args->older_than, "Age such as 30d, 12h, 2w");
  purge->add_flag("--dry-run", purge_args->dry_run, "List what would be removed; remove nothing");
  purge->add_flag("-y,--yes", purge_args->yes, "Do not ask (needed when stdin is not a terminal)");
  auto* purge_all = purge->add_flag("--all", purge_args->all, "Every directory");
  purge->add_option("--cwd", purge_args->cwd, "Sessions started in DIR (default: current)")
      ->excludes(purge_all);
  purge->callback([&global, purge_args, &result] { result.Set(RunPurge(global, *purge_args)); });

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
  exp->callback([export_args, &result] {
    result.Set(RunExport(export_args->id, export_args->format, export_args->output));
  });

  auto import_paths = std::make_shared<std::vector<std::string>>();
  CLI::App* imp = sessions->add_subcommand(
      "import", "Import Codex rollout files (directories are searched for *.jsonl)");
  imp->add_option("PATH", *import_paths, "Rollout files or directories")->required();
  imp->callback([import_paths, &result] { result.Set(RunImport(*import_paths)); });

  AddSessionsMigrateCommand(sessions, global, result);

  auto fork_id = std::make_shared<std::string>();
  auto fork_turn = std::make_shared<int>(kNoTurn);
  CLI::App* fork = app.add_subcommand("fork", "Branch a session; prints the new session id");
  fork->add_option("ID", *fork_id, "Session id, unique prefix or name")->required();
  fork->add_option("--at-turn", *fork_turn,
                   "Branch after turn N (1 to the session's turn count) instead of the head");
  fork->callback([fork_id, fork_turn, &result] { result.Set(RunFork(*fork_id, *fork_turn)); });
}

}  // namespace codex::cli
