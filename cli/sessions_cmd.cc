#include "cli/sessions_cmd.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/path.h"
#include "base/shell.h"
#include "base/time.h"
#include "cli/age_arg.h"
#include "cli/config_overrides.h"
#include "cli/exit_codes.h"
#include "cli/session_json.h"
#include "cli/session_resolution.h"
#include "cli/sessions_migrate.h"
#include "cli/sessions_serve.h"
#include "cli/sessions_usage.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "cli/work_progress.h"
#include "compaction/token_accounting.h"
#include "compaction/working_state.h"
#include "core/config.h"
#include "core/context_budget.h"
#include "core/instructions.h"
#include "core/session_lease.h"
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

// The directory a command is scoped to: --cwd DIR or the current directory,
// as CanonicalPath (base/path.h) writes it; nullopt with --all.
Result<std::optional<std::string>> ScopeDir(bool all, const std::string& cwd) {
  if (all) return std::optional<std::string>();
  // The form sessions record their cwd in (Config::cwd): through a symlink too.
  if (!cwd.empty()) return std::optional<std::string>(CanonicalPath(cwd));
  std::error_code ec;
  auto cur = std::filesystem::current_path(ec);
  if (ec) {
    return FailedPreconditionError("cannot read the current directory; pass --cwd DIR or --all");
  }
  return std::optional<std::string>(CanonicalPath(cur.string()));
}

std::string LocalTime(int64_t ms) { return FormatLocalTime(ms, "%Y-%m-%d %H:%M"); }

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
    for (const auto& s : page.sessions) PrintText(stdout, Dump(SessionJson(s)) + "\n");
    if (!page.next_cursor.empty()) {
      PrintText(stdout, Dump(Json{{"next_cursor", page.next_cursor}}) + "\n");
    }
    return OkStatus();
  }
  if (page.sessions.empty()) {
    std::string where = q.cwd ? " in " + *q.cwd : std::string();
    PrintF(stderr, "no %ssessions%s%s\n", args.archived ? "archived " : "", where.c_str(),
           q.cwd ? "; use --all to list every directory" : "");
    return OkStatus();
  }
  PrintF(stdout, "%-36s  %-16s  %-16s  %-30s  %s\n", "ID", "UPDATED", "HOST", "CWD", "TITLE");
  for (const auto& s : page.sessions) {
    std::string cwd = s.cwd;
    if (cwd.size() > 30) cwd = "…" + cwd.substr(cwd.size() - 29);
    PrintF(stdout, "%-36s  %-16s  %-16s  %-30s  %s\n", s.id.c_str(),
           LocalTime(s.updated_at_ms).c_str(), Clip(s.host.empty() ? "?" : s.host, 16).c_str(),
           cwd.c_str(), Clip(Label(s), 60).c_str());
  }
  if (!page.next_cursor.empty()) {
    std::string more = "next page: codex sessions list";
    if (args.all) {
      more += " --all";
    } else if (!args.cwd.empty()) {
      more += " --cwd " + ShellQuote(*q.cwd);  // valid shell for any directory name
    }
    if (args.archived) more += " --archived";
    if (args.limit != 20) more += " --limit " + std::to_string(args.limit);
    more += " --cursor " + ShellQuote(page.next_cursor);
    PrintF(stderr, "%s\n", more.c_str());
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
        PrintF(stdout, "  [context] %s\n", Clip(text, 70).c_str());
      } else if (item.role == "developer" || item.role == "system") {
        PrintF(stdout, "  [%s] %s\n", item.role.c_str(), Clip(text, 70).c_str());
      } else {
        PrintF(stdout, "%s:\n%s", item.role.c_str(), Indent(text, "  ", full ? kAll : 40).c_str());
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
      PrintF(stdout, "  (reasoning%s)\n",
             summary.empty() ? "" : (": " + Clip(summary, 70)).c_str());
      break;
    }
    case core::ItemKind::kFunctionCall: {
      // Decoded: the command line or the argument values, not escaped JSON.
      std::string args = storage::SearchText(item);
      const std::string name = str("name");
      if (args.rfind(name + "\n", 0) == 0) args.erase(0, name.size() + 1);
      PrintF(stdout, "tool call %s [%s]\n%s", name.c_str(), item.call_id.c_str(),
             Indent(args, "  $ ", full ? kAll : 12).c_str());
      break;
    }
    case core::ItemKind::kCustomToolCall:
      PrintF(stdout, "tool call %s [%s]\n%s", str("name").c_str(), item.call_id.c_str(),
             Indent(str("input"), "  | ", full ? kAll : 20).c_str());
      break;
    case core::ItemKind::kLocalShellCall: {
      std::string cmd;
      if (obj && body.contains("action") && body["action"].is_object()) {
        cmd = Dump(body["action"].value("command", Json::array()));
      }
      PrintF(stdout, "tool call local_shell %s [%s]\n", cmd.c_str(), item.call_id.c_str());
      break;
    }
    case core::ItemKind::kFunctionCallOutput:
    case core::ItemKind::kCustomToolCallOutput:
    case core::ItemKind::kLocalShellCallOutput:
      PrintF(stdout, "  output [%s]:\n%s", item.call_id.c_str(),
             Indent(obj ? storage::SearchText(item) : item.body, "    ", full ? kAll : 12).c_str());
      break;
    case core::ItemKind::kCompaction:
      PrintF(stdout, "  (compaction: encrypted summary from the server)\n");
      break;
    case core::ItemKind::kCompactionCheckpoint:
      PrintF(stdout, "=== compaction (item %lld): the model's view restarts here ===\n",
             static_cast<long long>(stored.id));
      break;
    case core::ItemKind::kOther:
      PrintF(stdout, "  (%s item)\n", obj ? str("type").c_str() : "unparsable");
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
    for (const auto& t : d.turns) turns.push_back(TurnJson(t));
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
    PrintText(stdout, Dump(out) + "\n");
    return OkStatus();
  }
  const core::SessionInfo& ss = d.session;
  PrintF(stdout, "session  %s%s\n", ss.id.c_str(),
         ss.name.empty() ? "" : (" (" + ss.name + ")").c_str());
  PrintF(stdout, "title    %s\n", ss.title.empty() ? "(untitled)" : ss.title.c_str());
  PrintF(stdout, "cwd      %s\n", ss.cwd.c_str());
  PrintF(stdout, "host     %s\n",
         ss.host.empty() ? "? (made before hosts were recorded)" : ss.host.c_str());
  if (!ss.project.empty()) PrintF(stdout, "project  %s\n", ss.project.c_str());
  PrintF(stdout, "model    %s (%s)\n", ss.model.c_str(), ss.provider.c_str());
  PrintF(stdout, "created  %s   updated %s%s\n", LocalTime(ss.created_at_ms).c_str(),
         LocalTime(ss.updated_at_ms).c_str(), ss.archived ? "   [archived]" : "");
  PrintF(stdout, "source   %s", ss.source.c_str());
  if (!ss.forked_from_session.empty()) {
    PrintF(stdout, " (forked from %s at item %lld)", ss.forked_from_session.c_str(),
           static_cast<long long>(ss.forked_from_item.value_or(0)));
  }
  PrintF(stdout, "\ntokens   %lld\n", static_cast<long long>(ss.tokens_used));
  const ContextFill fill = EstimateContextFill(global, ss, d.history);
  PrintF(stdout,
         "context  ~%lld tokens in the model's view (%s), %d%% of the %lld-token window "
         "left\n",
         static_cast<long long>(fill.tokens),
         fill.reported ? "the server's last count plus what came after" : "estimated",
         fill.left_percent, static_cast<long long>(fill.window));
  for (const auto& f : d.forks) {
    PrintF(stdout, "fork     %s  %s\n", f.id.c_str(), Clip(Label(f), 60).c_str());
  }
  if (const std::string frontier = NewestFrontier(d.history); !frontier.empty()) {
    PrintF(stdout,
           "\nfrontier kept by the last compaction (written by codex from the stored items):\n%s",
           Indent(frontier, "  ", static_cast<size_t>(-1)).c_str());
  }
  const std::vector<size_t> starts = storage::TurnStartIndexes(d.history);
  size_t next_start = 0;
  PrintF(stdout, "\n");
  for (size_t i = 0; i < d.history.size(); ++i) {
    if (next_start < starts.size() && starts[next_start] == i) {
      PrintF(stdout, "%s── turn %zu ──\n", i == 0 ? "" : "\n", ++next_start);
    }
    PrintItem(d.history[i], full);
    if (auto n = storage::CheckpointReplacementItems(d.history[i].item); n && *n > 0) {
      PrintF(stdout, "    (the next %lld items are the compacted history)\n",
             static_cast<long long>(*n));
    }
  }
  if (!d.turns.empty()) {
    PrintF(stdout, "\nusage per turn:\n");
    int n = 0;
    for (const auto& t : d.turns) {
      PrintF(stdout,
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
    PrintF(stdout, "\nevents: %s\n", list.c_str());
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
      PrintText(stdout, Dump(j) + "\n");
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
    PrintF(stdout, "%s%s %s  %s  %s%s\n", indent.c_str(), node.session.id == s.id ? "*" : " ",
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
  std::string cursor;
};

// A search cursor is "h<N>": the page starts after the first N matching
// items of the ranking (the same query again; items stored since may shift it).
constexpr int kMaxSearchOffset = 1'000'000;

Result<int> SearchOffset(const std::string& cursor) {
  if (cursor.empty()) return 0;
  int offset = 0;
  bool ok = cursor.size() > 1 && cursor.size() <= 8 && cursor[0] == 'h';
  for (size_t i = 1; ok && i < cursor.size(); ++i) {
    ok = cursor[i] >= '0' && cursor[i] <= '9';
    if (ok) offset = offset * 10 + (cursor[i] - '0');
  }
  if (!ok || offset > kMaxSearchOffset) {
    return InvalidArgumentError("invalid --cursor '" + Clip(cursor, 40) +
                                "'; pass the next_cursor a previous search printed");
  }
  return offset;
}

Status RunSearch(const SearchArgs& args) {
  storage::SearchQuery q;
  for (const auto& w : args.words) q.text += (q.text.empty() ? "" : " ") + w;
  ASSIGN_OR_RETURN(const int offset, SearchOffset(args.cursor));
  // One more than the page: whether there is a next one.
  q.limit = offset + args.limit + 1;
  ASSIGN_OR_RETURN(auto scope, ScopeDir(args.all, args.cwd));
  q.cwd = scope;
  ASSIGN_OR_RETURN(auto store, OpenStore(/*read_only=*/true));
  ASSIGN_OR_RETURN(auto all_hits, store->Search(q));
  const size_t end = std::min(all_hits.size(), static_cast<size_t>(offset + args.limit));
  const bool more = all_hits.size() > end;
  const std::span<const storage::SearchHit> hits =
      all_hits.size() > static_cast<size_t>(offset)
          ? std::span<const storage::SearchHit>(all_hits).subspan(static_cast<size_t>(offset),
                                                                  end - static_cast<size_t>(offset))
          : std::span<const storage::SearchHit>();
  const std::string next_cursor = more ? "h" + std::to_string(end) : "";
  for (const auto& h : hits) {
    if (args.json) {
      Json sessions = Json::array();
      for (const auto& w : h.sessions) {
        Json j = SessionJson(w.session);
        j["turn"] = w.turn;
        sessions.push_back(std::move(j));
      }
      PrintText(stdout, Dump(Json{{"item_id", h.item_id},
                                  {"kind", h.kind},
                                  {"role", h.role},
                                  {"snippet", h.snippet},
                                  {"sessions", std::move(sessions)}}) +
                            "\n");
      continue;
    }
    std::string what = h.kind == "message" ? h.role : h.kind;
    for (const auto& w : h.sessions) {
      PrintF(stdout, "%s  turn %d  %s%s\n", w.session.id.c_str(), w.turn,
             Clip(Label(w.session), 60).c_str(), w.session.archived ? "  (archived)" : "");
    }
    PrintF(stdout, "    %s: %s\n", what.c_str(), Clip(h.snippet, 160).c_str());
  }
  if (args.json) {
    if (more) PrintText(stdout, Dump(Json{{"next_cursor", next_cursor}}) + "\n");
    return OkStatus();
  }
  if (more) {
    PrintF(stderr, "more matches: run the same search with --cursor %s\n", next_cursor.c_str());
  } else if (hits.empty()) {
    PrintF(stderr, "nothing %smatches '%s'%s\n", offset > 0 ? "more " : "",
           Clip(q.text, 60).c_str(),
           q.cwd ? (" in sessions of " + *q.cwd + "; --all searches every directory").c_str() : "");
  }
  return OkStatus();
}

Status RunRemove(const std::string& id) {
  ASSIGN_OR_RETURN(auto store, OpenStore());
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  ASSIGN_OR_RETURN(auto stats, store->Remove(s.id));
  PrintF(stdout, "removed session %s (%lld items deleted; items shared with forks kept)\n",
         s.id.c_str(), static_cast<long long>(stats.items));
  return OkStatus();
}

Status RunArchive(const std::string& id, bool archive) {
  ASSIGN_OR_RETURN(auto store, OpenStore());
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  RETURN_IF_ERROR(archive ? store->Archive(s.id) : store->Unarchive(s.id));
  PrintF(stdout, "%s session %s\n", archive ? "archived" : "unarchived", s.id.c_str());
  return OkStatus();
}

Status RunRename(const std::string& id, const std::string& name) {
  ASSIGN_OR_RETURN(auto store, OpenStore());
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  RETURN_IF_ERROR(store->Rename(s.id, name));
  PrintF(stdout, "renamed session %s to '%s'\n", s.id.c_str(), name.c_str());
  return OkStatus();
}

struct PurgeArgs {
  std::string older_than;
  bool dry_run = false;
  bool yes = false;
  bool all = false;
  std::string cwd;
  bool json = false;
};

Status RunPurge(const GlobalOptions& global, const PurgeArgs& args) {
  int64_t age_ms = 0;
  if (!args.older_than.empty()) {
    ASSIGN_OR_RETURN(auto age, ParseAge(args.older_than, "--older-than"));
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
  const int64_t now = NowMs();
  q.updated_before_ms = now - age_ms;
  const std::string where = q.cwd ? " in " + *q.cwd : std::string(" in every directory");
  if (args.json && !args.dry_run && !args.yes) {
    return InvalidArgumentError("purge --json does not ask: pass --yes, or --dry-run to list them");
  }
  ASSIGN_OR_RETURN(auto store, OpenStore());
  q.dry_run = true;
  storage::RemoveStats seen;
  ASSIGN_OR_RETURN(auto candidates, store->Purge(q, &seen));
  // Sessions a running turn holds are skipped (SessionDatabase::Remove), and
  // said so: one busy line each, exit 3.
  auto skipped = [](const std::vector<storage::BusySession>& busy) -> Status {
    Status last = OkStatus();
    for (const storage::BusySession& b : busy) {
      if (!last.ok()) PrintError(last);
      last = core::SessionBusyError(b.session.id, b.holder,
                                    "purge skipped it; run purge again once the turn has ended");
    }
    return last;
  };
  auto busy_ids = [](const std::vector<storage::BusySession>& busy) {
    Json ids = Json::array();
    for (const storage::BusySession& b : busy) ids.push_back(b.session.id);
    return ids;
  };
  // --json: one summary object, no progress and no listing.
  if (args.json && (args.dry_run || candidates.empty())) {
    Json would = Json::array();
    for (const auto& si : candidates) would.push_back(SessionJson(si));
    Json out = {{"dry_run", args.dry_run},
                {"updated_before_ms", q.updated_before_ms},
                {"sessions", candidates.size()},
                {"busy", busy_ids(seen.busy)}};
    if (args.dry_run) out["would_remove"] = would;
    if (!args.dry_run) out["items"] = 0;
    PrintText(stdout, Dump(out) + "\n");
    return args.dry_run || seen.busy.empty() ? OkStatus() : skipped(seen.busy);
  }
  if (candidates.empty() && !seen.busy.empty()) return skipped(seen.busy);
  if (candidates.empty()) {
    PrintF(stdout, "no session%s was last updated before %s; nothing to purge\n", where.c_str(),
           LocalTime(q.updated_before_ms).c_str());
    return OkStatus();
  }
  auto list = [&](FILE* out) {
    for (const auto& si : candidates) {
      PrintF(out, "  %s  %s  %s\n", si.id.c_str(), LocalTime(si.updated_at_ms).c_str(),
             Clip(Label(si), 60).c_str());
    }
  };
  const std::string count =
      std::to_string(candidates.size()) + " session" + (candidates.size() == 1 ? "" : "s");
  if (args.dry_run) {
    PrintF(stdout, "would remove %s%s last updated before %s:\n", count.c_str(), where.c_str(),
           LocalTime(q.updated_before_ms).c_str());
    list(stdout);
    for (const storage::BusySession& b : seen.busy) {
      PrintF(stdout, "would skip %s: a turn is running on it (codex pid %lld)\n",
             b.session.id.c_str(), static_cast<long long>(b.holder.pid));
    }
    return OkStatus();
  }
  if (!args.yes) {
    if (!isatty(STDIN_FILENO)) {
      return InvalidArgumentError(
          "purge would remove " + count + where +
          "; pass --yes to confirm (stdin is not a terminal), or --dry-run to list them");
    }
    PrintF(stderr, "remove %s%s last updated before %s?\n", count.c_str(), where.c_str(),
           LocalTime(q.updated_before_ms).c_str());
    list(stderr);
    PrintF(stderr, "remove them? [y/N] ");
    std::fflush(stderr);
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      PrintF(stderr, "nothing removed\n");
      return OkStatus();
    }
  }
  q.dry_run = false;
  // Thousands of sessions take a while: the progress of import and migrate.
  WorkProgress progress("purging", "sessions", static_cast<int64_t>(candidates.size()),
                        WorkProgress::OutputFor(/*silent=*/args.json));
  q.progress = [&progress](int64_t done, int64_t) { progress.Update(done); };
  storage::RemoveStats stats;
  auto removed = store->Purge(q, &stats);
  progress.Finish();
  RETURN_IF_ERROR(removed.status());
  if (args.json) {
    PrintText(stdout, Dump(Json{{"dry_run", false},
                                {"updated_before_ms", q.updated_before_ms},
                                {"sessions", stats.sessions},
                                {"items", stats.items},
                                {"busy", busy_ids(stats.busy)}}) +
                          "\n");
    return skipped(stats.busy);
  }
  PrintF(stdout, "purged %lld sessions (%lld items)%s last updated before %s\n",
         static_cast<long long>(stats.sessions), static_cast<long long>(stats.items), where.c_str(),
         LocalTime(q.updated_before_ms).c_str());
  return skipped(stats.busy);
}

Status RunFork(const std::string& id, int at_turn) {
  ASSIGN_OR_RETURN(auto store, OpenStore());
  ASSIGN_OR_RETURN(auto s, Resolve(*store, id));
  std::optional<int> turn;
  if (at_turn != kNoTurn) turn = at_turn;
  ASSIGN_OR_RETURN(auto fork, store->Fork(s.id, turn));
  PrintF(stdout, "%s\n", fork.id.c_str());
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
  // A big session takes a while: progress on stderr (stdout may be the export).
  std::unique_ptr<WorkProgress> progress;
  auto text = storage::ExportSession(*store, s.id, fmt, [&](int64_t done, int64_t total) {
    if (!progress) {
      progress = std::make_unique<WorkProgress>("exporting", "items", total,
                                                WorkProgress::OutputFor(/*silent=*/false));
    }
    progress->Update(done);
  });
  if (progress) progress->Finish();
  if (!text.ok()) return text.status();
  if (output.empty() || output == "-") {
    const bool written = PrintText(stdout, *text) && std::fflush(stdout) == 0;
    return written ? OkStatus() : InternalError("cannot write to stdout");
  }
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out << *text;
  out.close();
  if (!out) {
    return FailedPreconditionError("cannot write " + output +
                                   "; check the directory exists and is writable");
  }
  PrintF(stderr, "exported session %s to %s\n", s.id.c_str(), output.c_str());
  return OkStatus();
}

// Goes on after a path or file that fails (its error line printed at once);
// exits 1 when any failed (README, Exit codes), 0 otherwise. Progress on
// stderr (cli/work_progress.h); with --json only a summary object on stdout.
Result<int> RunImport(const std::vector<std::string>& paths, bool json) {
  storage::RolloutFiles collected = storage::CollectRolloutFiles(paths);
  int failed = 0;
  for (const Status& error : collected.errors) {
    PrintError(error);
    ++failed;
  }
  if (collected.files.empty()) {
    if (failed == 0) {
      PrintError(FailedPreconditionError(
          "no .jsonl rollout files found under the given paths; Codex keeps them in "
          "~/.codex/sessions"));
    }
    return kExitError;
  }
  ASSIGN_OR_RETURN(auto store, OpenStore());
  int imported = 0, skipped = 0, cut = 0;
  WorkProgress progress("importing", "files", static_cast<int64_t>(collected.files.size()),
                        WorkProgress::OutputFor(json));
  int64_t done = 0;
  for (const std::string& file : collected.files) {
    auto outcome = storage::ImportRolloutFile(*store, file);
    progress.Update(++done);
    if (!outcome.ok()) {
      progress.Finish();
      PrintError(outcome.status());
      ++failed;
      continue;
    }
    if (outcome->imported) {
      ++imported;
      if (!json) PrintF(stdout, "imported %s from %s\n", outcome->session_id.c_str(), file.c_str());
    } else {
      ++skipped;
      if (!json) {
        PrintF(stdout, "skipped %s from %s (already imported)\n", outcome->session_id.c_str(),
               file.c_str());
      }
    }
    if (outcome->dropped_tail) {
      ++cut;
      progress.Finish();
      PrintF(stderr,
             "warning: %s:%zu: the last line was cut off (%zu bytes without a newline, "
             "what a crash leaves); it was dropped, lines 1-%zu were imported\n",
             file.c_str(), outcome->dropped_tail->line, outcome->dropped_tail->bytes,
             outcome->dropped_tail->line - 1);
    }
  }
  progress.Finish();
  std::fflush(stdout);
  if (json) {
    PrintText(stdout, Dump(Json{{"imported", imported},
                                {"already_present", skipped},
                                {"failed", failed},
                                {"cut_off_last_lines_dropped", cut}}) +
                          "\n");
  } else {
    PrintF(stderr, "%d imported, %d already present, %d failed\n", imported, skipped, failed);
  }
  return failed > 0 ? kExitError : kExitOk;
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
  search->add_option("--cursor", search_args->cursor, "Continue from a previous page");
  search->add_flag("--json", search_args->json,
                   "JSON Lines: one matching item per line, then {\"next_cursor\"} when there is "
                   "more");
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
  purge->add_flag(
      "--json", purge_args->json,
      "No progress or listing: one summary object on stdout (needs --yes or --dry-run)");
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
  auto import_json = std::make_shared<bool>(false);
  CLI::App* imp = sessions->add_subcommand(
      "import", "Import Codex rollout files (directories are searched for *.jsonl)");
  imp->add_option("PATH", *import_paths, "Rollout files or directories")->required();
  imp->add_flag("--json", *import_json,
                "No per-file lines or progress: one summary object on stdout at the end");
  imp->callback(
      [import_paths, import_json, &result] { result.Set(RunImport(*import_paths, *import_json)); });

  AddSessionsMigrateCommand(sessions, global, result);
  AddSessionsUsageCommand(sessions, global, result);
  AddSessionsServeCommand(sessions, global, result);

  auto fork_id = std::make_shared<std::string>();
  auto fork_turn = std::make_shared<int>(kNoTurn);
  CLI::App* fork = app.add_subcommand("fork", "Branch a session; prints the new session id");
  fork->add_option("ID", *fork_id, "Session id, unique prefix or name")->required();
  fork->add_option("--at-turn", *fork_turn,
                   "Branch after turn N (1 to the session's turn count; 0: before the first turn) "
                   "instead of the head");
  fork->callback([fork_id, fork_turn, &result] { result.Set(RunFork(*fork_id, *fork_turn)); });
}

}  // namespace codex::cli
