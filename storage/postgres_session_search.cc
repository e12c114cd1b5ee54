// PostgresSessionStore::Search: full-text search over the items of live sessions.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "storage/postgres_session_store.h"
#include "storage/postgres_store_internal.h"
#include "storage/search_rank.h"

namespace codex::storage {

using namespace postgres_internal;  // NOLINT(google-build-using-namespace)

namespace {

// What Search needs to know of items to credit hits to sessions and turns,
// fetched a creator session at a time and kept for one Search call: the
// parent link, and the body of user messages and checkpoints (which decide
// where turns start). Walking these in the client replaces one recursive
// query per hit (each ~10 us of server work per item of the chain).
class ItemLinks {
 public:
  explicit ItemLinks(PgConnection& conn) : conn_(conn) {}

  struct Link {
    std::optional<int64_t> parent;
    ItemKind kind = ItemKind::kMessage;
    std::string role;  // "user" for a user message, else "" (all the turn count asks)
    std::string body;  // user messages and checkpoints only
    std::optional<bool> real_user;
  };

  // What a hit shows (its kind, role and snippet) of an item Load was asked
  // for as a hit: the body as stored.
  struct Shown {
    ItemKind kind = ItemKind::kOther;
    std::string role;
    std::string stored;
  };
  // nullptr when `id` was not loaded as a hit.
  const Shown* ShownRow(int64_t id) const {
    auto it = shown_.find(id);
    return it == shown_.end() ? nullptr : &it->second;
  }

  // nullptr when `id` is not stored.
  Link* Get(int64_t id) {
    auto it = links_.find(id);
    if (it != links_.end()) return &it->second;
    Load("session_key = (SELECT session_key FROM items WHERE id = $1)", {P(id)});
    it = links_.find(id);
    return it == links_.end() ? nullptr : &it->second;
  }

  // Loads the items of these sessions (those not loaded yet) in one query:
  // the sessions a page of hits needs, instead of one query each.
  // `keys`, when given, are the sessions' keys, in the same order: looked
  // up directly instead of through session_keys by id.
  // `hits`: the entries of the page they are loaded for (Load).
  void Prefetch(const std::vector<std::string>& sessions, const std::vector<int64_t>& keys,
                const std::vector<int64_t>& hits) {
    std::vector<std::string> need;
    std::string need_keys = "{";
    for (size_t i = 0; i < sessions.size(); ++i) {
      if (!prefetched_.insert(sessions[i]).second) continue;
      need.push_back(sessions[i]);
      if (keys.size() == sessions.size()) {
        need_keys += (need_keys.size() > 1 ? "," : "") + std::to_string(keys[i]);
      }
    }
    if (need.empty()) return;
    if (keys.size() == sessions.size()) {
      Load("session_key = ANY($1::int[])", {P(need_keys + "}")}, hits);
      return;
    }
    Load("session_key IN (SELECT key FROM session_keys WHERE id = ANY($1::text[]))",
         {P(TextArray(need))}, hits);
  }

  // True when `item` is on the chain from `head` to the root. Parents have
  // smaller ids than their children, so the walk stops below `item`.
  bool Holds(std::optional<int64_t> head, int64_t item) {
    if (!head || *head < item) return false;
    // The walk from each head is kept and resumed: the hits of one session
    // cost one walk of its chain between them, not one per hit.
    Walk& w = walks_[*head];
    if (!w.started) {
      w.started = true;
      w.next = head;
    }
    while (w.next && *w.next >= item) {
      const int64_t cur = *w.next;
      w.seen.insert(cur);
      const Link* l = Get(cur);
      w.next = l ? l->parent : std::nullopt;
    }
    return w.seen.count(item) > 0;
  }

  // The 1-based turn of the chain from the root to `item` that the item
  // belongs to (the TurnStartIndexes rule); 0 before the first turn. The
  // state after each item is kept, so the hits of one chain walk it once
  // between them (a deep search is not one walk to the root per hit).
  int TurnOf(int64_t item) {
    std::vector<int64_t> up;  // from `item` up to the first item with a known state
    std::optional<int64_t> known;
    for (std::optional<int64_t> cur = item; cur;) {
      if (states_.count(*cur)) {
        known = cur;
        break;
      }
      const Link* l = Get(*cur);
      if (!l) break;
      up.push_back(*cur);
      cur = l->parent;
    }
    TurnState s = known ? states_[*known] : TurnState{};
    for (auto it = up.rbegin(); it != up.rend(); ++it) {
      Link& l = *Get(*it);
      if (l.kind == ItemKind::kCompactionCheckpoint) {
        Item checkpoint;
        checkpoint.kind = l.kind;
        checkpoint.body = l.body;
        s.replacement_left =
            static_cast<size_t>(CheckpointReplacementItems(checkpoint).value_or(0));
      } else if (s.replacement_left > 0) {
        --s.replacement_left;
      } else if (l.kind == ItemKind::kMessage && l.role == "user") {
        if (!l.real_user) {
          Item message;
          message.kind = l.kind;
          message.role = "user";
          message.body = l.body;
          l.real_user = IsRealUserMessage(message);
        }
        if (*l.real_user) ++s.turns;
      }
      states_[*it] = s;
    }
    return s.turns;
  }

 private:
  // The items `where` selects: their links first (an index-only scan of
  // items(session_key, id) INCLUDE (parent_id, kind)), then the bodies the
  // turn count reads, of user messages and checkpoints only (other rows'
  // role stays "": only "user" is asked for), in binary (bodies as their
  // bytes, not hex). One query reading both visits every item's row instead
  // of the messages' only: slower from a page of 100 hits on. The second
  // statement also brings the kind, role and stored body of `hits` (the
  // entries of the page these sessions are loaded for), which the page's
  // snippets need: a statement less at the end of the page (Shown).
  void Load(const std::string& where, const std::vector<Param>& params,
            const std::vector<int64_t>& hits = {}) {
    Rows r = conn_.Exec("SELECT id, parent_id, kind::integer FROM items WHERE " + where, params,
                        /*binary_result=*/true);
    std::string wanted = "{";
    for (int i = 0; i < r.size(); ++i) {
      Link l;
      const int64_t id = r.BinInt(i, 0).value_or(0);
      l.parent = r.BinInt(i, 1);
      l.kind = KindFromCode(r.BinInt(i, 2).value_or(0));
      if (l.kind == ItemKind::kMessage || l.kind == ItemKind::kCompactionCheckpoint) {
        wanted += (wanted.size() > 1 ? "," : "") + std::to_string(id);
      }
      links_.emplace(id, std::move(l));
    }
    wanted += "}";
    std::string hit_ids = "{";
    for (int64_t id : hits) {
      if (shown_.count(id)) continue;
      hit_ids += (hit_ids.size() > 1 ? "," : "") + std::to_string(id);
    }
    hit_ids += "}";
    if (wanted.size() == 2 && hit_ids.size() == 2) return;
    // The turn bodies have kind -1 here; the hits, their kind.
    Rows b = conn_.Exec(
        "SELECT id, role, body, -1 FROM items WHERE id = ANY($1::bigint[])"
        " AND ((kind = " +
            KindSql(ItemKind::kMessage) +
            " AND role = 'user') OR kind = " + KindSql(ItemKind::kCompactionCheckpoint) +
            ") UNION ALL SELECT id, role, body, kind::integer FROM items"
            " WHERE id = ANY($2::bigint[])",
        {P(wanted), P(hit_ids)}, /*binary_result=*/true);
    for (int i = 0; i < b.size(); ++i) {
      const int64_t id = b.BinInt(i, 0).value_or(0);
      const int64_t kind = b.BinInt(i, 3).value_or(0);
      if (kind >= 0) {
        shown_[id] = {KindFromCode(kind), b.Str(i, 1), b.Str(i, 2)};
        continue;
      }
      auto it = links_.find(id);
      if (it == links_.end()) continue;
      it->second.role = b.Str(i, 1);
      it->second.body = TextFromStored(b.Str(i, 2), "item " + std::to_string(it->first));
    }
  }

  struct TurnState {
    int turns = 0;
    size_t replacement_left = 0;  // items still inside a checkpoint's replacement history
  };

  PgConnection& conn_;
  std::unordered_map<int64_t, Link> links_;
  std::unordered_map<int64_t, Shown> shown_;
  std::unordered_set<std::string> prefetched_;     // sessions whose items are all in links_
  std::unordered_map<int64_t, TurnState> states_;  // after each item, from the root
  struct Walk {
    bool started = false;
    std::optional<int64_t> next;  // the next item of the chain to visit
    std::unordered_set<int64_t> seen;
  };
  std::unordered_map<int64_t, Walk> walks_;  // by head item
};

}  // namespace

Result<std::vector<SearchHit>> PostgresSessionStore::Search(const SearchQuery& query) {
  // The same tokens, validation and messages as SQLite's (QueryTokensFromUser).
  ASSIGN_OR_RETURN(const pg::TsQuery tsq, pg::TsQueryFromUser(query.text));
  if (query.limit <= 0) return InvalidArgumentError("search limit must be at least 1");
  const std::optional<DirScope> scope =
      query.cwd ? std::optional<DirScope>(ScopeOf(*query.cwd)) : std::nullopt;
  return Read(*conn_, "searching", [&]() -> Result<std::vector<SearchHit>> {
    // The sessions that can hold an item: its creator and every session
    // forked from it, directly or not (also after the creator was removed:
    // forked_from_session stays), plus the lineages cut off by a removed
    // session in the middle (a fork of a removed fork links to nothing
    // live; SQLite finds those by walking items down from the match).
    // Each candidate is checked by walking its chain.
    // For several creators at once ($1, an array of their session keys):
    // a row per creator (its key and id) and candidate, the candidate's
    // columns NULL when none is live; each creator's candidates in
    // kRecentOrder.
    const std::string scope_sql = scope ? " WHERE (cwd = $2 OR ($3 <> '' AND project = $3))" : "";
    const std::string candidates_sql =
        std::string(
            "WITH RECURSIVE c(key, id) AS (SELECT key, id FROM session_keys"
            " WHERE key = ANY($1::int[])),"
            " f(root, id) AS (SELECT seed.root, seed.id FROM"
            " (SELECT c.id AS root, c.id AS id FROM c UNION"
            " SELECT c.id, o.id FROM c, sessions AS o"
            " WHERE o.forked_from_session IS NOT NULL"
            " AND NOT EXISTS (SELECT 1 FROM sessions AS p WHERE p.id = o.forked_from_session))"
            " AS seed UNION SELECT f.root, s.id FROM sessions AS s JOIN f"
            " ON s.forked_from_session = f.id)"
            " SELECT c.key, c.id, s.* FROM c LEFT JOIN (SELECT ") +
        kSessionCols +
        ", ff.root FROM sessions JOIN (SELECT root, id AS fid FROM f) AS ff ON ff.fid = id" +
        scope_sql +
        ") AS s ON s.root = c.id ORDER BY c.key, s.updated_at_ms DESC, s.id COLLATE \"C\" DESC";
    // A store with no fork (no session has forked_from_session, which stays
    // when the parent is removed) has no lineage to follow: the candidates
    // are the creators, found without planning the recursion (0.85 ms of a
    // 20-hit page). Whether it has one is asked with the search's totals.
    bool forks = true;
    // (Each creator's row by its primary key: a join let the planner scan
    // every session, 0.45 against 0.15 ms for 20 creators of 1,000.)
    const std::string creators_sql =
        std::string("SELECT k.key, k.id, s.* FROM session_keys AS k LEFT JOIN LATERAL (SELECT ") +
        kSessionCols + " FROM sessions WHERE id = k.id" +
        (scope ? " AND (cwd = $2 OR ($3 <> '' AND project = $3))" : "") +
        " OFFSET 0) AS s ON true WHERE k.key = ANY($1::int[])";
    std::map<std::string, std::vector<SessionInfo>> candidates;  // by creator session
    std::unordered_map<int64_t, std::string> creator_of;         // session key -> session id
    ItemLinks links(*conn_);
    // The creators' ids, their candidates and the items of every candidate
    // (and the stored rows of `entries`, the page's next entries, that their
    // snippets need), in three queries, for the creators (session keys) not
    // known yet. Without forks each candidate is its creator, whose key the
    // items are then read by (not through session_keys by id).
    auto load = [&](const std::vector<int64_t>& creators, const std::vector<int64_t>& entries) {
      std::string need = "{";
      std::unordered_set<int64_t> asked;
      for (int64_t c : creators) {
        if (creator_of.count(c) || !asked.insert(c).second) continue;
        need += (need.size() > 1 ? "," : "") + std::to_string(c);
      }
      need += "}";
      if (asked.empty()) return;
      std::vector<Param> cp{P(need)};
      if (scope) {
        cp.push_back(P(scope->cwd));
        cp.push_back(P(scope->project));
      }
      Rows r = conn_->Exec(forks ? candidates_sql : creators_sql, cp);
      std::vector<std::string> sessions;
      std::vector<int64_t> keys;  // without forks, each session is its creator: its key is known
      for (int i = 0; i < r.size(); ++i) {
        const std::string creator = r.Str(i, 1);
        if (!creator_of.count(r.Int(i, 0))) {
          creator_of[r.Int(i, 0)] = creator;
          sessions.push_back(creator);
          keys.push_back(r.Int(i, 0));
        }
        std::vector<SessionInfo>& of = candidates[creator];
        if (r.Null(i, 2)) continue;  // no live candidate
        of.push_back(ReadSession(r, i, 2));
        sessions.push_back(of.back().id);
        keys.push_back(r.Int(i, 0));
      }
      links.Prefetch(sessions, forks ? std::vector<int64_t>{} : keys, entries);
    };
    std::vector<SearchHit> hits;
    if (tsq.phrases.empty()) return hits;  // no term has a word: nothing matches
    // BM25 as SQLite's FTS5 computes it (storage/search_rank.h): over the
    // whole index (not the directory asked for, as FTS5), the number of
    // searchable items and their tokens (search_totals, migration 0008) and
    // the number of items holding each phrase. A query of one phrase over
    // every directory has that number as its matches: not counted twice.
    // A later page (--cursor) ranks by the first page's figures, over the
    // items it saw (storage/session_database.h, SearchBasis).
    if (query.basis && query.basis->holding.size() != tsq.phrases.size()) {
      return InvalidArgumentError(
          "this --cursor belongs to another search; run the search again without --cursor");
    }
    const bool count_from_matches = tsq.phrases.size() == 1 && !scope && !query.basis;
    int64_t indexed = 0;
    double avgdl = 1;
    std::vector<int64_t> holding;  // items per phrase
    {
      std::string sql =
          "SELECT t.items, t.tokens,"
          " EXISTS (SELECT 1 FROM sessions WHERE forked_from_session IS NOT NULL)";
      std::vector<Param> params;
      if (query.basis_out && !query.basis) sql += ", (SELECT COALESCE(max(id), 0) FROM items)";
      for (const pg::TsQuery::Phrase& phrase : tsq.phrases) {
        if (count_from_matches || query.basis) break;
        params.push_back(P(phrase.text));
        sql += ", (SELECT count(*) FROM items WHERE tsv @@ $" + std::to_string(params.size()) +
               "::tsquery)";
      }
      // Both totals in one scan of search_totals (a row per session).
      sql +=
          " FROM (SELECT COALESCE(SUM(items), 0) AS items, COALESCE(SUM(tokens), 0) AS tokens"
          " FROM search_totals) AS t";
      Rows t = conn_->Exec(sql, params);
      indexed = t.Int(0, 0);
      avgdl = Bm25AverageSize(indexed, t.Int(0, 1));
      forks = t.Str(0, 2) == "t";
      const int first_count = query.basis_out && !query.basis ? 4 : 3;
      for (size_t i = 0; i < params.size(); ++i) {
        holding.push_back(t.Int(0, static_cast<int>(i) + first_count));
      }
      if (query.basis) {
        indexed = query.basis->rows;
        avgdl = Bm25AverageSize(query.basis->rows, query.basis->tokens);
        holding = query.basis->holding;
      } else if (query.basis_out) {
        *query.basis_out = SearchBasis{};
        query.basis_out->rows = indexed;
        query.basis_out->tokens = t.Int(0, 1);
        query.basis_out->max_item_id = t.Int(0, 3);
      }
    }
    // Every match with its size and, for each phrase, its instances f.
    // A query whose phrases are all one token (words, prefixes: the usual
    // search) has f counted by the server, from functions of the row's
    // positions the term matches: for a prefix ts_rank_cd with every weight
    // 1 (each one-token cover scores 1: the count itself, exact as a
    // float4), for a word ts_rank with its default weights
    // (pg::WordCountOfRank). No tsvector is
    // copied and no position comes to the client. A longer phrase needs
    // its tokens' positions (adjacency, counted here by
    // pg::PhraseFrequencies): setweight marks the query's lexemes (a binary
    // search each), ts_filter keeps the marked ones (a prefix lists the
    // row's own lexemes it matches). A fork keeps its parent's cwd, so with
    // a directory only items whose creator is in it (or is gone, leaving
    // forks) can be held there.
    const bool counted =
        std::all_of(tsq.phrases.begin(), tsq.phrases.end(),
                    [](const pg::TsQuery::Phrase& p) { return p.tokens.size() == 1; });
    std::vector<Param> params{P(tsq.text)};
    // The creator's key, not its id: ids are looked up for the rows that
    // become hits only (a join over every match cost a hash of every session).
    std::string sql = "SELECT i.id, i.session_key, i.search_tokens";
    if (counted) {
      for (const pg::TsQuery::Phrase& phrase : tsq.phrases) {
        params.push_back(P(phrase.text));
        // A word: ts_rank, a function of the count (pg::WordCountOfRank),
        // cheaper for the server than ts_rank_cd; a prefix may match
        // several lexemes, whose ts_rank is not a function of their total.
        sql += std::string(phrase.tokens[0].prefix ? ", ts_rank_cd('{1,1,1,1}', " : ", ts_rank(") +
               "i.tsv, $" + std::to_string(params.size()) + "::tsquery)";
      }
    } else {
      std::vector<std::string> words, prefixes;
      for (const pg::TsQuery::Token& t : tsq.tokens) {
        (t.prefix ? prefixes : words).push_back(t.word);
      }
      params.push_back(P(TextArray(words)));
      std::string marked = "$2::text[]";
      if (!prefixes.empty()) {
        params.push_back(P(TextArray(prefixes)));
        marked +=
            " || ARRAY(SELECT l FROM unnest(tsvector_to_array(i.tsv)) AS l"
            " WHERE l ^@ ANY($3::text[]))";
      }
      sql += ", ts_filter(setweight(i.tsv, 'A', " + marked + "), '{a}')::text";
    }
    sql += " FROM items AS i WHERE i.tsv @@ $1::tsquery";
    if (query.basis) {
      params.push_back(P(std::to_string(query.basis->max_item_id)));
      sql += " AND i.id <= $" + std::to_string(params.size()) + "::bigint";
    }
    if (scope) {
      sql +=
          " AND i.session_key IN (SELECT key FROM session_keys WHERE id IN (SELECT id FROM"
          " sessions WHERE " +
          ScopeSql(params, *scope) + ") OR id NOT IN (SELECT id FROM sessions))";
    }
    // In binary: no number printed by the server and parsed here, 6,000 rows of them for a
    // common word (the tsvector text of the positions path is the same bytes either way).
    Rows q = conn_->Exec(sql, params, /*binary_result=*/true);
    const auto num = [&q](int r, int c) { return q.BinInt(r, c).value_or(0); };
    if (count_from_matches) holding.push_back(q.size());
    if (query.basis_out && !query.basis) query.basis_out->holding = holding;
    std::vector<double> idf;
    for (int64_t n : holding) idf.push_back(Bm25Idf(indexed, n));
    struct Scored {
      double score = 0;
      int64_t id = 0;
      int row = 0;  // in q
    };
    std::vector<Scored> scored;
    scored.reserve(static_cast<size_t>(q.size()));
    std::vector<int> full;  // rows whose tsvector lost positions: counted from the body
    std::vector<double> freq(tsq.phrases.size());
    for (int r = 0; r < q.size(); ++r) {
      const int64_t size = num(r, 2);
      bool lost = false;
      if (counted) {
        for (size_t k = 0; k < freq.size(); ++k) {
          const float value = q.BinFloat(r, 3 + static_cast<int>(k));
          freq[k] = tsq.phrases[k].tokens[0].prefix
                        ? std::round(static_cast<double>(value))
                        : static_cast<double>(pg::WordCountOfRank(value));
        }
        lost = pg::CountsNeedFullCount(size, freq);
      } else {
        const pg::RowLexemes lexemes = pg::ParseTsVector(q.Str(r, 3));
        lost = pg::NeedsFullCount(size, lexemes);
        if (!lost) freq = pg::PhraseFrequencies(lexemes, tsq);
      }
      if (lost) {
        full.push_back(r);
        scored.push_back({0, num(r, 0), r});
        continue;
      }
      scored.push_back({Bm25Score(idf, freq, static_cast<double>(size), avgdl), num(r, 0), r});
    }
    if (!full.empty()) {
      std::string ids = "{";
      for (int r : full) ids += (ids.size() > 1 ? "," : "") + std::to_string(num(r, 0));
      ids += "}";
      Rows b = conn_->Exec(
          "SELECT id, kind::integer, role, body, search_tokens FROM items"
          " WHERE id = ANY($1::bigint[])",
          {P(ids)}, /*binary_result=*/true);
      std::unordered_map<int64_t, double> score_of;
      for (int r = 0; r < b.size(); ++r) {
        const int64_t id = b.BinInt(r, 0).value_or(0);
        Item item;
        item.kind = KindFromCode(b.BinInt(r, 1).value_or(0));
        item.role = b.Str(r, 2);
        item.body = TextFromStored(b.Str(r, 3), "item " + std::to_string(id));
        score_of[id] = Bm25Score(
            idf, pg::PhraseFrequencies(pg::AllLexemes(pg::CleanText(SearchText(item))), tsq),
            static_cast<double>(b.BinInt(r, 4).value_or(0)), avgdl);
      }
      for (Scored& s : scored) {
        if (auto it = score_of.find(s.id); it != score_of.end()) s.score = it->second;
      }
    }
    if (query.after) {
      // The hits after the previous page's last.
      const SearchAfter after = *query.after;
      std::erase_if(scored, [&](const Scored& s) {
        return !RanksBefore(after.score, after.item_id, s.score, s.id);
      });
    }
    const auto better = [](const Scored& a, const Scored& b) {
      return RanksBefore(a.score, a.id, b.score, b.id);
    };
    size_t offset = 0;
    for (size_t batch = static_cast<size_t>(query.limit);
         hits.size() < static_cast<size_t>(query.limit) && offset < scored.size(); batch *= 2) {
      const size_t end = SortNextPage(scored, offset, batch, better);
      int loaded_to = 0;  // entries of this batch whose sessions are loaded
      for (size_t k = offset; k < end && hits.size() < static_cast<size_t>(query.limit); ++k) {
        if (static_cast<int>(k - offset) >= loaded_to) {
          // The next entries' sessions, as many as hits are still wanted (at
          // least 16): most entries become hits.
          const int n = std::max(16, query.limit - static_cast<int>(hits.size()));
          std::vector<int64_t> creators, entries;
          for (size_t j = k; j < std::min(end, k + static_cast<size_t>(n)); ++j) {
            creators.push_back(num(scored[j].row, 1));
            entries.push_back(scored[j].id);
          }
          load(creators, entries);
          loaded_to = static_cast<int>(k - offset) + n;
        }
        SearchHit hit;
        hit.item_id = scored[k].id;
        hit.score = scored[k].score;
        const auto creator = creator_of.find(num(scored[k].row, 1));
        if (creator == creator_of.end()) continue;  // a key without its id: no session
        for (const SessionInfo& session : candidates[creator->second]) {
          if (links.Holds(session.head_item_id, hit.item_id)) hit.sessions.push_back({session, 0});
        }
        if (hit.sessions.empty()) continue;
        const int turn = links.TurnOf(hit.item_id);
        for (auto& w : hit.sessions) w.turn = turn;
        hits.push_back(std::move(hit));
      }
      offset = end;
    }
    // The shown hits' kind, role and snippet: their rows came with their
    // sessions' items (ItemLinks::Load); those that did not (entries whose
    // sessions were loaded for an earlier entry), in one query.
    std::string missing = "{";
    for (const SearchHit& h : hits) {
      if (links.ShownRow(h.item_id)) continue;
      missing += (missing.size() > 1 ? "," : "") + std::to_string(h.item_id);
    }
    missing += "}";
    std::unordered_map<int64_t, ItemLinks::Shown> fetched;
    if (missing.size() > 2) {
      Rows b = conn_->Exec(
          "SELECT id, kind::integer, role, body FROM items WHERE id = ANY($1::bigint[])",
          {P(missing)}, /*binary_result=*/true);
      for (int r = 0; r < b.size(); ++r) {
        fetched[b.BinInt(r, 0).value_or(0)] = {KindFromCode(b.BinInt(r, 1).value_or(0)),
                                               b.Str(r, 2), b.Str(r, 3)};
      }
    }
    for (SearchHit& hit : hits) {
      const ItemLinks::Shown* shown = links.ShownRow(hit.item_id);
      if (!shown) {
        auto it = fetched.find(hit.item_id);
        if (it == fetched.end()) continue;
        shown = &it->second;
      }
      Item item;
      item.kind = shown->kind;
      item.role = shown->role;
      item.body = TextFromStored(shown->stored, "item " + std::to_string(hit.item_id));
      hit.snippet = pg::Snippet(pg::CleanText(SearchText(item)), tsq);
      hit.kind = std::string(core::ItemKindName(item.kind));
      hit.role = shown->role;
    }
    return hits;
  });
}

}  // namespace codex::storage
