#include "cli/sessions_search.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/json.h"
#include "cli/session_json.h"
#include "cli/sessions_common.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"

namespace codex::cli {

namespace {

using Json = nlohmann::ordered_json;

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

Status RunSearch(const GlobalOptions& global, const SearchArgs& args) {
  storage::SearchQuery q;
  for (const auto& w : args.words) q.text += (q.text.empty() ? "" : " ") + w;
  ASSIGN_OR_RETURN(const int offset, SearchOffset(args.cursor));
  // One more than the page: whether there is a next one.
  q.limit = offset + args.limit + 1;
  ASSIGN_OR_RETURN(auto scope, ScopeDir(args.all, args.cwd));
  q.cwd = scope;
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global, /*read_only=*/true));
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
             Clip(SessionLabel(w.session), 60).c_str(), w.session.archived ? "  (archived)" : "");
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

}  // namespace

void AddSessionsSearchCommand(CLI::App* sessions, const GlobalOptions& global,
                              CommandOutcome& result) {
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
  search->callback(
      [&global, search_args, &result] { result.Set(RunSearch(global, *search_args)); });
}

}  // namespace codex::cli
