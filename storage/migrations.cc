#include "storage/migrations.h"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <set>

#include "base/sha.h"
#include "base/time.h"
#include "storage/sqlite_util.h"

namespace codex::storage {

std::string MigrationChecksum(std::string_view sql) { return Sha256Hex(sql); }

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

// Checks what the database records against `migrations`; adds the applied
// versions to `applied`.
Status Verify(const std::vector<AppliedMigration>& rows, const std::string& db_name,
              const std::vector<Migration>& migrations, int known, std::set<int>* applied) {
  for (const AppliedMigration& row : rows) {
    applied->insert(row.version);
    if (row.version > known) {
      return FailedPreconditionError(
          "database " + db_name + " was written by a newer codex (schema version " +
          std::to_string(row.version) + " > " + std::to_string(known) + "); upgrade codex");
    }
    for (const Migration& m : migrations) {
      if (m.version != row.version) continue;
      if (row.checksum != MigrationChecksum(m.sql)) {
        return DataLossError(
            "database " + db_name + ": migration " + std::to_string(row.version) + " (" +
            std::string(m.name) + ") was applied with a different text (checksum " + row.checksum +
            ", this codex has " + MigrationChecksum(m.sql) +
            "); restore the database from a backup or use the codex that wrote it");
      }
    }
  }
  return OkStatus();
}

class SqliteTarget final : public MigrationTarget {
 public:
  SqliteTarget(SQLite::Database& db, const std::string& path) : db_(db), path_(path) {}

  Result<std::vector<AppliedMigration>> Applied() override {
    return internal::Guarded(
        path_, "checking the schema version", [&]() -> Result<std::vector<AppliedMigration>> {
          std::vector<AppliedMigration> rows;
          if (!HasMigrationsTable(db_)) return rows;
          SQLite::Statement q(db_,
                              "SELECT version, name, checksum FROM schema_migrations"
                              " ORDER BY version");
          while (q.executeStep()) {
            rows.push_back(
                {q.getColumn(0).getInt(), q.getColumn(1).getString(), q.getColumn(2).getString()});
          }
          return rows;
        });
  }

  Status Apply(const Migration& m, const std::string& checksum) override {
    const std::string what =
        "applying migration " + std::to_string(m.version) + "_" + std::string(m.name);
    return internal::WithWriteTransaction(db_, path_, what, [&]() -> Status {
      db_.exec(kCreateTable);
      SQLite::Statement seen(db_, "SELECT 1 FROM schema_migrations WHERE version = ?");
      seen.bind(1, m.version);
      if (seen.executeStep()) return OkStatus();  // applied, possibly by another process
      db_.exec(std::string(m.sql));
      SQLite::Statement record(db_,
                               "INSERT INTO schema_migrations(version, name, checksum, "
                               "applied_at_ms) VALUES (?, ?, ?, ?)");
      record.bind(1, m.version);
      record.bind(2, std::string(m.name));
      record.bind(3, checksum);
      record.bind(4, static_cast<int64_t>(NowMs()));
      record.exec();
      return OkStatus();
    });
  }

 private:
  SQLite::Database& db_;
  const std::string& path_;
};

}  // namespace

Result<int> SchemaVersion(SQLite::Database& db) {
  return internal::Guarded(db.getFilename(), "reading the schema version", [&]() -> Result<int> {
    if (!HasMigrationsTable(db)) return 0;
    SQLite::Statement q(db, "SELECT coalesce(max(version), 0) FROM schema_migrations");
    q.executeStep();
    return q.getColumn(0).getInt();
  });
}

Status RunMigrations(MigrationTarget& target, const std::string& db_name,
                     const std::vector<Migration>& migrations, int known_version) {
  std::set<int> applied;
  {
    ASSIGN_OR_RETURN(const std::vector<AppliedMigration> rows, target.Applied());
    RETURN_IF_ERROR(Verify(rows, db_name, migrations, known_version, &applied));
  }
  bool changed = false;
  for (const Migration& m : migrations) {
    // Only missing versions take the write lock: opening an up-to-date
    // database is read-only.
    if (applied.count(m.version)) continue;
    changed = true;
    RETURN_IF_ERROR(target.Apply(m, MigrationChecksum(m.sql)));
  }
  if (!changed) return OkStatus();
  // Another process may have moved the schema on meanwhile; check once more.
  applied.clear();
  ASSIGN_OR_RETURN(const std::vector<AppliedMigration> rows, target.Applied());
  return Verify(rows, db_name, migrations, known_version, &applied);
}

Result<bool> MigrationsPending(MigrationTarget& target, const std::string& db_name,
                               const std::vector<Migration>& migrations, int known_version) {
  std::set<int> applied;
  ASSIGN_OR_RETURN(const std::vector<AppliedMigration> rows, target.Applied());
  RETURN_IF_ERROR(Verify(rows, db_name, migrations, known_version, &applied));
  return std::any_of(migrations.begin(), migrations.end(),
                     [&](const Migration& m) { return applied.count(m.version) == 0; });
}

Status ApplyMigrations(SQLite::Database& db, const std::string& path,
                       const std::vector<Migration>& migrations) {
  SqliteTarget target(db, path);
  return RunMigrations(target, path, migrations, LatestSchemaVersion());
}

}  // namespace codex::storage
