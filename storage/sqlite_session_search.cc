// SqliteSessionStore::Search: full-text search over the items of live sessions.

#include <SQLiteCpp/Statement.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/context_budget.h"
#include "core/uuid.h"
#include "storage/migrations.h"
#include "storage/project_identity.h"
#include "storage/search_rank.h"
#include "storage/search_text.h"
#include "storage/sqlite_session_store.h"
#include "storage/sqlite_store_internal.h"
#include "storage/sqlite_util.h"
#include "storage/store_rules.h"

namespace codex::storage {

using namespace sqlite_internal;  // NOLINT(google-build-using-namespace)

namespace {

// What Search knows of one item of the tree around a page of matches.
struct SearchNode {
  int64_t parent = 0;  // 0: none (a root)
  ItemKind kind = ItemKind::kOther;
  bool real_user = false;         // starts a turn unless inside a replacement history
  int64_t replacement_items = 0;  // of a checkpoint
};

// The turn state after an item on its chain from the root, as
// TurnStartIndexes counts it.
struct TurnState {
  int turns = 0;
  int64_t replacement_left = 0;  // items still inside a checkpoint's replacement history
};

std::string JsonIdArray(const std::vector<int64_t>& ids) {
  std::string out = "[";
  for (int64_t id : ids) {
    if (out.size() > 1) out += ',';
    out += std::to_string(id);
  }
  return out + "]";
}

}  // namespace

// Long (~225 lines) on purpose: one read transaction whose prepared
// statements (ranked matches, chains up, bodies, items down, snippets) and
// caches (turn states, nearest match) are shared by every page of the loop;
// split into functions they would have to be passed around as one state
// object, with no step reusable on its own.
Result<std::vector<SearchHit>> SqliteSessionStore::Search(const SearchQuery& query) {
  ASSIGN_OR_RETURN(const std::string fts, FtsQueryFromUser(query.text));
  if (query.limit <= 0) return InvalidArgumentError("search limit must be at least 1");
  const std::optional<DirScope> scope =
      query.cwd ? std::optional<DirScope>(ScopeOf(*query.cwd)) : std::nullopt;
  return Guarded(path_, "searching", [&]() -> Result<std::vector<SearchHit>> {
    // Best matches first (BM25, storage/search_rank.h; newer first on a tie),
    // a page at a time. A matching item counts when a live session holds it:
    // one whose head is the item or a descendant of it. A fork keeps its
    // parent's cwd, so with a directory only items whose creator is in it
    // (or is gone, leaving forks) can be held there.
    // A later page (--cursor) ranks by the first page's figures, over the
    // items it saw (storage/session_database.h, SearchBasis).
    const std::string ranked_sql =
        std::string("SELECT f.rowid, codex_bm25(items_fts, z.sz, ?4) FROM items_fts AS f") +
        " LEFT JOIN items_fts_docsize AS z ON z.id = f.rowid" +
        (query.cwd ? " JOIN items AS i ON i.id = f.rowid" : "") + " WHERE items_fts MATCH ?1" +
        (query.basis ? " AND f.rowid <= ?5" : "") +
        (query.cwd ? " AND (i.session_id IN (SELECT id FROM sessions"
                     " WHERE cwd = ?2 OR (?3 <> '' AND project = ?3))"
                     " OR i.session_id NOT IN (SELECT id FROM sessions))"
                   : "");
    SearchBasis frozen = query.basis.value_or(SearchBasis{});
    Bm25BasisSlot slot{query.basis ? &frozen : query.basis_out, query.basis.has_value()};
    if (query.basis_out && !query.basis) {
      *query.basis_out = SearchBasis{};
      SQLite::Statement newest(*db_, "SELECT COALESCE(max(id), 0) FROM items");
      if (newest.executeStep()) query.basis_out->max_item_id = newest.getColumn(0).getInt64();
    }
    // Every match scored once; the best are sorted out a page at a time
    // (cheaper than SQLite's sorter, which keeps a B-tree of the best).
    // Prepared by hand: the basis is bound as a pointer, which SQLiteCpp cannot.
    std::vector<std::pair<double, int64_t>> scored;
    {
      sqlite3_stmt* raw = nullptr;
      int rc = sqlite3_prepare_v2(db_->getHandle(), ranked_sql.c_str(), -1, &raw, nullptr);
      std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> q(raw, sqlite3_finalize);
      if (rc == SQLITE_OK) {
        sqlite3_bind_text(raw, 1, fts.data(), static_cast<int>(fts.size()), SQLITE_TRANSIENT);
        if (query.cwd) {
          sqlite3_bind_text(raw, 2, scope->cwd.data(), static_cast<int>(scope->cwd.size()),
                            SQLITE_TRANSIENT);
          sqlite3_bind_text(raw, 3, scope->project.data(), static_cast<int>(scope->project.size()),
                            SQLITE_TRANSIENT);
        }
        if (slot.basis) sqlite3_bind_pointer(raw, 4, &slot, kBm25BasisType, nullptr);
        if (query.basis) sqlite3_bind_int64(raw, 5, query.basis->max_item_id);
        while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
          scored.emplace_back(sqlite3_column_double(raw, 1), sqlite3_column_int64(raw, 0));
        }
      }
      if (rc == SQLITE_MISMATCH) {
        return InvalidArgumentError(
            "this --cursor belongs to another search; run the search again without --cursor");
      }
      if (rc != SQLITE_DONE) {
        // The query is not repeated: it may be kilobytes long.
        return InvalidArgumentError(std::string("cannot search: ") +
                                    sqlite3_errmsg(db_->getHandle()) +
                                    "; use words, \"a phrase\" or a prefix such as build*");
      }
    }
    if (query.after) {
      // The hits after the previous page's last (codex_bm25 is negated).
      const SearchAfter after = *query.after;
      std::erase_if(scored, [&](const std::pair<double, int64_t>& e) {
        return !RanksBefore(after.score, after.item_id, -e.first, e.second);
      });
    }
    const auto better = [](const std::pair<double, int64_t>& a,
                           const std::pair<double, int64_t>& b) {
      return RanksBefore(-a.first, a.second, -b.first, b.second);  // codex_bm25 is negated
    };
    // The chain from a match up to its root, read until it meets an item
    // already read (the shared part of forks and of one session's matches is
    // read once); then the bodies that decide turn starts (user messages,
    // checkpoints).
    SQLite::Statement up(*db_,
                         "WITH RECURSIVE up(id, parent, kind, role) AS (SELECT id, parent_id, kind,"
                         " role FROM items WHERE id = ?1 UNION ALL SELECT i.id, i.parent_id,"
                         " i.kind, i.role FROM up JOIN items AS i ON i.id = up.parent)"
                         " SELECT id, parent, kind, role FROM up");
    SQLite::Statement bodies(*db_,
                             "SELECT id, kind, role, body FROM items"
                             " WHERE id IN (SELECT value FROM json_each(?1))");
    // Every item below the page's matches, once, with the sessions whose
    // head it is.
    SQLite::Statement down(*db_,
                           std::string("WITH RECURSIVE d(id, parent) AS (SELECT value, 0"
                                       " FROM json_each(?1) UNION SELECT i.id, i.parent_id"
                                       " FROM items AS i JOIN d ON i.parent_id = d.id)"
                                       " SELECT d.id, d.parent, s.* FROM d LEFT JOIN (SELECT ") +
                               kSessionCols + " FROM sessions) AS s ON s.head_item_id = d.id");
    SQLite::Statement snippet(*db_,
                              "SELECT snippet(items_fts, 0, '[', ']', '…', 16), i.kind, i.role"
                              " FROM items_fts AS f JOIN items AS i ON i.id = f.rowid"
                              " WHERE items_fts MATCH ?1 AND f.rowid = ?2");
    std::unordered_map<int64_t, SearchNode> nodes;  // the items up from matches
    std::unordered_map<int64_t, TurnState> states;  // memo of TurnState per node
    auto turn_of = [&](int64_t id) -> int {
      std::vector<int64_t> path;  // from `id` up to the first node with a known state
      for (int64_t n = id; n != 0 && !states.count(n);) {
        path.push_back(n);
        auto it = nodes.find(n);
        n = it == nodes.end() ? 0 : it->second.parent;
      }
      for (auto p = path.rbegin(); p != path.rend(); ++p) {
        const SearchNode& node = nodes[*p];
        auto parent = states.find(node.parent);
        TurnState s = parent == states.end() ? TurnState{} : parent->second;
        if (node.kind == ItemKind::kCompactionCheckpoint) {
          s.replacement_left = node.replacement_items;
        } else if (s.replacement_left > 0) {
          --s.replacement_left;
        } else if (node.real_user) {
          ++s.turns;
        }
        states[*p] = s;
      }
      return states[id].turns;
    };

    std::vector<SearchHit> hits;
    size_t offset = 0;
    for (size_t batch = static_cast<size_t>(query.limit);
         hits.size() < static_cast<size_t>(query.limit) && offset < scored.size(); batch *= 2) {
      const size_t end = SortNextPage(scored, offset, batch, better);
      std::vector<int64_t> page;
      std::unordered_map<int64_t, double> score_of;
      for (size_t k = offset; k < end; ++k) {
        page.push_back(scored[k].second);
        score_of[scored[k].second] = scored[k].first;
      }
      offset = end;
      const std::string seeds = JsonIdArray(page);
      std::vector<int64_t> sorted_page = page;
      std::sort(sorted_page.begin(), sorted_page.end());

      // Highest ids first: in one session the newest match's chain holds
      // the older matches, which then need no walk of their own.
      std::vector<int64_t> need_body;
      for (auto seed = sorted_page.rbegin(); seed != sorted_page.rend(); ++seed) {
        if (nodes.count(*seed)) continue;
        up.reset();
        up.bind(1, *seed);
        while (up.executeStep()) {
          const int64_t id = up.getColumn(0).getInt64();
          if (nodes.count(id)) break;
          SearchNode node;
          node.parent = up.getColumn(1).isNull() ? 0 : up.getColumn(1).getInt64();
          node.kind = core::ItemKindFromName(up.getColumn(2).getText());
          if (node.kind == ItemKind::kCompactionCheckpoint ||
              (node.kind == ItemKind::kMessage && up.getColumn(3).getString() == "user")) {
            need_body.push_back(id);
          }
          nodes.emplace(id, node);
        }
      }
      bodies.reset();
      bodies.bind(1, JsonIdArray(need_body));
      while (bodies.executeStep()) {
        Item item;
        item.kind = core::ItemKindFromName(bodies.getColumn(1).getText());
        item.role = bodies.getColumn(2).getString();
        item.body = ReadStoredText(bodies.getColumn(3));
        SearchNode& node = nodes[bodies.getColumn(0).getInt64()];
        if (item.kind == ItemKind::kCompactionCheckpoint) {
          node.replacement_items = CheckpointReplacementItems(item).value_or(0);
        } else {
          node.real_user = IsRealUserMessage(item);
        }
      }

      // Each session whose head lies below a match holds that match and every
      // match between the two. `nearest` is the closest match at or above an
      // item of the walk (0: none), filled in once per item.
      std::unordered_map<int64_t, int64_t> down_parent;
      std::vector<std::pair<int64_t, SessionInfo>> heads;
      down.reset();
      down.bind(1, seeds);
      while (down.executeStep()) {
        const int64_t id = down.getColumn(0).getInt64();
        const int64_t parent = down.getColumn(1).getInt64();
        if (parent != 0) down_parent[id] = parent;
        if (down.getColumn(2).isNull()) continue;  // no session's head
        SessionInfo s = ReadSession(down, 2);
        if (scope && !InScope(s, *scope)) continue;
        heads.emplace_back(id, std::move(s));
      }
      // A head reached from two matches comes once per path; keep it once.
      std::sort(heads.begin(), heads.end(),
                [](const auto& a, const auto& b) { return a.second.id < b.second.id; });
      heads.erase(
          std::unique(heads.begin(), heads.end(),
                      [](const auto& a, const auto& b) { return a.second.id == b.second.id; }),
          heads.end());
      const std::unordered_set<int64_t> is_match(page.begin(), page.end());
      std::unordered_map<int64_t, int64_t> nearest;
      auto nearest_match = [&](int64_t id) -> int64_t {
        std::vector<int64_t> path;
        int64_t found = 0;
        for (int64_t n = id; n != 0;) {
          if (auto it = nearest.find(n); it != nearest.end()) {
            found = it->second;
            break;
          }
          if (is_match.count(n)) {
            found = n;
            nearest[n] = n;
            break;
          }
          path.push_back(n);
          auto p = down_parent.find(n);
          n = p == down_parent.end() ? 0 : p->second;
        }
        for (int64_t n : path) nearest[n] = found;
        return found;
      };
      std::unordered_map<int64_t, std::vector<SearchHit::Where>> holders;
      for (const auto& [head, session] : heads) {
        for (int64_t m = nearest_match(head); m != 0;) {
          holders[m].push_back({session, 0});
          auto p = down_parent.find(m);
          m = p == down_parent.end() ? 0 : nearest_match(p->second);
        }
      }

      for (int64_t id : page) {
        if (hits.size() >= static_cast<size_t>(query.limit)) break;
        auto h = holders.find(id);
        if (h == holders.end()) continue;  // no live session holds it
        SearchHit hit;
        hit.item_id = id;
        hit.score = -score_of[id];
        hit.sessions = std::move(h->second);
        std::sort(hit.sessions.begin(), hit.sessions.end(), [](const auto& a, const auto& b) {
          if (a.session.updated_at_ms != b.session.updated_at_ms) {
            return a.session.updated_at_ms > b.session.updated_at_ms;
          }
          return a.session.id > b.session.id;
        });
        const int turn = turn_of(id);
        for (auto& w : hit.sessions) w.turn = turn;
        hits.push_back(std::move(hit));
      }
    }

    for (SearchHit& hit : hits) {
      snippet.reset();
      snippet.bind(1, fts);
      snippet.bind(2, hit.item_id);
      if (snippet.executeStep()) {
        hit.snippet = snippet.getColumn(0).getString();
        hit.kind = snippet.getColumn(1).getString();
        hit.role = snippet.getColumn(2).getString();
      }
      for (char& c : hit.snippet) {
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
      }
    }
    return hits;
  });
}

}  // namespace codex::storage
