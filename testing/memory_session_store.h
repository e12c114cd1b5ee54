// MemorySessionStore: a core::SessionStore kept in memory, with the
// contract's compare-and-set on the head and one turn lease at a time (test
// support, never linked into codex). Its state is public so a test can look
// at or tamper with what was stored, as an adversary with the database file
// could. Listing is not modelled (ListSessions returns an empty page,
// LatestSession kNotFound). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/session_store.h"

namespace codex::testing {

class MemorySessionStore final : public core::SessionStore {
 public:
  Result<core::SessionInfo> CreateSession(const core::NewSession& spec) override;
  // kFailedPrecondition (SessionBusyError) while another lease is held.
  Result<std::unique_ptr<core::TurnLease>> AcquireTurnLease(std::string_view session_id) override;
  Result<core::SessionInfo> FindSession(std::string_view id) override;
  Result<core::SessionInfo> LatestSession(const std::optional<std::string>& cwd) override;
  Result<std::vector<core::StoredItem>> LoadTranscript(const core::SessionInfo& session) override;
  Result<std::vector<core::StoredItem>> LoadHistory(const core::SessionInfo& session) override;
  Result<std::vector<int64_t>> Append(std::string_view session_id,
                                      std::optional<int64_t> expected_head,
                                      std::string_view turn_id,
                                      const std::vector<core::Item>& items) override;
  Status MoveHead(std::string_view session_id, std::optional<int64_t> expected_head,
                  std::optional<int64_t> head) override;
  Result<core::ListPage> ListSessions(const core::ListQuery& query) override;
  Status RecordUsage(int64_t item_id, int64_t total_tokens) override;
  Status RecordTurn(const core::TurnRecord& turn) override;
  Status RecordEvent(std::string_view session_id, std::string_view turn_id, std::string_view type,
                     std::string_view payload) override;
  Result<core::SessionInfo> Fork(std::string_view session_id, std::optional<int> turn) override;
  Status SetTitle(std::string_view session_id, std::string_view text) override;

  // The items from the root to `head`, oldest first (checkpoints included).
  std::vector<core::StoredItem> Chain(std::optional<int64_t> head) const;

  std::map<std::string, core::SessionInfo> sessions_;
  std::vector<core::StoredItem> items_;  // items_[id - 1] is the item with that id
  std::vector<core::TurnRecord> turns;
  std::vector<std::string> events;  // the type of each RecordEvent
  int leases_held = 0;
  int titles_set = 0;  // SetTitle calls that found their session
};

}  // namespace codex::testing
