// The `session_store` setting: where the sessions live (README, "Session
// store"; ARCHITECTURE.md, "Store backends"). Set by `session_store` in
// config.toml, by CODEX_SESSION_STORE (over the file) or by
// `-c session_store=...` (over both); absent = SQLite at
// $CODEX_HOME/sessions.db.
//
// A PostgreSQL URL may carry a password (postgresql://user:secret@host/db).
// It is passed to libpq and nowhere else: every message that could show the
// URL goes through RedactSecrets, which the store backends and the CLI share.
// libpq's own rules also supply the password from PGPASSWORD or ~/.pgpass.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace codex::core {

struct StoreLocation {
  enum class Kind { kSqlite, kPostgres };
  Kind kind = Kind::kSqlite;
  std::string path;  // kSqlite: the database file (absolute)
  std::string url;   // kPostgres: the URL as given (may hold a password: never print it)
};

// Parses a setting. "" = <codex_home>/sessions.db; "postgresql://..." or
// "postgres://..." = PostgreSQL (libpq URI syntax; port, percent-escapes and
// sslmode are checked here, the rest by libpq at connect); "sqlite:PATH",
// "sqlite://PATH" or a plain PATH (relative to the current directory; "~/"
// expands) = that SQLite file. `source` names where the setting came from
// ("session_store", "CODEX_SESSION_STORE", "--to") in the one-line error,
// which never shows a password.
Result<StoreLocation> ParseStoreLocation(std::string_view setting, const std::string& codex_home,
                                         std::string_view source = "session_store");

// `text` (a URL, a message quoting one, a libpq error) with every password
// replaced by "***": the password part of any scheme://user:password@host
// URL, any `password=...` parameter, and every literal occurrence (raw or
// percent-decoded) of the password of `url` when given.
std::string RedactSecrets(std::string_view text, std::string_view url = {});

// For messages: the SQLite path, or the URL with its password redacted.
std::string DescribeStoreLocation(const StoreLocation& location);

}  // namespace codex::core
