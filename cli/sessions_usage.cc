#include "cli/sessions_usage.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/json.h"
#include "base/time.h"
#include "cli/age_arg.h"
#include "cli/config_overrides.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "core/config.h"
#include "storage/session_database.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;

struct UsageArgs {
  std::string since;
  std::string by = "day";
  bool json = false;
};

struct Sums {
  core::TokenUsage usage;
  int64_t requests = 0;
  int64_t turns = 0;
  double cost = 0;
  int64_t priced_turns = 0;
};

std::string LocalDay(int64_t ms) { return FormatLocalTime(ms, "%Y-%m-%d"); }

std::string GroupKey(const std::string& by, const core::SessionInfo& s, const core::TurnRecord& t) {
  if (by == "model") return s.model.empty() ? "(unknown)" : s.model;
  if (by == "project") return !s.project.empty() ? s.project : s.cwd;
  if (by == "session") return s.id;
  return LocalDay(t.started_at_ms);
}

double Cost(const core::ModelPrice& p, const core::TokenUsage& u) {
  const int64_t uncached =
      u.input_tokens > u.cached_input_tokens ? u.input_tokens - u.cached_input_tokens : 0;
  return (static_cast<double>(uncached) * p.input +
          static_cast<double>(u.cached_input_tokens) * p.cached_input +
          static_cast<double>(u.output_tokens) * p.output) /
         1e6;
}

void Add(Sums& into, const Sums& one) {
  into.usage += one.usage;
  into.requests += one.requests;
  into.turns += one.turns;
  into.cost += one.cost;
  into.priced_turns += one.priced_turns;
}

// The turns started at or after `since_ms` (one query), each summed into
// the group of its session; the sessions (model, project) come from the
// list, newest first, which stops at the first one last updated before the
// window (a turn started in it updated its session in it too).
Status Collect(storage::SessionDatabase& store, const core::Config& config, int64_t since_ms,
               const std::string& by, std::map<std::string, Sums>& groups) {
  ASSIGN_OR_RETURN(auto turns, store.TurnsSince(since_ms));
  if (turns.empty()) return OkStatus();
  std::map<std::string, core::SessionInfo> sessions;
  for (bool archived : {false, true}) {
    core::ListQuery q;
    q.archived = archived;
    q.limit = 500;
    for (bool more = true; more;) {
      ASSIGN_OR_RETURN(auto page, store.ListSessions(q));
      for (auto& s : page.sessions) {
        if (s.updated_at_ms < since_ms) {
          more = false;
          break;
        }
        sessions.emplace(s.id, std::move(s));
      }
      if (page.next_cursor.empty()) more = false;
      q.cursor = page.next_cursor;
    }
  }
  for (const auto& t : turns) {
    auto it = sessions.find(t.turn.session_id);
    if (it == sessions.end()) {
      ASSIGN_OR_RETURN(auto found, store.FindSession(t.turn.session_id));
      it = sessions.emplace(found.id, std::move(found)).first;
    }
    const core::SessionInfo& s = it->second;
    Sums one;
    one.usage = t.turn.usage;
    one.turns = 1;
    one.requests = t.requests;
    if (auto price = config.model_prices.find(s.model); price != config.model_prices.end()) {
      one.cost = Cost(price->second, one.usage);
      one.priced_turns = 1;
    }
    Add(groups[GroupKey(by, s, t.turn)], one);
  }
  return OkStatus();
}

Json SumsJson(const Sums& s) {
  Json j;
  j["requests"] = s.requests;
  j["turns"] = s.turns;
  j["input_tokens"] = s.usage.input_tokens;
  j["cached_input_tokens"] = s.usage.cached_input_tokens;
  j["output_tokens"] = s.usage.output_tokens;
  j["reasoning_output_tokens"] = s.usage.reasoning_output_tokens;
  j["total_tokens"] = s.usage.total_tokens;
  j["cost_usd"] = s.priced_turns > 0 ? Json(s.cost) : Json(nullptr);
  j["unpriced_turns"] = s.turns - s.priced_turns;
  return j;
}

// "$1.23", "$1.23+" when some turns had no price, "-" when none had one.
std::string CostText(const Sums& s) {
  if (s.priced_turns == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "$%.4f%s", s.cost, s.priced_turns < s.turns ? "+" : "");
  return buf;
}

Status RunUsage(const GlobalOptions& global, const UsageArgs& args) {
  int64_t since_ms = 0;
  if (!args.since.empty()) {
    ASSIGN_OR_RETURN(int64_t age, ParseAge(args.since, "--since"));
    const int64_t now = NowMs();
    since_ms = now - age;
  }
  ASSIGN_OR_RETURN(core::Config config,
                   core::LoadConfig(core::DefaultCodexHome(), GlobalOverrides(global)));
  ASSIGN_OR_RETURN(auto store, OpenCliStore(config.session_store, /*read_only=*/true));
  std::map<std::string, Sums> groups;
  RETURN_IF_ERROR(Collect(*store, config, since_ms, args.by, groups));
  Sums total;
  for (const auto& [key, sums] : groups) Add(total, sums);
  if (args.json) {
    Json out;
    out["since_ms"] = since_ms;
    out["by"] = args.by;
    Json list = Json::array();
    for (const auto& [key, sums] : groups) {
      Json j = {{"key", key}};
      j.update(SumsJson(sums));
      list.push_back(std::move(j));
    }
    out["groups"] = std::move(list);
    out["total"] = SumsJson(total);
    PrintText(stdout, Dump(out) + "\n");
    return OkStatus();
  }
  if (groups.empty()) {
    PrintF(stderr, "no turns recorded%s\n",
           args.since.empty() ? "" : (" in the last " + args.since).c_str());
    return OkStatus();
  }
  const char* kRow = "%-38s %9s %13s %13s %12s %12s %12s\n";
  auto row = [&](const std::string& key, const Sums& s) {
    // Keys are store text (a cwd, a model name): PrintF makes them inert on a terminal.
    PrintF(stdout, kRow, key.c_str(), std::to_string(s.requests).c_str(),
           std::to_string(s.usage.input_tokens).c_str(),
           std::to_string(s.usage.cached_input_tokens).c_str(),
           std::to_string(s.usage.output_tokens).c_str(),
           std::to_string(s.usage.reasoning_output_tokens).c_str(), CostText(s).c_str());
  };
  const std::string head = args.by == "day"       ? "DAY"
                           : args.by == "model"   ? "MODEL"
                           : args.by == "project" ? "PROJECT"
                                                  : "SESSION";
  PrintF(stdout, kRow, head.c_str(), "REQUESTS", "INPUT", "CACHED", "OUTPUT", "REASONING", "COST");
  for (const auto& [key, sums] : groups) row(key, sums);
  row("TOTAL", total);
  if (total.priced_turns < total.turns) {
    PrintText(stderr,
              "cost: no price for some models; add [model_prices.<model>] (input, "
              "cached_input, output in USD per million tokens) to config.toml\n");
  }
  return OkStatus();
}

}  // namespace

void AddSessionsUsageCommand(CLI::App* sessions, const GlobalOptions& global,
                             CommandOutcome& result) {
  auto args = std::make_shared<UsageArgs>();
  CLI::App* usage = sessions->add_subcommand(
      "usage",
      "Tokens and requests the store recorded (every directory), summed by day, model, project "
      "or session, with a cost estimate where [model_prices.<model>] is configured");
  usage->add_option("--since", args->since, "Only turns started in the last AGE (e.g. 7d, 12h)");
  usage->add_option("--by", args->by, "Group by day (default), model, project or session")
      ->check(CLI::IsMember({"day", "model", "project", "session"}));
  usage->add_flag("--json", args->json, "One JSON object (groups and total)");
  usage->callback([&global, args, &result] { result.Set(RunUsage(global, *args)); });
}

}  // namespace codex::cli
