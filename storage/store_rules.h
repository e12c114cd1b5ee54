// Rules and messages both session store backends share (SqliteSessionStore,
// PostgresSessionStore), so they answer alike. Internal to codex_storage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/session_store.h"
#include "core/status.h"
#include "storage/session_database.h"

namespace codex::storage::internal {

// kFailedPrecondition, reason "session_advanced".
Status SessionAdvanced(std::string_view id);
// kNotFound "no session '<id>'; list sessions with ...".
Status UnknownSession(std::string_view id);
core::TurnStatus TurnStatusFromName(std::string_view s);
std::string ToLower(std::string_view s);
std::string_view TrimView(std::string_view s);
// Only hex digits and '-': could be read as a session id prefix.
bool LooksLikeHexPrefix(std::string_view s);
// The title for a session from the first real user message among `items`.
std::string TitleFromItems(const std::vector<ImportedItem>& items);
// A new fork's title until its first own user message names it:
// "fork of <parent title>" (or of the parent id's first 8 characters).
std::string ForkTitle(const core::SessionInfo& parent);
// The opaque keyset cursor of ListSessions: after `s` in newest-first order.
std::string EncodeCursor(const core::SessionInfo& s);
bool DecodeCursor(std::string_view cursor, int64_t* ms, std::string* id);

}  // namespace codex::storage::internal
