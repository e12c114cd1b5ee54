#include "storage/store_rules.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "core/item.h"
#include "core/session_lease.h"
#include "core/session_store.h"
#include "core/uuid.h"
#include "storage/project_identity.h"

namespace codex::storage::internal {

using core::SessionInfo;

Status SessionAdvanced(std::string_view id) {
  std::string sid(id);
  Status s = FailedPreconditionError(
      "session " + sid + " was advanced by another process; use 'codex fork " + sid + "'");
  s.WithReason(core::reason::kSessionAdvanced);
  return s;
}

Status UnknownSession(std::string_view id) {
  return NotFoundError("no session '" + std::string(id) +
                       "'; list sessions with 'codex sessions list --all'");
}

Status AmbiguousPrefix(std::string_view key, const std::vector<SessionInfo>& candidates) {
  // On the error's one line: "ID (title), ID (name: title), ...".
  std::string list;
  for (size_t i = 0; i < candidates.size() && i < 10; ++i) {
    const SessionInfo& c = candidates[i];
    list += std::string(i == 0 ? " " : ", ") + c.id + " (" +
            (c.name.empty() ? c.title : c.name + ": " + c.title) + ")";
  }
  if (candidates.size() > 10) list += ", ...";
  Status ambiguous = InvalidArgumentError("session prefix '" + std::string(key) +
                                          "' is ambiguous; give more characters of one of:" + list);
  ambiguous.WithReason(core::reason::kAmbiguousPrefix);
  return ambiguous;
}

std::vector<TreeNode> TreeOrder(SessionInfo root, std::vector<SessionInfo> descendants) {
  std::multimap<std::string, SessionInfo> children;  // keeps the creation order of siblings
  for (SessionInfo& s : descendants) {
    std::string parent = s.forked_from_session;
    children.emplace(std::move(parent), std::move(s));
  }
  std::vector<TreeNode> out;
  std::vector<TreeNode> stack{{std::move(root), 0}};
  while (!stack.empty()) {
    TreeNode node = std::move(stack.back());
    stack.pop_back();
    auto [lo, hi] = children.equal_range(node.session.id);
    std::vector<TreeNode> kids;
    for (auto it = lo; it != hi; ++it) kids.push_back({it->second, node.depth + 1});
    out.push_back(std::move(node));
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(std::move(*it));
  }
  return out;
}

Status CheckImport(const ImportedSession& session) {
  if (!core::LooksLikeUuid(Lower(session.spec.id))) {
    return InvalidArgumentError("imported session id '" + session.spec.id + "' is not a UUID");
  }
  for (const EventRecord& e : session.events) {
    const nlohmann::json payload = nlohmann::json::parse(e.payload_json, nullptr, false);
    if (payload.is_discarded() || !payload.is_object()) {
      return InvalidArgumentError("event '" + e.type + "' payload is not a JSON object");
    }
  }
  return OkStatus();
}

Status CheckExtend(const ImportedSession& session, size_t from_item, size_t from_event) {
  RETURN_IF_ERROR(CheckImport(session));
  if (from_item > session.items.size() || from_event > session.events.size()) {
    return InvalidArgumentError("session " + Lower(session.spec.id) +
                                ": nothing to add past its items and events");
  }
  return OkStatus();
}

Status CheckCopy(const SessionCopy& copy) {
  const std::string sid = Lower(copy.info.id);
  if (!core::LooksLikeUuid(sid)) {
    return InvalidArgumentError("copied session id '" + copy.info.id + "' is not a UUID");
  }
  if (copy.forked_from_index && *copy.forked_from_index >= copy.items.size()) {
    return InvalidArgumentError("session " + sid + ": fork point index is past its items");
  }
  return OkStatus();
}

Status CheckListQuery(const core::ListQuery& query, int64_t* after_ms, std::string* after_id) {
  if (query.limit <= 0) {
    return InvalidArgumentError("list limit must be at least 1, got " +
                                std::to_string(query.limit));
  }
  if (!query.cursor.empty() && !DecodeCursor(query.cursor, after_ms, after_id)) {
    return InvalidArgumentError("invalid cursor '" + query.cursor +
                                "'; pass the value printed by 'codex sessions list'");
  }
  return OkStatus();
}

core::TurnStatus TurnStatusFromName(std::string_view s) {
  if (s == "failed") return core::TurnStatus::kFailed;
  if (s == "interrupted") return core::TurnStatus::kInterrupted;
  return core::TurnStatus::kCompleted;
}

bool LooksLikeHexPrefix(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return false;
  }
  return true;
}

std::string TitleFromItems(const std::vector<ImportedItem>& items) {
  for (const ImportedItem& it : items) {
    // A prompt the person typed; an interactive `!cmd` record names nothing.
    if (IsTypedUserMessage(it.item)) {
      std::string t = TitleFromText(core::MessageText(it.item));
      if (!t.empty()) return t;
    }
  }
  return {};
}

Result<std::optional<int64_t>> ForkHeadAtTurn(const std::string& sid,
                                              const std::vector<core::StoredItem>& history,
                                              int at_turn) {
  const std::vector<size_t> starts = TurnStartIndexes(history);
  const int n = static_cast<int>(starts.size());
  if (n == 0) {
    return InvalidArgumentError("session " + sid + " has no turns yet; fork it without --at-turn");
  }
  if (at_turn < 0 || at_turn > n) {
    return InvalidArgumentError(
        "--at-turn " + std::to_string(at_turn) + " is out of range: " + "session " + sid + " has " +
        std::to_string(n) + " turn" + (n == 1 ? "" : "s") + "; give a number from 0 to " +
        std::to_string(n) + " (0: before the first turn)");
  }
  if (at_turn == 0) {
    // Before turn 1: what precedes its message (the session's context), or
    // nothing when the message starts the chain.
    if (starts[0] == 0) return std::optional<int64_t>();
    return std::optional<int64_t>(history[starts[0] - 1].id);
  }
  const size_t k = static_cast<size_t>(at_turn);
  const size_t last = k < starts.size() ? starts[k] - 1 : history.size() - 1;
  return std::optional<int64_t>(history[last].id);
}

SessionInfo NewFork(const SessionInfo& parent, std::optional<int64_t> head, int64_t now_ms) {
  SessionInfo fork;
  fork.id = core::NewUuidV7();
  fork.head_item_id = head;
  fork.forked_from_session = parent.id;
  fork.forked_from_item = head;
  fork.cwd = parent.cwd;
  fork.host = parent.host;
  fork.project = parent.project;
  fork.model = parent.model;
  fork.provider = parent.provider;
  fork.title =
      TitleFromText("fork of " + (parent.title.empty() ? parent.id.substr(0, 8) : parent.title));
  fork.source = "fork";
  fork.created_at_ms = now_ms;
  fork.updated_at_ms = now_ms;
  return fork;
}

DirScope ScopeOf(std::string_view dir) { return {std::string(dir), ProjectKey(dir)}; }

bool InScope(const SessionInfo& s, const DirScope& scope) {
  return s.cwd == scope.cwd || (!scope.project.empty() && s.project == scope.project);
}

Status RefuseIfLeased(std::string_view id, const std::optional<core::LeaseHolder>& holder,
                      int64_t now_ms) {
  if (!holder || core::LeaseHolderIsGone(*holder, LocalHost(), now_ms)) return OkStatus();
  return core::SessionBusyError(id, *holder, "wait for it to end, then run this again");
}

std::vector<SessionInfo> SkipLeased(std::vector<SessionInfo> selected,
                                    const std::map<std::string, core::LeaseHolder>& leases,
                                    int64_t now_ms, std::vector<BusySession>* busy) {
  std::vector<SessionInfo> free;
  const std::string host = LocalHost();
  for (SessionInfo& s : selected) {
    auto it = leases.find(s.id);
    if (it != leases.end() && !core::LeaseHolderIsGone(it->second, host, now_ms)) {
      if (busy) busy->push_back({std::move(s), it->second});
    } else {
      free.push_back(std::move(s));
    }
  }
  return free;
}

constexpr std::string_view kCursorPrefix = "c1.";

std::string EncodeCursor(const SessionInfo& s) {
  return std::string(kCursorPrefix) + std::to_string(s.updated_at_ms) + "." + s.id;
}

bool DecodeCursor(std::string_view cursor, int64_t* ms, std::string* id) {
  if (cursor.substr(0, kCursorPrefix.size()) != kCursorPrefix) return false;
  cursor.remove_prefix(kCursorPrefix.size());
  const size_t dot = cursor.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot > 19) return false;
  int64_t v = 0;
  for (char c : cursor.substr(0, dot)) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *ms = v;
  *id = std::string(cursor.substr(dot + 1));
  return core::LooksLikeUuid(*id);
}

}  // namespace codex::storage::internal

namespace codex::storage {

Status RemoveCancelledError() {
  return CancelledError(
      "interrupted: nothing was removed (a session's items are removed in one transaction, or "
      "none); run it again to remove it");
}

Status PurgeCancelledError() {
  return CancelledError(
      "interrupted: nothing was removed (a purge removes all of its sessions in one "
      "transaction, or none); run it again to purge");
}

Result<std::optional<std::string>> SessionDatabase::LatestEvent(std::string_view session_id,
                                                                std::string_view type) {
  std::string id(session_id);
  int64_t up_to_ms = INT64_MAX;  // a parent's events count up to its fork's creation
  // A fork tree is finite and acyclic; the bound only guards a damaged store.
  for (int depth = 0; depth < 10000 && !id.empty(); ++depth) {
    ASSIGN_OR_RETURN(std::vector<EventRecord> events, LoadEvents(id));
    for (auto e = events.rbegin(); e != events.rend(); ++e) {
      if (e->type == type && e->created_at_ms <= up_to_ms)
        return std::optional<std::string>(e->payload_json);
    }
    Result<core::SessionInfo> found = FindSession(id);
    // A removed parent leaves its forks' forked_from_session as a record only.
    if (!found.ok() && found.status().code() == StatusCode::kNotFound && depth > 0) break;
    if (!found.ok()) return found.status();
    const core::SessionInfo& info = *found;
    up_to_ms = std::min(up_to_ms, info.created_at_ms);
    id = info.forked_from_session;
  }
  return std::optional<std::string>();
}

}  // namespace codex::storage
