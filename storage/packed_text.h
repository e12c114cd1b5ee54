// How the store keeps the large JSON texts it holds (an item's body, an
// event's payload) on disk: deflate-compressed with a preset dictionary of
// the shapes Codex rollouts repeat on every line (field names, event types),
// when that makes them smaller. Most of a store's bytes are these texts: tool
// outputs and event payloads shrink to a third or less; encrypted reasoning
// (base64 of random bytes) only by the quarter its 6-bit alphabet leaves.
//
// Packed form: byte 0 = kPackedTextDeflateV1, bytes 1..4 = the text's size
// (little endian), then a raw deflate stream made with dictionary 1. The
// dictionary is part of the format: it never changes (a new one would be a
// new first byte). The backends store a packed text as a BLOB (SQLite), so a
// row says by its type whether it is packed.
//
// Why zlib: it is already linked (Debian's zlib1g), its preset dictionary
// gives small texts (a 700-byte event) most of what a trained zstd
// dictionary would, and inflating is a few microseconds per item on resume.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

struct sqlite3;

namespace codex::storage {

inline constexpr unsigned char kPackedTextDeflateV1 = 0x01;

// The packed form of `text`, or nullopt when packing would not save at least
// an eighth of it (short texts, encrypted content): store the text as it is.
std::optional<std::string> PackText(std::string_view text);

// The text `packed` (an output of PackText) was made from; DataLossError
// when it is damaged or of a format this version does not know.
Result<std::string> UnpackText(std::string_view packed);

// Registers, on a SQLite connection, codex_text(x) (x unpacked when it is a
// packed BLOB, else x itself: what a query or a test reads a body or payload
// through) and codex_pack_text(x) (a BLOB when PackText packs the text x, else
// x; migrations/0007 packs older rows with it).
void RegisterPackedTextFunctions(sqlite3* db);

}  // namespace codex::storage
