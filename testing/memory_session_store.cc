#include "testing/memory_session_store.h"

#include "core/session_store.h"

namespace codex::testing {

using core::Item;
using core::ItemKind;
using core::SessionInfo;
using core::StoredItem;

namespace {

class Lease final : public core::TurnLease {
 public:
  explicit Lease(int* held) : held_(held) { ++*held_; }
  ~Lease() override { --*held_; }
  const core::LeaseHolder& holder() const override { return holder_; }

 private:
  int* held_;
  core::LeaseHolder holder_;
};

}  // namespace

Result<SessionInfo> MemorySessionStore::CreateSession(const core::NewSession& spec) {
  SessionInfo s;
  s.id = spec.id.empty() ? "session-" + std::to_string(sessions_.size() + 1) : spec.id;
  s.cwd = spec.cwd;
  sessions_[s.id] = s;
  if (!spec.items.empty()) {
    ASSIGN_OR_RETURN(auto ids, Append(s.id, std::nullopt, spec.turn_id, spec.items));
    s.head_item_id = ids.back();
  }
  return s;
}

Result<std::unique_ptr<core::TurnLease>> MemorySessionStore::AcquireTurnLease(std::string_view) {
  if (leases_held > 0) return core::SessionBusyError("s", core::LeaseHolder{});
  return std::unique_ptr<core::TurnLease>(new Lease(&leases_held));
}

Result<SessionInfo> MemorySessionStore::FindSession(std::string_view id) {
  auto it = sessions_.find(std::string(id));
  if (it == sessions_.end()) return NotFoundError("no session");
  return it->second;
}

Result<SessionInfo> MemorySessionStore::LatestSession(const std::optional<std::string>&) {
  return NotFoundError("unused");
}

Result<std::vector<StoredItem>> MemorySessionStore::LoadTranscript(const SessionInfo& s) {
  auto all = Chain(sessions_[s.id].head_item_id);
  std::vector<StoredItem> out;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (it->item.kind == ItemKind::kCompactionCheckpoint) break;
    out.insert(out.begin(), *it);
  }
  return out;
}

Result<std::vector<StoredItem>> MemorySessionStore::LoadHistory(const SessionInfo& s) {
  return Chain(sessions_[s.id].head_item_id);
}

Result<std::vector<int64_t>> MemorySessionStore::Append(std::string_view session_id,
                                                        std::optional<int64_t> expected_head,
                                                        std::string_view,
                                                        const std::vector<Item>& items) {
  SessionInfo& s = sessions_[std::string(session_id)];
  if (s.head_item_id != expected_head) {
    return FailedPreconditionError("advanced").WithReason(core::reason::kSessionAdvanced);
  }
  std::vector<int64_t> ids;
  for (const Item& item : items) {
    StoredItem stored;
    stored.id = static_cast<int64_t>(items_.size()) + 1;
    stored.parent_id = s.head_item_id;
    stored.session_id = std::string(session_id);
    stored.item = item;
    items_.push_back(stored);
    s.head_item_id = stored.id;
    ids.push_back(stored.id);
  }
  return ids;
}

Status MemorySessionStore::MoveHead(std::string_view id, std::optional<int64_t>,
                                    std::optional<int64_t> head) {
  sessions_[std::string(id)].head_item_id = head;
  return OkStatus();
}

Result<core::ListPage> MemorySessionStore::ListSessions(const core::ListQuery&) {
  return core::ListPage{};
}

Status MemorySessionStore::RecordUsage(int64_t item_id, int64_t total_tokens) {
  if (item_id < 1 || static_cast<size_t>(item_id) > items_.size()) return NotFoundError("item");
  items_[static_cast<size_t>(item_id - 1)].reported_total_tokens = total_tokens;
  return OkStatus();
}

Status MemorySessionStore::RecordTurn(const core::TurnRecord& turn) {
  turns.push_back(turn);
  return OkStatus();
}

Status MemorySessionStore::RecordEvent(std::string_view, std::string_view, std::string_view type,
                                       std::string_view) {
  events.emplace_back(type);
  return OkStatus();
}

Result<SessionInfo> MemorySessionStore::Fork(std::string_view id, std::optional<int>) {
  SessionInfo fork = sessions_[std::string(id)];
  fork.forked_from_session = fork.id;
  fork.id = "fork-" + std::to_string(sessions_.size() + 1);
  fork.title = "fork of " + fork.title;
  sessions_[fork.id] = fork;
  return fork;
}

Status MemorySessionStore::SetTitle(std::string_view id, std::string_view text) {
  auto it = sessions_.find(std::string(id));
  if (it == sessions_.end()) return NotFoundError("no session");
  it->second.title = std::string(text);
  ++titles_set;
  return OkStatus();
}

std::vector<StoredItem> MemorySessionStore::Chain(std::optional<int64_t> head) const {
  std::vector<StoredItem> out;
  for (auto id = head; id; id = items_[static_cast<size_t>(*id - 1)].parent_id) {
    out.insert(out.begin(), items_[static_cast<size_t>(*id - 1)]);
  }
  return out;
}

}  // namespace codex::testing
