#include "cli/sessions_show.h"

#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json.h"
#include "cli/context_fill.h"
#include "cli/session_json.h"
#include "cli/sessions_common.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "core/transcript.h"
#include "storage/rollout.h"
#include "storage/search_text.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;

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
        PrintF(stdout, "%s:\n%s", item.role.c_str(),
               IndentLines(text, "  ", full ? kAll : 40).c_str());
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
             IndentLines(args, "  $ ", full ? kAll : 12).c_str());
      break;
    }
    case core::ItemKind::kCustomToolCall:
      PrintF(stdout, "tool call %s [%s]\n%s", str("name").c_str(), item.call_id.c_str(),
             IndentLines(str("input"), "  | ", full ? kAll : 20).c_str());
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
             IndentLines(obj ? storage::SearchText(item) : item.body, "    ", full ? kAll : 12)
                 .c_str());
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

Status RunShow(const GlobalOptions& global, const std::string& id, bool json, bool full) {
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global, /*read_only=*/true));
  ASSIGN_OR_RETURN(auto s, store->FindSession(id));
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
    PrintF(stdout, "fork     %s  %s\n", f.id.c_str(), Clip(SessionLabel(f), 60).c_str());
  }
  if (const std::string frontier = NewestFrontier(d.history); !frontier.empty()) {
    PrintF(stdout,
           "\nfrontier kept by the last compaction (written by codex from the stored items):\n%s",
           IndentLines(frontier, "  ", static_cast<size_t>(-1)).c_str());
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

}  // namespace

void AddSessionsShowCommand(CLI::App* sessions, const GlobalOptions& global,
                            CommandOutcome& result) {
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
}

}  // namespace codex::cli
