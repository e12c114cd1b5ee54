// SHA-1 and SHA-256 (FIPS 180-4) as lowercase hex: the content hashes of the
// undo snapshots' blobs, the migrations' checksums and MCP tool-name
// suffixes. Here rather than from libcrypto so that codex links no OpenSSL
// (OpenSSL is loaded only for https, core/http_client.h).
#pragma once

#include <string>
#include <string_view>

namespace codex {

std::string Sha1Hex(std::string_view data);
std::string Sha256Hex(std::string_view data);

}  // namespace codex
