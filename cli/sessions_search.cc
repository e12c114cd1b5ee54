#include "cli/sessions_search.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/sha.h"
#include "cli/session_json.h"
#include "cli/sessions_common.h"
#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "storage/search_text.h"

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
  bool cursor_given = false;
};

// A search cursor: where the next page starts and what the first page ranked
// by (storage::SearchBasis), so that the pages list one ranking once whatever
// is stored or removed between them (docs/storage.md, Search):
//   c1.<newest item>.<rows>.<tokens>.<n1>_<n2>...<score bits, hex>.<last item>.<check>
// all numbers in lower-case hex; the check is the start of the SHA-256 of the
// rest with the query, the directory scope and the store, so a cursor of
// another search, directory or store (another backend included), or one cut
// or changed, is refused.
// (storage::kMaxSearchTerms counts of up to 16 digits each and the rest.)
constexpr size_t kMaxCursorBytes = 2048;
constexpr size_t kMaxCursorPhrases = storage::kMaxSearchTerms;

std::string CursorCheck(std::string_view payload, const std::string& text,
                        const std::optional<std::string>& scope, const core::StoreLocation& store) {
  // The words as searched for (folded, punctuation left out): `Heron`
  // continues `heron`; a query that is refused is refused before this counts.
  std::string words;
  if (auto terms = storage::QueryTokensFromUser(text); terms.ok()) {
    for (const auto& phrase : *terms) {
      for (const storage::QueryToken& t : phrase) words += t.word + (t.prefix ? "* " : " ");
      words += '\n';
    }
  } else {
    words = text;
  }
  std::string seed(payload);
  seed += '\n' + words + (scope ? "dir:" + *scope : std::string("all")) + '\n';
  seed += store.kind == core::StoreLocation::Kind::kSqlite
              ? "sqlite:" + store.path
              : "postgresql:" + core::RedactSecrets(store.url, store.url);
  return Sha256Hex(seed).substr(0, 16);
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string EncodeSearchCursor(const storage::SearchBasis& basis, const storage::SearchHit& last,
                               const std::string& text, const std::optional<std::string>& scope,
                               const core::StoreLocation& store) {
  std::string out = "c1." + Hex(static_cast<uint64_t>(basis.max_item_id)) + "." +
                    Hex(static_cast<uint64_t>(basis.rows)) + "." +
                    Hex(static_cast<uint64_t>(basis.tokens)) + ".";
  for (size_t i = 0; i < basis.holding.size(); ++i) {
    out += (i ? "_" : "") + Hex(static_cast<uint64_t>(basis.holding[i]));
  }
  out += "." + Hex(std::bit_cast<uint64_t>(last.score)) + "." +
         Hex(static_cast<uint64_t>(last.item_id));
  return out + "." + CursorCheck(out, text, scope, store);
}

// A cursor cut, changed, made by another search or another codex: nothing of
// it is repeated (it may hold anything a terminal would act on).
Status BadCursor(std::string_view why) {
  return InvalidArgumentError("--cursor " + std::string(why) +
                              "; run the search again without --cursor to start from the first "
                              "page");
}

bool ParseHex(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *out = v;
  return true;
}

Status DecodeSearchCursor(const std::string& cursor, const std::string& text,
                          const std::optional<std::string>& scope, const core::StoreLocation& store,
                          storage::SearchQuery& q) {
  if (cursor.size() > kMaxCursorBytes) {
    return BadCursor("is " + std::to_string(cursor.size()) +
                     " bytes long, longer than any search prints");
  }
  std::vector<std::string_view> parts;
  for (size_t from = 0;;) {
    const size_t dot = cursor.find('.', from);
    parts.push_back(std::string_view(cursor).substr(from, dot - from));
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  constexpr const char* kNotOne =
      "is not one a search printed (cut, changed or from another codex)";
  if (parts.size() != 8 || parts[0] != "c1") return BadCursor(kNotOne);
  const std::string_view payload(cursor.data(), cursor.size() - parts[7].size() - 1);
  if (parts[7] != CursorCheck(payload, text, scope, store)) {
    return BadCursor(
        "belongs to another search (other words, another directory or another store) or was "
        "changed");
  }
  uint64_t max_id = 0, rows = 0, tokens = 0, bits = 0, last = 0;
  storage::SearchBasis basis;
  bool ok = ParseHex(parts[1], &max_id) && ParseHex(parts[2], &rows) &&
            ParseHex(parts[3], &tokens) && ParseHex(parts[5], &bits) && ParseHex(parts[6], &last);
  for (size_t from = 0; ok;) {
    const size_t sep = parts[4].find('_', from);
    uint64_t n = 0;
    ok =
        ParseHex(parts[4].substr(from, sep - from), &n) && basis.holding.size() < kMaxCursorPhrases;
    basis.holding.push_back(static_cast<int64_t>(n));
    if (sep == std::string_view::npos) break;
    from = sep + 1;
  }
  if (!ok) return BadCursor(kNotOne);
  basis.max_item_id = static_cast<int64_t>(max_id);
  basis.rows = static_cast<int64_t>(rows);
  basis.tokens = static_cast<int64_t>(tokens);
  q.basis = std::move(basis);
  q.after = storage::SearchAfter{std::bit_cast<double>(bits), static_cast<int64_t>(last)};
  return OkStatus();
}

Status RunSearch(const GlobalOptions& global, const SearchArgs& args) {
  storage::SearchQuery q;
  for (const auto& w : args.words) q.text += (q.text.empty() ? "" : " ") + w;
  // One more than the page: whether there is a next one.
  q.limit = args.limit + 1;
  ASSIGN_OR_RETURN(auto scope, ScopeDir(args.all, args.cwd));
  q.cwd = scope;
  ASSIGN_OR_RETURN(const core::StoreLocation location, ConfiguredStoreLocation(global));
  storage::SearchBasis basis;
  if (args.cursor_given) {
    RETURN_IF_ERROR(DecodeSearchCursor(args.cursor, q.text, q.cwd, location, q));
    basis = *q.basis;
  } else {
    q.basis_out = &basis;
  }
  ASSIGN_OR_RETURN(auto store, OpenCliStore(location, /*read_only=*/true));
  ASSIGN_OR_RETURN(auto all_hits, store->Search(q));
  const bool more = all_hits.size() > static_cast<size_t>(args.limit);
  if (more) all_hits.resize(static_cast<size_t>(args.limit));
  const std::vector<storage::SearchHit>& hits = all_hits;
  const std::string next_cursor =
      more ? EncodeSearchCursor(basis, hits.back(), q.text, q.cwd, location) : "";
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
    PrintF(stderr, "nothing %smatches '%s'%s\n", args.cursor_given ? "more " : "",
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
  search->add_option("--cursor", search_args->cursor, "Continue from a previous page")
      ->each([search_args](const std::string&) { search_args->cursor_given = true; });
  search->add_flag("--json", search_args->json,
                   "JSON Lines: one matching item per line, then {\"next_cursor\"} when there is "
                   "more");
  search->callback(
      [&global, search_args, &result] { result.Set(RunSearch(global, *search_args)); });
}

}  // namespace codex::cli
