#include "storage/copy_sessions.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "core/session_lease.h"

namespace codex::storage {

namespace {

// Every session of `store`, live and archived, oldest first, each fork after
// the session it was forked from (when that one still exists).
Result<std::vector<core::SessionInfo>> AllSessions(SessionDatabase& store) {
  std::vector<core::SessionInfo> all;
  for (bool archived : {false, true}) {
    core::ListQuery q;
    q.archived = archived;
    q.limit = 500;
    while (true) {
      ASSIGN_OR_RETURN(core::ListPage page, store.ListSessions(q));
      for (auto& s : page.sessions) all.push_back(std::move(s));
      if (page.next_cursor.empty()) break;
      q.cursor = page.next_cursor;
    }
  }
  std::sort(all.begin(), all.end(), [](const core::SessionInfo& a, const core::SessionInfo& b) {
    return a.created_at_ms != b.created_at_ms ? a.created_at_ms < b.created_at_ms : a.id < b.id;
  });
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < all.size(); ++i) index[all[i].id] = i;
  std::vector<core::SessionInfo> ordered;
  ordered.reserve(all.size());
  std::vector<int> state(all.size(), 0);  // 0 new, 1 in progress, 2 placed
  // Iterative: a parent chain may be long.
  for (size_t start = 0; start < all.size(); ++start) {
    std::vector<size_t> stack{start};
    while (!stack.empty()) {
      const size_t i = stack.back();
      if (state[i] == 2) {
        stack.pop_back();
        continue;
      }
      state[i] = 1;
      auto parent = index.find(all[i].forked_from_session);
      if (parent != index.end() && state[parent->second] == 0) {
        stack.push_back(parent->second);
        continue;
      }
      state[i] = 2;  // a cycle (corrupt data) is broken here
      ordered.push_back(all[i]);
      stack.pop_back();
    }
  }
  return ordered;
}

std::vector<int64_t> Ids(const std::vector<core::StoredItem>& items) {
  std::vector<int64_t> ids;
  ids.reserve(items.size());
  for (const auto& it : items) ids.push_back(it.id);
  return ids;
}

Status Differs(const core::SessionInfo& s, const std::string& what) {
  return DataLossError("session " + s.id + " differs in the destination (" + what +
                       "); run the migration again, or compare with 'codex sessions show'");
}

}  // namespace

namespace {

// kFailedPrecondition / kSessionBusy (SessionBusyError) while a live turn
// lease is recorded for `id` in `from`; OK otherwise (no lease, or its
// holder is gone: core/session_lease.h).
Status NoTurnRunning(SessionDatabase& from, const std::string& id) {
  ASSIGN_OR_RETURN(std::optional<core::LeaseHolder> holder, from.CurrentLease(id));
  if (!holder) return OkStatus();
  ASSIGN_OR_RETURN(const int64_t now, from.LeaseNowMs());
  if (core::LeaseHolderIsGone(*holder, core::CurrentProcessHolder().host, now)) return OkStatus();
  return core::SessionBusyError(id, *holder);
}

bool IsBusy(const Status& s) { return s.reason() == core::reason::kSessionBusy; }

}  // namespace

Result<CopyStats> CopyAllSessions(SessionDatabase& from, SessionDatabase& to,
                                  const std::function<void(int64_t, int64_t)>& on_copied,
                                  std::chrono::milliseconds busy_wait,
                                  const core::CancelToken* cancel) {
  ASSIGN_OR_RETURN(std::vector<core::SessionInfo> sessions, AllSessions(from));
  std::set<std::string> parents;
  for (const auto& s : sessions) {
    if (!s.forked_from_session.empty()) parents.insert(s.forked_from_session);
  }
  // For sessions forks hang from: their history ids in the source and the
  // destination, position for position.
  struct Copied {
    std::vector<int64_t> source_ids;
    std::vector<int64_t> dest_ids;
  };
  std::map<std::string, Copied> copied;
  CopyStats stats;
  const auto total = static_cast<int64_t>(sessions.size());
  // Copies `listed` unless a turn runs on it (a turn commits its items one
  // by one; the copy holds whole turns only). false: busy, `busy_status`
  // says why.
  Status busy_status;
  auto copy_one = [&](const core::SessionInfo& listed) -> Result<bool> {
    auto existing = to.FindSession(listed.id);
    if (!existing.ok() && existing.status().code() != StatusCode::kNotFound) {
      return existing.status();
    }
    std::optional<core::SessionInfo> now;
    if (!existing.ok()) {
      // Whole turns only: no turn runs before the read, and none ran during
      // it (still no live lease after it, and the head has not moved). A turn
      // holds its lease from before its first commit to its end.
      Status idle = NoTurnRunning(from, listed.id);
      if (idle.ok()) {
        auto fresh = from.FindSession(listed.id);
        if (!fresh.ok()) {
          if (fresh.status().code() != StatusCode::kNotFound) return fresh.status();
          return true;  // removed meanwhile: nothing to copy
        }
        now = std::move(fresh).value();
      }
      if (!idle.ok()) {
        if (!IsBusy(idle)) return idle;
        busy_status = idle;
        return false;
      }
    }
    const core::SessionInfo& s = now ? *now : listed;
    ASSIGN_OR_RETURN(std::vector<core::StoredItem> history, from.LoadHistory(s));
    if (!existing.ok()) {
      SessionCopy copy;
      copy.info = s;
      std::optional<size_t> fork_index;
      if (s.forked_from_item) {
        for (size_t i = 0; i < history.size(); ++i) {
          if (history[i].id == *s.forked_from_item) fork_index = i;
        }
      }
      size_t first = 0;
      auto parent = copied.find(s.forked_from_session);
      if (fork_index && parent != copied.end()) {
        const Copied& p = parent->second;
        const size_t k = *fork_index;
        bool shared = p.source_ids.size() > k && p.dest_ids.size() == p.source_ids.size();
        for (size_t i = 0; shared && i <= k; ++i) shared = p.source_ids[i] == history[i].id;
        if (shared) {
          copy.base_item_id = p.dest_ids[k];
          copy.forked_from_item = p.dest_ids[k];
          first = k + 1;
        }
      }
      if (!copy.forked_from_item && fork_index) copy.forked_from_index = fork_index;
      copy.items.assign(history.begin() + static_cast<std::ptrdiff_t>(first), history.end());
      ASSIGN_OR_RETURN(copy.turns, from.LoadTurns(s.id));
      ASSIGN_OR_RETURN(copy.events, from.LoadEvents(s.id));
      Status still_idle = NoTurnRunning(from, s.id);
      if (still_idle.ok()) {
        auto after = from.FindSession(s.id);
        if (!after.ok() && after.status().code() != StatusCode::kNotFound) return after.status();
        if (!after.ok()) return true;  // removed meanwhile
        if (after->head_item_id != s.head_item_id || after->updated_at_ms != s.updated_at_ms) {
          still_idle = FailedPreconditionError("session " + s.id + " changed while it was read");
          still_idle.WithReason(core::reason::kSessionBusy);
        }
      }
      if (!still_idle.ok()) {
        if (!IsBusy(still_idle)) return still_idle;
        busy_status = still_idle;
        return false;
      }
      ASSIGN_OR_RETURN(bool added, to.CopySession(copy));
      ++(added ? stats.copied : stats.present);
    } else {
      ++stats.present;
    }
    if (parents.count(s.id) != 0) {
      ASSIGN_OR_RETURN(core::SessionInfo dest, to.FindSession(s.id));
      ASSIGN_OR_RETURN(std::vector<core::StoredItem> dest_history, to.LoadHistory(dest));
      copied[s.id] = Copied{Ids(history), Ids(dest_history)};
    }
    if (on_copied) on_copied(stats.copied + stats.present, total);
    return true;
  };
  // Busy sessions (and forks of them, so that they still share their
  // parent's items) are retried after the others until `busy_wait` is spent.
  const auto deadline = std::chrono::steady_clock::now() + busy_wait;
  std::vector<const core::SessionInfo*> pending;
  for (const auto& s : sessions) pending.push_back(&s);
  while (true) {
    std::vector<const core::SessionInfo*> later;
    std::set<std::string> deferred;
    for (const core::SessionInfo* s : pending) {
      if (cancel != nullptr && cancel->cancelled()) {
        return CancelledError("interrupted after " + std::to_string(stats.copied + stats.present) +
                              " of " + std::to_string(total) + " sessions (" +
                              std::to_string(stats.copied) + " copied, " +
                              std::to_string(stats.present) + " already there)");
      }
      if (deferred.count(s->forked_from_session) != 0) {
        deferred.insert(s->id);
        later.push_back(s);
        continue;
      }
      ASSIGN_OR_RETURN(bool done, copy_one(*s));
      if (!done) {
        deferred.insert(s->id);
        later.push_back(s);
      }
    }
    if (later.empty()) return stats;
    if (std::chrono::steady_clock::now() >= deadline) {
      Status s = FailedPreconditionError(
          std::to_string(later.size()) + " session" + (later.size() == 1 ? "" : "s") +
          " not copied while a turn runs on " + (later.size() == 1 ? "it" : "them") + " (" +
          busy_status.message() + ")");
      s.WithReason(core::reason::kSessionBusy);
      return s;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    pending = std::move(later);
  }
}

Status VerifyCopy(SessionDatabase& from, SessionDatabase& to, StoreCounts* from_counts,
                  StoreCounts* to_counts) {
  ASSIGN_OR_RETURN(std::vector<core::SessionInfo> sessions, AllSessions(from));
  StoreCounts fc;
  StoreCounts tc;
  std::set<int64_t> from_items;
  std::set<int64_t> to_items;
  for (const core::SessionInfo& s : sessions) {
    auto d = to.FindSession(s.id);
    if (!d.ok()) {
      if (d.status().code() == StatusCode::kNotFound) {
        return DataLossError("session " + s.id +
                             " is missing from the destination; run the migration again");
      }
      return d.status();
    }
    if (d->cwd != s.cwd || d->host != s.host || d->project != s.project || d->title != s.title ||
        d->name != s.name || d->model != s.model || d->provider != s.provider ||
        d->source != s.source || d->archived != s.archived || d->created_at_ms != s.created_at_ms ||
        d->updated_at_ms != s.updated_at_ms || d->tokens_used != s.tokens_used ||
        d->forked_from_session != s.forked_from_session ||
        d->forked_from_item.has_value() != s.forked_from_item.has_value()) {
      return Differs(s, "its metadata");
    }
    ASSIGN_OR_RETURN(auto a, from.LoadHistory(s));
    ASSIGN_OR_RETURN(auto b, to.LoadHistory(*d));
    if (a.size() != b.size()) {
      return Differs(s, std::to_string(a.size()) + " items in the source, " +
                            std::to_string(b.size()) + " in the destination");
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].item.body != b[i].item.body || a[i].turn_id != b[i].turn_id ||
          a[i].reported_total_tokens != b[i].reported_total_tokens ||
          a[i].created_at_ms != b[i].created_at_ms) {
        return Differs(s, "item " + std::to_string(i + 1) + " of its history");
      }
      from_items.insert(a[i].id);
      to_items.insert(b[i].id);
    }
    ASSIGN_OR_RETURN(auto ta, from.LoadTurns(s.id));
    ASSIGN_OR_RETURN(auto tb, to.LoadTurns(s.id));
    if (ta.size() != tb.size()) return Differs(s, "its turn records");
    ASSIGN_OR_RETURN(auto ea, from.LoadEvents(s.id));
    ASSIGN_OR_RETURN(auto eb, to.LoadEvents(s.id));
    if (ea.size() != eb.size()) return Differs(s, "its events");
    for (size_t i = 0; i < ea.size(); ++i) {
      if (ea[i].type != eb[i].type || ea[i].payload_json != eb[i].payload_json) {
        return Differs(s, "event " + std::to_string(i + 1));
      }
    }
    ++fc.sessions;
    ++tc.sessions;
    fc.turns += static_cast<int64_t>(ta.size());
    tc.turns += static_cast<int64_t>(tb.size());
    fc.events += static_cast<int64_t>(ea.size());
    tc.events += static_cast<int64_t>(eb.size());
  }
  fc.items = static_cast<int64_t>(from_items.size());
  tc.items = static_cast<int64_t>(to_items.size());
  if (from_counts != nullptr) *from_counts = fc;
  if (to_counts != nullptr) *to_counts = tc;
  return OkStatus();
}

}  // namespace codex::storage
