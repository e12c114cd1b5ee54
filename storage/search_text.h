// What `codex sessions search` indexes: the plain text a user saw of an item
// (ARCHITECTURE.md, Data model). Message text (injected context excluded),
// reasoning summaries, a tool call's command or arguments, and a tool
// output's text: JSON is decoded, so "line1\nword" is indexed as two lines
// and `word` is found, never `nword`.
#pragma once

#include <sqlite3.h>

#include <string>
#include <string_view>

#include "base/status.h"
#include "core/item.h"

namespace codex::storage {

// The searchable text of `item`; "" when it has none (context, encrypted
// reasoning, compaction items, checkpoints).
std::string SearchText(const core::Item& item);

// Registers the SQL function codex_search_text(kind, role, body) -> TEXT or
// NULL on `db` (used by migration 0003 to rebuild the index).
void RegisterSearchTextFunction(sqlite3* db);

// The FTS5 MATCH expression for a user query: words are ANDed and matched
// literally, "a phrase" in double quotes matches those words in a row, and a
// word ending in * matches any word it starts (prefix). kInvalidArgument,
// naming the problem, for an empty query, an unbalanced quote or a bare *.
Result<std::string> FtsQueryFromUser(std::string_view query);

}  // namespace codex::storage
