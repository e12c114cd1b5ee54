// Schema migrations: the versioned files migrations/NNNN_name.sql, embedded
// into the binary at build time (storage/embed_migrations.cmake) and applied
// in order, each in its own IMMEDIATE transaction together with its row in
// `schema_migrations(version, name, checksum, applied_at_ms)`.
//
// The checksum is the lowercase hex SHA-256 (OpenSSL) of the file's exact
// text. Opening a database fails with
//   - kDataLoss when an applied migration's recorded checksum differs from the
//     embedded text (someone edited a released migration, or the file is
//     corrupt);
//   - kFailedPrecondition when the database records a version newer than this
//     binary knows ("... was written by a newer codex (schema version N > M);
//     upgrade codex").
// Several processes may migrate the same file at once: each version is
// re-checked inside its write transaction, so it is applied exactly once.
// The rules live once, in RunMigrations over a MigrationTarget: SQLite
// (ApplyMigrations below) and PostgreSQL (postgres_session_store.cc, whose
// files are migrations/postgresql/NNNN_name.sql) apply them alike.
// Functions here never throw.
#pragma once

#include <SQLiteCpp/Database.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codex::storage {

struct Migration {
  int version = 0;        // 1, 2, ... without gaps
  std::string_view name;  // "init" for 0001_init.sql
  std::string_view sql;   // the file's text, byte for byte
};

// One row of schema_migrations.
struct AppliedMigration {
  int version = 0;
  std::string name;
  std::string checksum;
};

// A database the runner migrates. Implementations convert their own errors
// to Status.
class MigrationTarget {
 public:
  virtual ~MigrationTarget() = default;
  // The rows of schema_migrations in version order; empty when the table
  // does not exist yet.
  virtual Result<std::vector<AppliedMigration>> Applied() = 0;
  // In one write transaction: creates schema_migrations when absent and,
  // unless `m.version` is recorded by now (another process may have applied
  // it meanwhile), runs `m.sql` and records (version, name, checksum, now).
  virtual Status Apply(const Migration& m, const std::string& checksum) = 0;
};

// Brings `target` up to the last of `migrations`; `known_version` is the
// newest version this binary has (a recorded version above it is refused).
// `db_name` names the database in messages and must hold no secret.
Status RunMigrations(MigrationTarget& target, const std::string& db_name,
                     const std::vector<Migration>& migrations, int known_version);

// Whether `target` lacks any of `migrations` (RunMigrations would apply
// something), without applying anything or taking a write lock. Errors as
// RunMigrations: a newer schema, a changed migration text.
Result<bool> MigrationsPending(MigrationTarget& target, const std::string& db_name,
                               const std::vector<Migration>& migrations, int known_version);

// Lowercase hex SHA-256 of `sql`.
std::string MigrationChecksum(std::string_view sql);

// The schema version this binary writes (the highest embedded migration).
int LatestSchemaVersion();

// Brings `db` up to the last of `migrations` (ordered by version, starting at
// 1). `path` only names the database in messages. Tests pass a prefix of
// EmbeddedMigrations() to build databases at earlier versions.
Status ApplyMigrations(SQLite::Database& db, const std::string& path,
                       const std::vector<Migration>& migrations);

// The highest version recorded in `db`, 0 for a database without migrations.
Result<int> SchemaVersion(SQLite::Database& db);

namespace internal {
// Defined in the generated migrations_embedded.cc (migrations/*.sql).
const std::vector<Migration>& EmbeddedMigrations();
// Defined in the generated postgres_migrations_embedded.cc
// (migrations/postgresql/*.sql).
const std::vector<Migration>& EmbeddedPostgresMigrations();
}  // namespace internal

}  // namespace codex::storage
