#include "storage/sqlite_session_store.h"

#include <SQLiteCpp/Statement.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "base/strings.h"
#include "core/context_budget.h"
#include "core/uuid.h"
#include "storage/migrations.h"
#include "storage/new_sqlite_store.h"
#include "storage/project_identity.h"
#include "storage/search_text.h"
#include "storage/sqlite_store_internal.h"
#include "storage/sqlite_util.h"
#include "storage/store_rules.h"

namespace codex::storage {

using namespace sqlite_internal;  // NOLINT(google-build-using-namespace)

namespace {

constexpr size_t kTitleMaxBytes = 80;

// Creates the missing parent directories of `path`, 0700.
Status PrepareDirectory(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (p.has_parent_path() && !std::filesystem::exists(p.parent_path(), ec)) {
    // CODEX_HOME holds private transcripts: a directory we create is 0700.
    std::filesystem::create_directories(p.parent_path(), ec);
    if (!ec) {
      std::filesystem::permissions(p.parent_path(), std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::replace, ec);
    }
    if (ec) {
      return FailedPreconditionError("cannot create directory " + p.parent_path().string() +
                                     " for the sessions database: " + ec.message());
    }
  }
  return OkStatus();
}

// Creates the file with mode 0600 before SQLite sees it (SQLite would honour
// the umask), and tightens an existing one.
Status PrepareFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return FailedPreconditionError("cannot open sessions database " + path + ": " +
                                   std::strerror(errno) + "; check the path and its permissions");
  }
  const int rc = ::fchmod(fd, 0600);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) {
    return FailedPreconditionError("cannot set mode 0600 on " + path + ": " + std::strerror(saved));
  }
  return OkStatus();
}

}  // namespace

std::string_view TurnStatusName(core::TurnStatus status) {
  switch (status) {
    case core::TurnStatus::kCompleted:
      return "completed";
    case core::TurnStatus::kFailed:
      return "failed";
    case core::TurnStatus::kInterrupted:
      return "interrupted";
  }
  return "completed";
}

std::optional<int64_t> CheckpointReplacementItems(const Item& item) {
  if (item.kind != ItemKind::kCompactionCheckpoint) return std::nullopt;
  const nlohmann::json body = nlohmann::json::parse(item.body, nullptr, false);
  if (!body.is_object()) return std::nullopt;
  auto it = body.find("replacement_items");
  if (it == body.end() || !it->is_number_integer()) return std::nullopt;
  return std::max<int64_t>(0, it->get<int64_t>());
}

std::vector<size_t> TurnStartIndexes(const std::vector<StoredItem>& chain) {
  std::vector<size_t> starts;
  size_t replacement_end = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    if (auto n = CheckpointReplacementItems(chain[i].item)) {
      replacement_end = i + 1 + static_cast<size_t>(*n);
      continue;
    }
    if (i >= replacement_end && IsRealUserMessage(chain[i].item)) starts.push_back(i);
  }
  return starts;
}

std::string TitleFromText(std::string_view text) {
  std::string_view line;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    line = Trim(text.substr(0, nl));
    if (!line.empty() || nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  if (line.size() <= kTitleMaxBytes) return std::string(line);
  return std::string(Trim(Utf8Prefix(line, kTitleMaxBytes))) + "…";
}

SqliteSessionStore::SqliteSessionStore(std::string path, std::unique_ptr<SQLite::Database> db,
                                       StoreOptions options,
                                       std::unique_ptr<internal::BusyWait> wait)
    : path_(std::move(path)),
      options_(std::move(options)),
      wait_(std::move(wait)),
      db_(std::move(db)) {}

struct SqliteSessionStore::AppendStatements {
  explicit AppendStatements(SQLite::Database& db)
      : head(db, "SELECT head_item_id, title FROM sessions WHERE id = ?"),
        cas(db,
            "UPDATE sessions SET head_item_id = ?1, updated_at_ms = ?2,"
            " title = CASE WHEN ?3 <> '' AND title = '' THEN ?3 ELSE title END"
            " WHERE id = ?4 AND head_item_id IS ?5"),
        chain(db) {}
  SQLite::Statement head;
  SQLite::Statement cas;
  sqlite_internal::ChainInserter chain;
};

SqliteSessionStore::~SqliteSessionStore() = default;

namespace {

// True when `path` exists but this process cannot write it or its directory
// (a read-only CODEX_HOME): such a database is opened read-only.
bool CannotWrite(const std::string& path) {
  if (::access(path.c_str(), F_OK) != 0) return false;
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  return ::access(path.c_str(), W_OK) != 0 || ::access(dir.c_str(), W_OK) != 0;
}

// A WAL database whose -wal and -shm files are gone (the last writer closed
// cleanly) can only be read by a process that may create them. Another user
// reading a read-only CODEX_HOME cannot, so it opens the file as immutable:
// with no -wal file everything committed is in the main file. (A writer
// starting meanwhile creates a -wal this reader ignores: it sees the state
// of its opening, as any read transaction does.)
bool NeedsImmutable(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path + "-wal", ec)) return false;
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  return ::access(dir.c_str(), W_OK) != 0;
}

// `path` as an SQLite URI filename with the given query.
std::string FileUri(const std::string& path, std::string_view query) {
  std::string out = "file:";
  for (char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#') {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += '%';
      out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xf];
      out += kHex[static_cast<unsigned char>(c) & 0xf];
    } else {
      out += c;
    }
  }
  return out + "?" + std::string(query);
}

}  // namespace

Result<std::unique_ptr<SqliteSessionStore>> SqliteSessionStore::Open(const std::string& path,
                                                                     StoreOptions options) {
  if (path.empty()) return InvalidArgumentError("sessions database path is empty");
  std::error_code dir_ec;
  if (std::filesystem::is_directory(path, dir_ec)) {
    return FailedPreconditionError("sessions database " + path +
                                   " is a directory, not a file; move it aside (mv " + path + " " +
                                   path + ".dir) or point CODEX_HOME or session_store elsewhere");
  }
  const bool asked_read_only = options.read_only;
  if (!options.read_only && CannotWrite(path)) options.read_only = true;
  if (options.read_only) {
    if (::access(path.c_str(), R_OK) != 0) {
      if (errno == ENOENT) {
        return NotFoundError("no sessions database at " + path + " yet (" + std::strerror(errno) +
                             "); run a session first");
      }
      // It is there but not ours to read: another user's CODEX_HOME (the
      // database is created 0600), or a permission changed by hand.
      return FailedPreconditionError("cannot read the sessions database " + path + " (" +
                                     std::strerror(errno) +
                                     "); run codex as the user who owns it, or set CODEX_HOME to "
                                     "a directory of your own");
    }
  } else {
    RETURN_IF_ERROR(PrepareDirectory(path));
    // A first run: the store is made whole beside its name and linked into
    // place (storage/new_sqlite_store.h); what follows then only checks it.
    internal::PlaceNewStore(path);
    RETURN_IF_ERROR(PrepareFile(path));
  }
  auto wait = std::make_unique<internal::BusyWait>();
  wait->timeout_ms = options.busy_timeout_ms;
  wait->notice_ms = options.wait_notice_ms;
  wait->on_wait = options.on_wait;
  wait->path = path;
  std::unique_ptr<SQLite::Database> db;
  try {
    // NOMUTEX: an object is used by one thread at a time (see the header).
    const int flags =
        (options.read_only ? SQLite::OPEN_READONLY : SQLite::OPEN_READWRITE) | SQLite::OPEN_NOMUTEX;
    if (options.read_only && NeedsImmutable(path)) {
      db = std::make_unique<SQLite::Database>(FileUri(path, "immutable=1"),
                                              flags | SQLite::OPEN_URI);
    } else {
      db = std::make_unique<SQLite::Database>(path, flags);
    }
    internal::InstallBusyWait(*db, wait.get());
    RETURN_IF_ERROR(internal::RegisterStoreFunctions(db->getHandle()));
    if (!options.read_only) {
      // Switching a new file to WAL needs a moment of exclusive access. SQLite
      // answers SQLITE_BUSY at once, without calling the busy handler, when
      // another process opening the same new file holds its shared lock (a
      // lock upgrade that could deadlock), so the wait is ours: retry until
      // the busy timeout.
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(options.busy_timeout_ms);
      for (int attempt = 0;; ++attempt) {
        try {
          db->exec("PRAGMA journal_mode = WAL");
          break;
        } catch (const std::exception& e) {
          if (!internal::IsBusy(e) || std::chrono::steady_clock::now() >= deadline) throw;
          std::this_thread::sleep_for(std::chrono::milliseconds(attempt < 10 ? 1 + attempt : 20));
        }
      }
      db->exec("PRAGMA synchronous = NORMAL");
    }
    db->exec("PRAGMA foreign_keys = ON");
    // Reads through a memory map skip a syscall per page (resume speed).
    db->exec("PRAGMA mmap_size = 268435456");
  } catch (const std::exception& e) {
    return internal::StatusFromException(e, path, "opening");
  }
  if (options.read_only) {
    ASSIGN_OR_RETURN(int version, SchemaVersion(*db));
    if (version > LatestSchemaVersion()) {
      return FailedPreconditionError(
          "sessions database " + path + " was written by a newer codex (schema version " +
          std::to_string(version) + " > " + std::to_string(LatestSchemaVersion()) +
          "); upgrade codex (a database is never downgraded)");
    }
    if (version < LatestSchemaVersion()) {
      // Asked to read a database that is ours to write (an older schema, or
      // a 0-byte file): bring it up to date first, as any writer would.
      if (asked_read_only && !CannotWrite(path)) {
        db.reset();
        StoreOptions writable = options;
        writable.read_only = false;
        ASSIGN_OR_RETURN(auto upgraded, Open(path, writable));
        upgraded.reset();
        return Open(path, std::move(options));
      }
      std::error_code size_ec;
      if (version == 0 && std::filesystem::file_size(path, size_ec) == 0 && !size_ec) {
        return FailedPreconditionError(
            "sessions database " + path +
            " is an empty file (0 bytes) that this user cannot write; remove it, or run codex "
            "as its owner, to start a store there");
      }
      return FailedPreconditionError(
          "sessions database " + path + " has schema version " + std::to_string(version) +
          " and this codex needs " + std::to_string(LatestSchemaVersion()) +
          ", but it is read-only; run codex once with write access to " + path + " to upgrade it");
    }
  } else {
    RETURN_IF_ERROR(ApplyMigrations(*db, path, internal::EmbeddedMigrations()));
  }
  return std::unique_ptr<SqliteSessionStore>(
      new SqliteSessionStore(path, std::move(db), std::move(options), std::move(wait)));
}

Result<std::unique_ptr<SqliteSessionStore>> OpenSessionStore(const std::string& codex_home,
                                                             StoreOptions options) {
  if (codex_home.empty()) return InvalidArgumentError("CODEX_HOME is empty; set it or unset it");
  return SqliteSessionStore::Open((std::filesystem::path(codex_home) / "sessions.db").string(),
                                  std::move(options));
}

Result<SessionInfo> SqliteSessionStore::GetById(std::string_view id) {
  SQLite::Statement q(*db_, std::string("SELECT ") + kSessionCols + " FROM sessions WHERE id = ?");
  q.bind(1, std::string(id));
  if (!q.executeStep()) return UnknownSession(id);
  return ReadSession(q);
}

Result<SessionInfo> SqliteSessionStore::CreateSession(const core::NewSession& spec) {
  SessionInfo s;
  s.id = spec.id.empty() ? core::NewUuidV7() : Lower(spec.id);
  if (!core::LooksLikeUuid(s.id)) {
    return InvalidArgumentError("session id '" + spec.id + "' is not a UUID");
  }
  s.cwd = spec.cwd;
  s.host = spec.host.empty() ? LocalHost() : spec.host;
  s.project = ProjectKey(s.cwd);
  s.model = spec.model;
  s.provider = spec.provider;
  s.title = spec.title;
  s.source = spec.source.empty() ? "exec" : spec.source;
  s.forked_from_session = spec.parent_session;
  s.created_at_ms = spec.created_at_ms != 0 ? spec.created_at_ms : Now();
  s.updated_at_ms = s.created_at_ms;
  return WithWriteTransaction(*db_, path_, "creating a session", [&]() -> Result<SessionInfo> {
    SQLite::Statement exists(*db_, "SELECT 1 FROM sessions WHERE id = ?");
    exists.bind(1, s.id);
    if (exists.executeStep()) {
      return InvalidArgumentError("session " + s.id + " already exists");
    }
    SQLite::Statement q(*db_,
                        "INSERT INTO sessions(id, cwd, model, provider, title, source, "
                        "created_at_ms, updated_at_ms, host, project, forked_from_session)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    q.bind(1, s.id);
    q.bind(2, s.cwd);
    q.bind(3, s.model);
    q.bind(4, s.provider);
    q.bind(5, s.title);
    q.bind(6, s.source);
    q.bind(7, s.created_at_ms);
    q.bind(8, s.updated_at_ms);
    q.bind(9, s.host);
    q.bind(10, s.project);
    if (spec.parent_session.empty()) {
      q.bind(11);
    } else {
      q.bind(11, spec.parent_session);
    }
    q.exec();
    if (!spec.items.empty()) {
      std::vector<ImportedItem> batch;
      batch.reserve(spec.items.size());
      for (const Item& item : spec.items) batch.push_back({spec.turn_id, s.created_at_ms, item});
      const std::vector<int64_t> ids = InsertChain(*db_, s.id, std::nullopt, batch);
      s.head_item_id = ids.back();
      if (s.title.empty()) s.title = TitleFromItems(batch);
      SQLite::Statement head(*db_, "UPDATE sessions SET head_item_id = ?, title = ? WHERE id = ?");
      head.bind(1, ids.back());
      head.bind(2, s.title);
      head.bind(3, s.id);
      head.exec();
    }
    return s;
  });
}

namespace {

// The lease's own connection.
std::unique_ptr<SQLite::Database> OpenLeaseConnection(const std::string& path,
                                                      internal::BusyWait* wait) {
  auto db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX);
  internal::InstallBusyWait(*db, wait);
  return db;
}

// Before the lease connection's first statement (on its thread: the pragma
// reads the schema, which the first statement would read anyway, so the
// turn's start does not wait for it): synchronous = NORMAL, as the store's.
// Its heartbeats and the row's deletion at the end of a turn then sync
// nothing (SQLite's default, FULL, synced the WAL and, at its first sync,
// the directory: two syncs on the way out of every turn). None of them needs
// to survive a power cut: a row left behind names a process that is gone,
// and the next turn takes it over (LeaseHolderIsGone); what the turn
// committed is made durable by the last connection's checkpoint at close,
// which covers this connection's frames too (one WAL).
void UseNormalSync(SQLite::Database& db, bool& done) {
  if (done) return;
  db.exec("PRAGMA synchronous = NORMAL");
  done = true;
}

// A held lease: a thread with its own connection refreshes the heartbeat
// every `heartbeat_ms`; the destructor stops it and deletes the row. The
// connection is opened here, before the thread starts, so the thread touches
// SQLite only at its first tick: a fork() right after AcquireTurnLease (tests
// do) cannot inherit a SQLite mutex that thread holds mid-open.
class SqliteTurnLease final : public core::TurnLease {
 public:
  SqliteTurnLease(std::string path, std::string session_id, std::string token,
                  core::LeaseHolder holder, int64_t heartbeat_ms, const Clock& clock)
      : clock_(clock),
        path_(std::move(path)),
        session_id_(std::move(session_id)),
        token_(std::move(token)),
        holder_(std::move(holder)),
        heartbeat_ms_(heartbeat_ms) {
    wait_.timeout_ms = 5'000;
    try {
      db_ = OpenLeaseConnection(path_, &wait_);
    } catch (const std::exception&) {
      db_.reset();  // no heartbeat; the row is still deleted at the end
    }
    thread_ = std::thread([this] { Run(); });
  }
  ~SqliteTurnLease() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  const core::LeaseHolder& holder() const override { return holder_; }

 private:
  void Run() {
    std::unique_ptr<SQLite::Database>& db = db_;
    internal::BusyWait& wait = wait_;
    bool normal_sync = false;
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(heartbeat_ms_), [this] { return stop_; });
      if (stop_ || !db) break;
      lock.unlock();
      try {
        UseNormalSync(*db, normal_sync);
        SQLite::Statement q(*db,
                            "UPDATE session_leases SET heartbeat_at_ms = ?"
                            " WHERE session_id = ? AND token = ?");
        q.bind(1, clock_.NowMs());
        q.bind(2, session_id_);
        q.bind(3, token_);
        q.exec();
      } catch (const std::exception&) {
        // A missed heartbeat is retried at the next tick.
      }
      lock.lock();
    }
    lock.unlock();
    try {
      if (!db) db = OpenLeaseConnection(path_, &wait);
      UseNormalSync(*db, normal_sync);
      SQLite::Statement q(*db, "DELETE FROM session_leases WHERE session_id = ? AND token = ?");
      q.bind(1, session_id_);
      q.bind(2, token_);
      q.exec();
    } catch (const std::exception&) {
      // Left behind, the row names this process: the next turn (here, or
      // anywhere once this process is gone) takes it over.
    }
  }

  const Clock& clock_;  // the heartbeat's time; outlives the lease (StoreOptions::clock)
  std::string path_;
  std::string session_id_;
  std::string token_;
  core::LeaseHolder holder_;
  int64_t heartbeat_ms_;
  internal::BusyWait wait_;
  std::unique_ptr<SQLite::Database> db_;  // used by the thread only once it runs
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

Result<std::optional<core::LeaseHolder>> SqliteSessionStore::CurrentLease(
    std::string_view session_id) {
  const std::string sid(session_id);
  return Guarded(path_, "reading the lease of " + sid,
                 [&]() -> Result<std::optional<core::LeaseHolder>> { return LeaseRow(*db_, sid); });
}

Result<int64_t> SqliteSessionStore::LeaseNowMs() { return Now(); }

Result<std::unique_ptr<core::TurnLease>> SqliteSessionStore::AcquireTurnLease(
    std::string_view session_id) {
  const std::string sid(session_id);
  if (options_.read_only) {
    return FailedPreconditionError("sessions database " + path_ +
                                   " is read-only; a turn cannot be recorded");
  }
  core::LeaseHolder me = core::CurrentProcessHolder();
  const std::string token = core::NewUuidV7();
  Status taken = WithWriteTransaction(*db_, path_, "taking the lease of " + sid, [&]() -> Status {
    const int64_t now = Now();
    SQLite::Statement cur(*db_,
                          "SELECT pid, host, process_start, started_at_ms, heartbeat_at_ms"
                          " FROM session_leases WHERE session_id = ?");
    cur.bind(1, sid);
    if (cur.executeStep()) {
      const core::LeaseHolder other = ReadLease(cur);
      // One process runs one turn per session at a time: a row naming this
      // very process is a leftover of an earlier turn of ours.
      const bool ours =
          other.pid == me.pid && other.host == me.host && other.process_start == me.process_start;
      if (!ours && !core::LeaseHolderIsGone(other, me.host, now)) {
        return core::SessionBusyError(sid, other);
      }
    }
    cur.reset();
    me.started_at_ms = now;
    me.heartbeat_at_ms = now;
    SQLite::Statement q(*db_,
                        "INSERT OR REPLACE INTO session_leases(session_id, token, pid, host,"
                        " process_start, started_at_ms, heartbeat_at_ms)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?)");
    q.bind(1, sid);
    q.bind(2, token);
    q.bind(3, me.pid);
    q.bind(4, me.host);
    q.bind(5, me.process_start);
    q.bind(6, me.started_at_ms);
    q.bind(7, me.heartbeat_at_ms);
    q.exec();
    return OkStatus();
  });
  RETURN_IF_ERROR(taken);
  return std::unique_ptr<core::TurnLease>(new SqliteTurnLease(
      path_, sid, token, me, options_.lease_heartbeat_ms, ClockOr(options_.clock)));
}

Result<std::vector<int64_t>> SqliteSessionStore::Append(std::string_view session_id,
                                                        std::optional<int64_t> expected_head,
                                                        std::string_view turn_id,
                                                        const std::vector<Item>& items) {
  const std::string sid(session_id);
  const int64_t now = Now();
  std::vector<ImportedItem> batch;
  batch.reserve(items.size());
  for (const Item& item : items) batch.push_back({std::string(turn_id), now, item});
  return WithWriteTransaction(
      *db_, path_, "appending to session " + sid, [&]() -> Result<std::vector<int64_t>> {
        if (!append_) append_ = std::make_unique<AppendStatements>(*db_);
        SQLite::Statement& cur = append_->head;
        SQLite::Statement& cas = append_->cas;
        // Reset on every way out: a statement left on a row would hold its
        // read snapshot open until the next append.
        struct ResetAtEnd {
          SQLite::Statement& q;
          ~ResetAtEnd() { q.tryReset(); }
        } reset_cur{cur}, reset_cas{cas};
        cur.reset();
        cur.bind(1, sid);
        if (!cur.executeStep()) return UnknownSession(sid);
        if (OptionalInt(cur.getColumn(0)) != expected_head) return SessionAdvanced(sid);
        const bool needs_title = cur.getColumn(1).getString().empty();
        cur.reset();
        if (batch.empty()) return std::vector<int64_t>{};

        std::vector<int64_t> ids = append_->chain.Insert(sid, expected_head, batch);
        std::string title = needs_title ? TitleFromItems(batch) : std::string();
        cas.reset();
        cas.bind(1, ids.back());
        cas.bind(2, now);
        cas.bind(3, title);
        cas.bind(4, sid);
        BindOptional(cas, 5, expected_head);
        if (cas.exec() == 0) return SessionAdvanced(sid);  // rolls back the inserts
        return ids;
      });
}

Status SqliteSessionStore::MoveHead(std::string_view session_id,
                                    std::optional<int64_t> expected_head,
                                    std::optional<int64_t> new_head) {
  const std::string sid(session_id);
  return WithWriteTransaction(*db_, path_, "moving the head of " + sid, [&]() -> Status {
    SQLite::Statement cur(*db_, "SELECT head_item_id FROM sessions WHERE id = ?");
    cur.bind(1, sid);
    if (!cur.executeStep()) return UnknownSession(sid);
    if (OptionalInt(cur.getColumn(0)) != expected_head) return SessionAdvanced(sid);
    cur.reset();
    if (new_head) {
      SQLite::Statement item(*db_, "SELECT 1 FROM items WHERE id = ?");
      item.bind(1, *new_head);
      if (!item.executeStep()) {
        return InvalidArgumentError("cannot move session " + sid + " to item " +
                                    std::to_string(*new_head) + ": no such item");
      }
    }
    SQLite::Statement cas(*db_,
                          "UPDATE sessions SET head_item_id = ?, updated_at_ms = ?"
                          " WHERE id = ? AND head_item_id IS ?");
    BindOptional(cas, 1, new_head);
    cas.bind(2, Now());
    cas.bind(3, sid);
    BindOptional(cas, 4, expected_head);
    if (cas.exec() == 0) return SessionAdvanced(sid);
    return OkStatus();
  });
}

Status SqliteSessionStore::RecordUsage(int64_t item_id, int64_t total_tokens) {
  return WithWriteTransaction(*db_, path_, "recording usage", [&]() -> Status {
    SQLite::Statement q(*db_,
                        "INSERT INTO item_usage(item_id, total_tokens) VALUES (?, ?)"
                        " ON CONFLICT(item_id) DO UPDATE SET total_tokens = excluded.total_tokens");
    q.bind(1, item_id);
    q.bind(2, total_tokens);
    q.exec();
    return OkStatus();
  });
}

Status SqliteSessionStore::RecordTurn(const core::TurnRecord& turn) {
  return WithWriteTransaction(*db_, path_, "recording a turn", [&]() -> Status {
    SQLite::Statement exists(*db_, "SELECT 1 FROM sessions WHERE id = ?");
    exists.bind(1, turn.session_id);
    if (!exists.executeStep()) return UnknownSession(turn.session_id);
    int64_t previous_total = 0;
    SQLite::Statement old(*db_,
                          "SELECT total_tokens FROM turns WHERE session_id = ? AND turn_id = ?");
    old.bind(1, turn.session_id);
    old.bind(2, turn.turn_id);
    if (old.executeStep()) previous_total = old.getColumn(0).getInt64();
    SQLite::Statement q(
        *db_,
        "INSERT INTO turns(session_id, turn_id, status, error, input_tokens, cached_input_tokens,"
        " output_tokens, reasoning_output_tokens, total_tokens, started_at_ms, ended_at_ms)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT(session_id, turn_id) DO UPDATE SET status = excluded.status,"
        " error = excluded.error, input_tokens = excluded.input_tokens,"
        " cached_input_tokens = excluded.cached_input_tokens,"
        " output_tokens = excluded.output_tokens,"
        " reasoning_output_tokens = excluded.reasoning_output_tokens,"
        " total_tokens = excluded.total_tokens, started_at_ms = excluded.started_at_ms,"
        " ended_at_ms = excluded.ended_at_ms");
    BindTurnRow(q, turn.session_id, turn);
    q.exec();
    // Recording a turn again replaces its usage rather than counting it twice.
    SQLite::Statement add(*db_, "UPDATE sessions SET tokens_used = tokens_used + ? WHERE id = ?");
    add.bind(1, turn.usage.total_tokens - previous_total);
    add.bind(2, turn.session_id);
    add.exec();
    return OkStatus();
  });
}

Status SqliteSessionStore::RecordEvent(std::string_view session_id, std::string_view turn_id,
                                       std::string_view type, std::string_view payload_json) {
  const nlohmann::json payload = nlohmann::json::parse(payload_json, nullptr, false);
  if (payload.is_discarded() || !payload.is_object()) {
    return InvalidArgumentError("event '" + std::string(type) + "' payload is not a JSON object");
  }
  const std::string sid(session_id);
  return WithWriteTransaction(*db_, path_, "recording an event", [&]() -> Status {
    SQLite::Statement exists(*db_, "SELECT 1 FROM sessions WHERE id = ?");
    exists.bind(1, sid);
    if (!exists.executeStep()) return UnknownSession(sid);
    SQLite::Statement q(*db_,
                        "INSERT INTO events(session_id, turn_id, type, payload, created_at_ms)"
                        " VALUES (?, ?, ?, ?, ?)");
    q.bind(1, sid);
    q.bind(2, std::string(turn_id));
    q.bind(3, std::string(type));
    BindStoredText(q, 4, std::string(payload_json));
    q.bind(5, Now());
    q.exec();
    return OkStatus();
  });
}

Result<SessionInfo> SqliteSessionStore::Fork(std::string_view session_id,
                                             std::optional<int> at_turn) {
  const std::string sid(session_id);
  return WithWriteTransaction(*db_, path_, "forking " + sid, [&]() -> Result<SessionInfo> {
    ASSIGN_OR_RETURN(SessionInfo parent, GetById(sid));
    std::optional<int64_t> head = parent.head_item_id;
    if (at_turn) {
      ASSIGN_OR_RETURN(std::vector<StoredItem> history, LoadHistory(parent));
      ASSIGN_OR_RETURN(head, ForkHeadAtTurn(sid, history, *at_turn));
    }
    SessionInfo fork = NewFork(parent, head, Now());
    SQLite::Statement q(*db_,
                        "INSERT INTO sessions(id, head_item_id, forked_from_session,"
                        " forked_from_item, cwd, model, provider, title, source, created_at_ms,"
                        " updated_at_ms, host, project) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                        " ?, ?)");
    q.bind(1, fork.id);
    BindOptional(q, 2, fork.head_item_id);
    q.bind(3, fork.forked_from_session);
    BindOptional(q, 4, fork.forked_from_item);
    q.bind(5, fork.cwd);
    q.bind(6, fork.model);
    q.bind(7, fork.provider);
    q.bind(8, fork.title);
    q.bind(9, fork.source);
    q.bind(10, fork.created_at_ms);
    q.bind(11, fork.updated_at_ms);
    q.bind(12, fork.host);
    q.bind(13, fork.project);
    q.exec();
    return fork;
  });
}

Status SqliteSessionStore::SetTitle(std::string_view session_id, std::string_view text) {
  const std::string sid(session_id);
  const std::string title = TitleFromText(text);
  return WithWriteTransaction(*db_, path_, "setting the title of " + sid, [&]() -> Status {
    SQLite::Statement q(*db_, "UPDATE sessions SET title = ? WHERE id = ?");
    q.bind(1, title);
    q.bind(2, sid);
    if (q.exec() == 0) return UnknownSession(sid);
    return OkStatus();
  });
}

Status SqliteSessionStore::Archive(std::string_view id) {
  const std::string sid(id);
  return WithWriteTransaction(*db_, path_, "archiving " + sid, [&]() -> Status {
    // The write lock held since BEGIN IMMEDIATE keeps new leases off until commit.
    RETURN_IF_ERROR(RefuseIfLeased(sid, LeaseRow(*db_, sid), Now()));
    SQLite::Statement q(*db_, "UPDATE sessions SET archived = 1 WHERE id = ?");
    q.bind(1, sid);
    if (q.exec() == 0) return UnknownSession(sid);
    return OkStatus();
  });
}

Status SqliteSessionStore::Unarchive(std::string_view id) {
  const std::string sid(id);
  return WithWriteTransaction(*db_, path_, "unarchiving " + sid, [&]() -> Status {
    SQLite::Statement q(*db_, "UPDATE sessions SET archived = 0 WHERE id = ?");
    q.bind(1, sid);
    if (q.exec() == 0) return UnknownSession(sid);
    return OkStatus();
  });
}

Status SqliteSessionStore::Rename(std::string_view id, std::string_view name) {
  const std::string sid(id);
  const std::string new_name(Trim(name));
  if (new_name.find('\n') != std::string::npos) {
    return InvalidArgumentError("a session name must be one line");
  }
  if (LooksLikeHexPrefix(Lower(new_name))) {
    return InvalidArgumentError("'" + new_name +
                                "' could be read as a session id prefix (only hex digits and "
                                "'-'); choose a name with another letter in it");
  }
  return WithWriteTransaction(*db_, path_, "renaming " + sid, [&]() -> Status {
    if (!new_name.empty()) {
      SQLite::Statement taken(*db_, "SELECT id FROM sessions WHERE name = ? AND id <> ?");
      taken.bind(1, new_name);
      taken.bind(2, sid);
      if (taken.executeStep()) {
        return InvalidArgumentError("the name '" + new_name + "' is already used by session " +
                                    taken.getColumn(0).getString() + "; choose another name");
      }
    }
    SQLite::Statement q(*db_, "UPDATE sessions SET name = ? WHERE id = ?");
    if (new_name.empty()) {
      q.bind(1);
    } else {
      q.bind(1, new_name);
    }
    q.bind(2, sid);
    if (q.exec() == 0) return UnknownSession(sid);
    return OkStatus();
  });
}

}  // namespace codex::storage
