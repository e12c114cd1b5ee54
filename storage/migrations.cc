#include "storage/migrations.h"

#include <SQLiteCpp/Statement.h>
#include <openssl/evp.h>

#include <set>

#include "storage/sqlite_util.h"

namespace codex::storage {

using internal::NowMs;

std::string MigrationChecksum(std::string_view sql) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(sql.data(), sql.size(), digest, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

int LatestSchemaVersion() {
  const auto& all = internal::EmbeddedMigrations();
  return all.empty() ? 0 : all.back().version;
}

namespace {

constexpr const char* kCreateTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    " version INTEGER PRIMARY KEY,"
    " name TEXT NOT NULL,"
    " checksum TEXT NOT NULL,"
    " applied_at_ms INTEGER NOT NULL)";

bool HasMigrationsTable(SQLite::Database& db) {
  SQLite::Statement q(
      db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='schema_migrations'");
  return q.executeStep();
}

// Checks what `db` records against `migrations`; adds the applied versions to `applied`.
Status Verify(SQLite::Database& db, const std::string& path,
              const std::vector<Migration>& migrations, std::set<int>* applied) {
  if (!HasMigrationsTable(db)) return OkStatus();
  const int known = LatestSchemaVersion();
  SQLite::Statement q(db, "SELECT version, name, checksum FROM schema_migrations ORDER BY version");
  while (q.executeStep()) {
    const int version = q.getColumn(0).getInt();
    applied->insert(version);
    if (version > known) {
      return FailedPreconditionError(
          "database " + path + " was written by a newer codex (schema version " +
          std::to_string(version) + " > " + std::to_string(known) + "); upgrade codex");
    }
    for (const Migration& m : migrations) {
      if (m.version != version) continue;
      const std::string recorded = q.getColumn(2).getString();
      if (recorded != MigrationChecksum(m.sql)) {
        return DataLossError(
            "database " + path + ": migration " + std::to_string(version) + " (" +
            std::string(m.name) + ") was applied with a different text (checksum " + recorded +
            ", this codex has " + MigrationChecksum(m.sql) +
            "); restore the database from a backup or use the codex that wrote it");
      }
    }
  }
  return OkStatus();
}

}  // namespace

Result<int> SchemaVersion(SQLite::Database& db) {
  return internal::Guarded(db.getFilename(), "reading the schema version", [&]() -> Result<int> {
    if (!HasMigrationsTable(db)) return 0;
    SQLite::Statement q(db, "SELECT coalesce(max(version), 0) FROM schema_migrations");
    q.executeStep();
    return q.getColumn(0).getInt();
  });
}

Status ApplyMigrations(SQLite::Database& db, const std::string& path,
                       const std::vector<Migration>& migrations) {
  std::set<int> applied;
  RETURN_IF_ERROR(internal::Guarded(path, "checking the schema version",
                                    [&] { return Verify(db, path, migrations, &applied); }));
  bool changed = false;
  for (const Migration& m : migrations) {
    // Only missing versions take the write lock: opening an up-to-date
    // database is read-only.
    if (applied.count(m.version)) continue;
    changed = true;
    const std::string what =
        "applying migration " + std::to_string(m.version) + "_" + std::string(m.name);
    RETURN_IF_ERROR(internal::WithWriteTransaction(db, path, what, [&]() -> Status {
      db.exec(kCreateTable);
      SQLite::Statement seen(db, "SELECT 1 FROM schema_migrations WHERE version = ?");
      seen.bind(1, m.version);
      if (seen.executeStep()) return OkStatus();  // applied, possibly by another process
      db.exec(std::string(m.sql));
      SQLite::Statement record(db,
                               "INSERT INTO schema_migrations(version, name, checksum, "
                               "applied_at_ms) VALUES (?, ?, ?, ?)");
      record.bind(1, m.version);
      record.bind(2, std::string(m.name));
      record.bind(3, MigrationChecksum(m.sql));
      record.bind(4, static_cast<int64_t>(NowMs()));
      record.exec();
      return OkStatus();
    }));
  }
  if (!changed) return OkStatus();
  // Another process may have moved the schema on meanwhile; check once more.
  applied.clear();
  return internal::Guarded(path, "checking the schema version",
                           [&] { return Verify(db, path, migrations, &applied); });
}

}  // namespace codex::storage
