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

#include "core/context_budget.h"
#include "core/uuid.h"
#include "storage/migrations.h"
#include "storage/project_identity.h"
#include "storage/search_rank.h"
#include "storage/search_text.h"
#include "storage/sqlite_util.h"
#include "storage/store_rules.h"

namespace codex::storage {

using core::Item;
using core::ItemKind;
using core::SessionInfo;
using core::StoredItem;
using internal::DecodeCursor;
using internal::DirScope;
using internal::EncodeCursor;
using internal::ForkHeadAtTurn;
using internal::Guarded;
using internal::InScope;
using internal::LocalHost;
using internal::LooksLikeHexPrefix;
using internal::NewFork;
using internal::NowMs;
using internal::ScopeOf;
using internal::SessionAdvanced;
using internal::TitleFromItems;
using internal::ToLower;
using internal::TrimView;
using internal::TurnStatusFromName;
using internal::UnknownSession;
using internal::WithWriteTransaction;

namespace {

constexpr size_t kTitleMaxBytes = 80;

constexpr const char* kSessionCols =
    "id, head_item_id, forked_from_session, forked_from_item, cwd, model, provider, title, "
    "name, source, created_at_ms, updated_at_ms, archived, tokens_used, host, project";

// A directory filter (internal::DirScope) in SQL: bind with BindScope.
constexpr const char* kInScope = "(cwd = ? OR (? <> '' AND project = ?))";

constexpr const char* kItemCols =
    "id, parent_id, session_id, turn_id, created_at_ms, kind, role, call_id, server_id, body";

std::optional<int64_t> OptionalInt(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

SessionInfo ReadSession(SQLite::Statement& q, int first = 0) {
  SessionInfo s;
  s.id = q.getColumn(first + 0).getString();
  s.head_item_id = OptionalInt(q.getColumn(first + 1));
  s.forked_from_session = q.getColumn(first + 2).getString();
  s.forked_from_item = OptionalInt(q.getColumn(first + 3));
  s.cwd = q.getColumn(first + 4).getString();
  s.model = q.getColumn(first + 5).getString();
  s.provider = q.getColumn(first + 6).getString();
  s.title = q.getColumn(first + 7).getString();
  s.name = q.getColumn(first + 8).getString();
  s.source = q.getColumn(first + 9).getString();
  s.created_at_ms = q.getColumn(first + 10).getInt64();
  s.updated_at_ms = q.getColumn(first + 11).getInt64();
  s.archived = q.getColumn(first + 12).getInt() != 0;
  s.tokens_used = q.getColumn(first + 13).getInt64();
  s.host = q.getColumn(first + 14).getString();
  s.project = q.getColumn(first + 15).getString();
  return s;
}

// Newest-first sessions with archived = :archived, after the cursor
// (:ms, :id) when `cursor`, at most :limit, in the directory scope (:cwd,
// :project; internal::DirScope) when `scoped`. Each arm of the scope reads
// its own index (sessions_cwd_recent, sessions_project_recent): one OR
// would make SQLite walk sessions_recent over every directory.
std::string RecentSessionsSql(bool scoped, bool cursor) {
  const std::string after = cursor ? " AND (updated_at_ms, id) < (:ms, :id)" : "";
  const std::string order = " ORDER BY updated_at_ms DESC, id DESC LIMIT :limit";
  const std::string base =
      std::string("SELECT ") + kSessionCols + " FROM sessions WHERE archived = :archived" + after;
  if (!scoped) return base + order;
  return "SELECT * FROM (SELECT * FROM (" + base + " AND cwd = :cwd" + order +
         ") UNION SELECT * FROM (" + base + " AND :project <> '' AND project = :project" + order +
         "))" + order;
}

void BindRecent(SQLite::Statement& q, bool archived, const std::optional<DirScope>& scope,
                const std::optional<std::pair<int64_t, std::string>>& after, int limit) {
  q.bind(":archived", archived ? 1 : 0);
  if (scope) {
    q.bind(":cwd", scope->cwd);
    q.bind(":project", scope->project);
  }
  if (after) {
    q.bind(":ms", after->first);
    q.bind(":id", after->second);
  }
  q.bind(":limit", limit);
}

// Binds kInScope's parameters from `i`; returns the next index.
int BindScope(SQLite::Statement& q, int i, const DirScope& scope) {
  q.bind(i, scope.cwd);
  q.bind(i + 1, scope.project);
  q.bind(i + 2, scope.project);
  return i + 3;
}

StoredItem ReadItem(SQLite::Statement& q) {
  StoredItem s;
  s.id = q.getColumn(0).getInt64();
  s.parent_id = OptionalInt(q.getColumn(1));
  s.session_id = q.getColumn(2).getString();
  s.turn_id = q.getColumn(3).getString();
  s.created_at_ms = q.getColumn(4).getInt64();
  s.item.kind = core::ItemKindFromName(q.getColumn(5).getText());
  s.item.role = q.getColumn(6).getString();
  s.item.call_id = q.getColumn(7).getString();
  s.item.server_id = q.getColumn(8).getString();
  // getString() keeps embedded NULs: the body comes back byte for byte.
  s.item.body = q.getColumn(9).getString();
  return s;
}

void BindOptional(SQLite::Statement& q, int index, std::optional<int64_t> v) {
  if (v) {
    q.bind(index, *v);
  } else {
    q.bind(index);  // NULL
  }
}

// Creates the file with mode 0600 before SQLite sees it (SQLite would honour
// the umask), and tightens an existing one.
Status PrepareFile(const std::string& path) {
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

// Inserts `items` chained from `parent`; returns their ids.
std::vector<int64_t> InsertChain(SQLite::Database& db, std::string_view session_id,
                                 std::optional<int64_t> parent,
                                 const std::vector<ImportedItem>& items) {
  SQLite::Statement ins(db,
                        "INSERT INTO items(parent_id, session_id, turn_id, kind, role, call_id, "
                        "server_id, body, tokens_est, created_at_ms) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  SQLite::Statement fts(db, "INSERT INTO items_fts(rowid, text) VALUES (?, ?)");
  std::vector<int64_t> ids;
  ids.reserve(items.size());
  const std::string sid(session_id);
  for (const ImportedItem& it : items) {
    ins.reset();
    BindOptional(ins, 1, parent);
    ins.bind(2, sid);
    ins.bind(3, it.turn_id);
    ins.bind(4, std::string(core::ItemKindName(it.item.kind)));
    ins.bind(5, it.item.role);
    ins.bind(6, it.item.call_id);
    ins.bind(7, it.item.server_id);
    ins.bindNoCopy(8, it.item.body);
    ins.bind(9, core::EstimateItemTokens(it.item));
    ins.bind(10, it.created_at_ms);
    ins.exec();
    parent = db.getLastInsertRowid();
    ids.push_back(*parent);
    const std::string text = SearchText(it.item);
    if (!text.empty()) {
      fts.reset();
      fts.bind(1, *parent);
      fts.bind(2, text);
      fts.exec();
    }
  }
  return ids;
}

// Binds the 11 columns of a `turns` row (session_id, turn_id, status, error,
// the five token counts, started_at_ms, ended_at_ms) in that order.
void BindTurnRow(SQLite::Statement& q, const std::string& session_id,
                 const core::TurnRecord& turn) {
  q.bind(1, session_id);
  q.bind(2, turn.turn_id);
  q.bind(3, std::string(TurnStatusName(turn.status)));
  q.bind(4, turn.error);
  q.bind(5, turn.usage.input_tokens);
  q.bind(6, turn.usage.cached_input_tokens);
  q.bind(7, turn.usage.output_tokens);
  q.bind(8, turn.usage.reasoning_output_tokens);
  q.bind(9, turn.usage.total_tokens);
  q.bind(10, turn.started_at_ms);
  q.bind(11, turn.ended_at_ms);
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
    line = TrimView(text.substr(0, nl));
    if (!line.empty() || nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  if (line.size() <= kTitleMaxBytes) return std::string(line);
  size_t cut = kTitleMaxBytes;
  // Do not split a UTF-8 sequence: back up over continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
  return std::string(TrimView(line.substr(0, cut))) + "…";
}

SqliteSessionStore::SqliteSessionStore(std::string path, std::unique_ptr<SQLite::Database> db,
                                       StoreOptions options,
                                       std::unique_ptr<internal::BusyWait> wait)
    : path_(std::move(path)),
      options_(std::move(options)),
      wait_(std::move(wait)),
      db_(std::move(db)) {}

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
  if (!options.read_only && CannotWrite(path)) options.read_only = true;
  if (options.read_only) {
    if (::access(path.c_str(), R_OK) != 0) {
      return NotFoundError("no sessions database at " + path + " yet (" + std::strerror(errno) +
                           "); run a session first");
    }
  } else {
    RETURN_IF_ERROR(PrepareFile(path));
  }
  auto wait = std::make_unique<internal::BusyWait>();
  wait->timeout_ms = options.busy_timeout_ms;
  wait->notice_ms = options.wait_notice_ms;
  wait->on_wait = options.on_wait;
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
    RegisterSearchTextFunction(db->getHandle());
    internal::RegisterPlaceFunctions(db->getHandle());
    RETURN_IF_ERROR(RegisterSearchRank(db->getHandle()));
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
    if (version != LatestSchemaVersion()) {
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
  s.id = spec.id.empty() ? core::NewUuidV7() : ToLower(spec.id);
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
  s.created_at_ms = spec.created_at_ms != 0 ? spec.created_at_ms : NowMs();
  s.updated_at_ms = s.created_at_ms;
  return WithWriteTransaction(*db_, path_, "creating a session", [&]() -> Result<SessionInfo> {
    SQLite::Statement exists(*db_, "SELECT 1 FROM sessions WHERE id = ?");
    exists.bind(1, s.id);
    if (exists.executeStep()) {
      return InvalidArgumentError("session " + s.id + " already exists");
    }
    SQLite::Statement q(*db_,
                        "INSERT INTO sessions(id, cwd, model, provider, title, source, "
                        "created_at_ms, updated_at_ms, host, project)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
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

core::LeaseHolder ReadLease(SQLite::Statement& q) {
  core::LeaseHolder h;
  h.pid = q.getColumn(0).getInt64();
  h.host = q.getColumn(1).getString();
  h.process_start = q.getColumn(2).getString();
  h.started_at_ms = q.getColumn(3).getInt64();
  h.heartbeat_at_ms = q.getColumn(4).getInt64();
  return h;
}

// A held lease: a thread with its own connection refreshes the heartbeat
// every `heartbeat_ms`; the destructor stops it and deletes the row. The
// connection is opened here, before the thread starts, so the thread touches
// SQLite only at its first tick: a fork() right after AcquireTurnLease (tests
// do) cannot inherit a SQLite mutex that thread holds mid-open.
class SqliteTurnLease final : public core::TurnLease {
 public:
  SqliteTurnLease(std::string path, std::string session_id, std::string token,
                  core::LeaseHolder holder, int64_t heartbeat_ms)
      : path_(std::move(path)),
        session_id_(std::move(session_id)),
        token_(std::move(token)),
        holder_(std::move(holder)),
        heartbeat_ms_(heartbeat_ms) {
    wait_.timeout_ms = 5'000;
    try {
      db_ =
          std::make_unique<SQLite::Database>(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX);
      internal::InstallBusyWait(*db_, &wait_);
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
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(heartbeat_ms_), [this] { return stop_; });
      if (stop_ || !db) break;
      lock.unlock();
      try {
        SQLite::Statement q(*db,
                            "UPDATE session_leases SET heartbeat_at_ms = ?"
                            " WHERE session_id = ? AND token = ?");
        q.bind(1, NowMs());
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
      if (!db) {
        db = std::make_unique<SQLite::Database>(path_,
                                                SQLite::OPEN_READWRITE | SQLite::OPEN_NOMUTEX);
        internal::InstallBusyWait(*db, &wait);
      }
      SQLite::Statement q(*db, "DELETE FROM session_leases WHERE session_id = ? AND token = ?");
      q.bind(1, session_id_);
      q.bind(2, token_);
      q.exec();
    } catch (const std::exception&) {
      // Left behind, the row names this process: the next turn (here, or
      // anywhere once this process is gone) takes it over.
    }
  }

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
                 [&]() -> Result<std::optional<core::LeaseHolder>> {
                   SQLite::Statement q(*db_,
                                       "SELECT pid, host, process_start, started_at_ms,"
                                       " heartbeat_at_ms FROM session_leases WHERE session_id = ?");
                   q.bind(1, sid);
                   if (!q.executeStep()) return std::optional<core::LeaseHolder>();
                   return std::optional<core::LeaseHolder>(ReadLease(q));
                 });
}

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
    const int64_t now = NowMs();
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
  return std::unique_ptr<core::TurnLease>(
      new SqliteTurnLease(path_, sid, token, me, options_.lease_heartbeat_ms));
}

Result<SessionInfo> SqliteSessionStore::FindSession(std::string_view id_or_name) {
  const std::string key(TrimView(id_or_name));
  if (key.empty()) return InvalidArgumentError("empty session id; give an id, a prefix or a name");
  return Guarded(path_, "finding a session", [&]() -> Result<SessionInfo> {
    const std::string lower = ToLower(key);
    {
      SQLite::Statement q(*db_,
                          std::string("SELECT ") + kSessionCols + " FROM sessions WHERE id = ?");
      q.bind(1, lower);
      if (q.executeStep()) return ReadSession(q);
    }
    std::vector<SessionInfo> found;
    {
      SQLite::Statement q(*db_,
                          std::string("SELECT ") + kSessionCols + " FROM sessions WHERE name = ?");
      q.bind(1, key);
      if (q.executeStep()) found.push_back(ReadSession(q));
    }
    // A name that reads as an id prefix (refused by Rename, but possible in a
    // database from before that rule) does not shadow the ids it prefixes.
    if (!found.empty() && !LooksLikeHexPrefix(lower)) return found.front();
    if (LooksLikeHexPrefix(lower)) {
      SQLite::Statement q(*db_, std::string("SELECT ") + kSessionCols +
                                    " FROM sessions WHERE id >= ? AND id < ? ORDER BY id LIMIT 11");
      q.bind(1, lower);
      q.bind(2, lower + "\x7f");
      while (q.executeStep()) {
        SessionInfo s = ReadSession(q);
        if (found.empty() || found.front().id != s.id) found.push_back(std::move(s));
      }
      if (found.size() == 1) return found.front();
      if (found.size() > 1) {
        std::string list;
        for (size_t i = 0; i < found.size() && i < 10; ++i) {
          const SessionInfo& c = found[i];
          list += "\n  " + c.id + "  " + (c.name.empty() ? c.title : c.name + ": " + c.title);
        }
        if (found.size() > 10) list += "\n  ...";
        Status ambiguous = InvalidArgumentError(
            "session prefix '" + key + "' is ambiguous; give more characters of one of:" + list);
        ambiguous.WithReason(StatusReason::kAmbiguousPrefix);
        return ambiguous;
      }
    }
    return UnknownSession(key);
  });
}

Result<SessionInfo> SqliteSessionStore::LatestSession(const std::optional<std::string>& cwd) {
  return Guarded(path_, "finding the latest session", [&]() -> Result<SessionInfo> {
    SQLite::Statement q(*db_, RecentSessionsSql(cwd.has_value(), false));
    BindRecent(q, false, cwd ? std::optional<DirScope>(ScopeOf(*cwd)) : std::nullopt, std::nullopt,
               1);
    if (!q.executeStep()) {
      return NotFoundError(cwd ? "no session in " + *cwd + "; start one with 'codex exec'"
                               : std::string("no session yet; start one with 'codex exec'"));
    }
    return ReadSession(q);
  });
}

Result<std::vector<StoredItem>> SqliteSessionStore::LoadChain(std::optional<int64_t> head,
                                                              bool stop_at_checkpoint) {
  std::vector<StoredItem> out;
  if (!head) return out;
  return Guarded(path_, "loading a transcript", [&]() -> Result<std::vector<StoredItem>> {
    // Walk parent links from the head; with ?2 = 1 the walk does not go past
    // a checkpoint and the checkpoint itself is left out.
    // Rows carry their depth (0 = head); placing them by depth avoids an
    // ORDER BY that would sort every body.
    SQLite::Statement q(*db_,
                        "WITH RECURSIVE chain(id, parent_id, kind, depth) AS ("
                        "  SELECT id, parent_id, kind, 0 FROM items WHERE id = ?1"
                        "  UNION ALL"
                        "  SELECT i.id, i.parent_id, i.kind, c.depth + 1"
                        "  FROM chain AS c JOIN items AS i ON i.id = c.parent_id"
                        "  WHERE ?2 = 0 OR c.kind <> 'compaction_checkpoint')"
                        " SELECT i.id, i.parent_id, i.session_id, i.turn_id, i.created_at_ms,"
                        "   i.kind, i.role, i.call_id, i.server_id, i.body, c.depth, u.total_tokens"
                        " FROM chain AS c JOIN items AS i ON i.id = c.id"
                        " LEFT JOIN item_usage AS u ON u.item_id = c.id"
                        " WHERE ?2 = 0 OR c.kind <> 'compaction_checkpoint'");
    q.bind(1, *head);
    q.bind(2, stop_at_checkpoint ? 1 : 0);
    std::vector<std::pair<int64_t, StoredItem>> rows;
    while (q.executeStep()) {
      StoredItem item = ReadItem(q);
      if (!q.getColumn(11).isNull()) item.reported_total_tokens = q.getColumn(11).getInt64();
      rows.emplace_back(q.getColumn(10).getInt64(), std::move(item));
    }
    out.resize(rows.size());
    for (auto& [depth, item] : rows) {
      if (depth < 0 || static_cast<size_t>(depth) >= rows.size()) {
        return DataLossError("sessions database " + path_ + ": the item chain from " +
                             std::to_string(*head) + " is inconsistent");
      }
      out[rows.size() - 1 - static_cast<size_t>(depth)] = std::move(item);
    }
    if (out.empty() && !stop_at_checkpoint) {
      return DataLossError("sessions database " + path_ + ": head item " + std::to_string(*head) +
                           " is missing");
    }
    return std::move(out);
  });
}

Result<std::vector<StoredItem>> SqliteSessionStore::LoadTranscript(const SessionInfo& session) {
  return LoadChain(session.head_item_id, /*stop_at_checkpoint=*/true);
}

Result<std::vector<StoredItem>> SqliteSessionStore::LoadHistory(const SessionInfo& session) {
  return LoadChain(session.head_item_id, /*stop_at_checkpoint=*/false);
}

Result<std::vector<int64_t>> SqliteSessionStore::Append(std::string_view session_id,
                                                        std::optional<int64_t> expected_head,
                                                        std::string_view turn_id,
                                                        const std::vector<Item>& items) {
  const std::string sid(session_id);
  const int64_t now = NowMs();
  std::vector<ImportedItem> batch;
  batch.reserve(items.size());
  for (const Item& item : items) batch.push_back({std::string(turn_id), now, item});
  return WithWriteTransaction(
      *db_, path_, "appending to session " + sid, [&]() -> Result<std::vector<int64_t>> {
        SQLite::Statement cur(*db_, "SELECT head_item_id, title FROM sessions WHERE id = ?");
        cur.bind(1, sid);
        if (!cur.executeStep()) return UnknownSession(sid);
        if (OptionalInt(cur.getColumn(0)) != expected_head) return SessionAdvanced(sid);
        const bool needs_title = cur.getColumn(1).getString().empty();
        cur.reset();
        if (batch.empty()) return std::vector<int64_t>{};

        std::vector<int64_t> ids = InsertChain(*db_, sid, expected_head, batch);
        std::string title = needs_title ? TitleFromItems(batch) : std::string();
        SQLite::Statement cas(*db_,
                              "UPDATE sessions SET head_item_id = ?1, updated_at_ms = ?2,"
                              " title = CASE WHEN ?3 <> '' AND title = '' THEN ?3 ELSE title END"
                              " WHERE id = ?4 AND head_item_id IS ?5");
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
    cas.bind(2, NowMs());
    cas.bind(3, sid);
    BindOptional(cas, 4, expected_head);
    if (cas.exec() == 0) return SessionAdvanced(sid);
    return OkStatus();
  });
}

Result<core::ListPage> SqliteSessionStore::ListSessions(const core::ListQuery& query) {
  if (query.limit <= 0) {
    return InvalidArgumentError("list limit must be at least 1, got " +
                                std::to_string(query.limit));
  }
  int64_t after_ms = 0;
  std::string after_id;
  const bool has_cursor = !query.cursor.empty();
  if (has_cursor && !DecodeCursor(query.cursor, &after_ms, &after_id)) {
    return InvalidArgumentError("invalid cursor '" + query.cursor +
                                "'; pass the value printed by 'codex sessions list'");
  }
  return Guarded(path_, "listing sessions", [&]() -> Result<core::ListPage> {
    SQLite::Statement q(*db_, RecentSessionsSql(query.cwd.has_value(), has_cursor));
    BindRecent(q, query.archived,
               query.cwd ? std::optional<DirScope>(ScopeOf(*query.cwd)) : std::nullopt,
               has_cursor ? std::optional(std::make_pair(after_ms, after_id)) : std::nullopt,
               query.limit + 1);
    core::ListPage page;
    while (q.executeStep()) page.sessions.push_back(ReadSession(q));
    if (page.sessions.size() > static_cast<size_t>(query.limit)) {
      page.sessions.pop_back();
      page.next_cursor = EncodeCursor(page.sessions.back());
    }
    return page;
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
    q.bind(4, std::string(payload_json));
    q.bind(5, NowMs());
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
    SessionInfo fork = NewFork(parent, head, NowMs());
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
  const std::string new_name(TrimView(name));
  if (new_name.find('\n') != std::string::npos) {
    return InvalidArgumentError("a session name must be one line");
  }
  if (LooksLikeHexPrefix(ToLower(new_name))) {
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

// Deletes the sessions in `ids` and the items only they needed. Runs inside
// the caller's write transaction.
//   candidates = the removed sessions' chains (from head and fork point to the
//                root) plus every item they appended;
//   kept       = candidates still needed: another session's head or fork
//                point, the parent of a surviving item, and their ancestors.
Result<RemoveStats> SqliteSessionStore::RemoveSessions(const std::vector<std::string>& ids) {
  RemoveStats stats;
  if (ids.empty()) return stats;
  SQLite::Database& db = *db_;
  db.exec(
      "CREATE TEMP TABLE IF NOT EXISTS rm_sessions(id TEXT PRIMARY KEY);"
      "CREATE TEMP TABLE IF NOT EXISTS rm_candidates(id INTEGER PRIMARY KEY);"
      "CREATE TEMP TABLE IF NOT EXISTS rm_keep(id INTEGER PRIMARY KEY);"
      "DELETE FROM rm_sessions; DELETE FROM rm_candidates; DELETE FROM rm_keep;");
  {
    SQLite::Statement ins(db, "INSERT OR IGNORE INTO rm_sessions(id) VALUES (?)");
    for (const std::string& id : ids) {
      ins.reset();
      ins.bind(1, id);
      ins.exec();
    }
  }
  db.exec(
      "INSERT OR IGNORE INTO rm_candidates(id)"
      " WITH RECURSIVE up(id) AS ("
      "   SELECT head_item_id FROM sessions"
      "    WHERE id IN (SELECT id FROM rm_sessions) AND head_item_id IS NOT NULL"
      "   UNION SELECT forked_from_item FROM sessions"
      "    WHERE id IN (SELECT id FROM rm_sessions) AND forked_from_item IS NOT NULL"
      "   UNION SELECT i.parent_id FROM up JOIN items AS i ON i.id = up.id"
      "    WHERE i.parent_id IS NOT NULL)"
      " SELECT id FROM up;"
      "INSERT OR IGNORE INTO rm_candidates(id)"
      " SELECT id FROM items WHERE session_id IN (SELECT id FROM rm_sessions);"
      "INSERT OR IGNORE INTO rm_keep(id)"
      " WITH RECURSIVE k(id) AS ("
      "   SELECT s.head_item_id FROM rm_candidates AS c JOIN sessions AS s"
      "    ON s.head_item_id = c.id WHERE s.id NOT IN (SELECT id FROM rm_sessions)"
      "   UNION SELECT s.forked_from_item FROM rm_candidates AS c JOIN sessions AS s"
      "    ON s.forked_from_item = c.id WHERE s.id NOT IN (SELECT id FROM rm_sessions)"
      "   UNION SELECT i.parent_id FROM rm_candidates AS c JOIN items AS i"
      "    ON i.parent_id = c.id WHERE i.id NOT IN (SELECT id FROM rm_candidates)"
      "   UNION SELECT i.parent_id FROM k JOIN items AS i ON i.id = k.id"
      "    WHERE i.parent_id IN (SELECT id FROM rm_candidates))"
      " SELECT id FROM k;");
  db.exec("DELETE FROM session_leases WHERE session_id IN (SELECT id FROM rm_sessions)");
  stats.sessions = db.exec("DELETE FROM sessions WHERE id IN (SELECT id FROM rm_sessions)");
  stats.items = db.exec(
      "DELETE FROM items WHERE id IN"
      " (SELECT id FROM rm_candidates EXCEPT SELECT id FROM rm_keep)");
  db.exec("DELETE FROM rm_sessions; DELETE FROM rm_candidates; DELETE FROM rm_keep;");
  return stats;
}

Result<RemoveStats> SqliteSessionStore::Remove(std::string_view id) {
  const std::string sid(id);
  return WithWriteTransaction(*db_, path_, "removing " + sid, [&]() -> Result<RemoveStats> {
    ASSIGN_OR_RETURN(SessionInfo s, GetById(sid));
    return RemoveSessions({s.id});
  });
}

Result<std::vector<SessionInfo>> SqliteSessionStore::Purge(const PurgeQuery& query,
                                                           RemoveStats* stats) {
  auto select = [&]() -> std::vector<SessionInfo> {
    std::string sql =
        std::string("SELECT ") + kSessionCols + " FROM sessions WHERE updated_at_ms < ?";
    if (query.cwd) sql += std::string(" AND ") + kInScope;
    sql += " ORDER BY updated_at_ms, id";
    SQLite::Statement q(*db_, sql);
    q.bind(1, query.updated_before_ms);
    if (query.cwd) BindScope(q, 2, ScopeOf(*query.cwd));
    std::vector<SessionInfo> out;
    while (q.executeStep()) out.push_back(ReadSession(q));
    return out;
  };
  if (query.dry_run) {
    return Guarded(path_, "listing old sessions",
                   [&]() -> Result<std::vector<SessionInfo>> { return select(); });
  }
  return WithWriteTransaction(*db_, path_, "purging old sessions",
                              [&]() -> Result<std::vector<SessionInfo>> {
                                std::vector<SessionInfo> sessions = select();
                                std::vector<std::string> ids;
                                for (const SessionInfo& si : sessions) ids.push_back(si.id);
                                ASSIGN_OR_RETURN(RemoveStats removed, RemoveSessions(ids));
                                if (stats) *stats = removed;
                                return sessions;
                              });
}

namespace {

// What Search knows of one item of the tree around a page of matches.
struct SearchNode {
  int64_t parent = 0;  // 0: none (a root)
  ItemKind kind = ItemKind::kOther;
  bool real_user = false;         // starts a turn unless inside a replacement history
  int64_t replacement_items = 0;  // of a checkpoint
};

// The turn state after an item on its chain from the root, as
// TurnStartIndexes counts it.
struct TurnState {
  int turns = 0;
  int64_t replacement_left = 0;  // items still inside a checkpoint's replacement history
};

std::string JsonIdArray(const std::vector<int64_t>& ids) {
  std::string out = "[";
  for (int64_t id : ids) {
    if (out.size() > 1) out += ',';
    out += std::to_string(id);
  }
  return out + "]";
}

}  // namespace

Result<std::vector<SearchHit>> SqliteSessionStore::Search(const SearchQuery& query) {
  ASSIGN_OR_RETURN(const std::string fts, FtsQueryFromUser(query.text));
  if (query.limit <= 0) return InvalidArgumentError("search limit must be at least 1");
  const std::optional<DirScope> scope =
      query.cwd ? std::optional<DirScope>(ScopeOf(*query.cwd)) : std::nullopt;
  return Guarded(path_, "searching", [&]() -> Result<std::vector<SearchHit>> {
    // Best matches first (BM25, storage/search_rank.h; newer first on a tie),
    // a page at a time. A matching item counts when a live session holds it:
    // one whose head is the item or a descendant of it. A fork keeps its
    // parent's cwd, so with a directory only items whose creator is in it
    // (or is gone, leaving forks) can be held there.
    const std::string ranked_sql =
        std::string("SELECT f.rowid, codex_bm25(items_fts, z.sz) FROM items_fts AS f") +
        " LEFT JOIN items_fts_docsize AS z ON z.id = f.rowid" +
        (query.cwd ? " JOIN items AS i ON i.id = f.rowid" : "") + " WHERE items_fts MATCH ?1" +
        (query.cwd ? " AND (i.session_id IN (SELECT id FROM sessions"
                     " WHERE cwd = ?2 OR (?3 <> '' AND project = ?3))"
                     " OR i.session_id NOT IN (SELECT id FROM sessions))"
                   : "");
    // Every match scored once; the best are sorted out a page at a time
    // (cheaper than SQLite's sorter, which keeps a B-tree of the best).
    std::vector<std::pair<double, int64_t>> scored;
    try {
      SQLite::Statement q(*db_, ranked_sql);
      q.bind(1, fts);
      if (query.cwd) {
        q.bind(2, scope->cwd);
        q.bind(3, scope->project);
      }
      while (q.executeStep()) {
        scored.emplace_back(q.getColumn(1).getDouble(), q.getColumn(0).getInt64());
      }
    } catch (const std::exception& e) {
      return InvalidArgumentError("cannot search for '" + query.text + "': " + e.what() +
                                  "; use words, \"a phrase\" or a prefix such as build*");
    }
    const auto better = [](const std::pair<double, int64_t>& a,
                           const std::pair<double, int64_t>& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    };
    // The chain from a match up to its root, read until it meets an item
    // already read (the shared part of forks and of one session's matches is
    // read once); then the bodies that decide turn starts (user messages,
    // checkpoints).
    SQLite::Statement up(*db_,
                         "WITH RECURSIVE up(id, parent, kind, role) AS (SELECT id, parent_id, kind,"
                         " role FROM items WHERE id = ?1 UNION ALL SELECT i.id, i.parent_id,"
                         " i.kind, i.role FROM up JOIN items AS i ON i.id = up.parent)"
                         " SELECT id, parent, kind, role FROM up");
    SQLite::Statement bodies(*db_,
                             "SELECT id, kind, role, body FROM items"
                             " WHERE id IN (SELECT value FROM json_each(?1))");
    // Every item below the page's matches, once, with the sessions whose
    // head it is.
    SQLite::Statement down(*db_,
                           std::string("WITH RECURSIVE d(id, parent) AS (SELECT value, 0"
                                       " FROM json_each(?1) UNION SELECT i.id, i.parent_id"
                                       " FROM items AS i JOIN d ON i.parent_id = d.id)"
                                       " SELECT d.id, d.parent, s.* FROM d LEFT JOIN (SELECT ") +
                               kSessionCols + " FROM sessions) AS s ON s.head_item_id = d.id");
    SQLite::Statement snippet(*db_,
                              "SELECT snippet(items_fts, 0, '[', ']', '…', 16), i.kind, i.role"
                              " FROM items_fts AS f JOIN items AS i ON i.id = f.rowid"
                              " WHERE items_fts MATCH ?1 AND f.rowid = ?2");
    std::unordered_map<int64_t, SearchNode> nodes;  // the items up from matches
    std::unordered_map<int64_t, TurnState> states;  // memo of TurnState per node
    auto turn_of = [&](int64_t id) -> int {
      std::vector<int64_t> path;  // from `id` up to the first node with a known state
      for (int64_t n = id; n != 0 && !states.count(n);) {
        path.push_back(n);
        auto it = nodes.find(n);
        n = it == nodes.end() ? 0 : it->second.parent;
      }
      for (auto p = path.rbegin(); p != path.rend(); ++p) {
        const SearchNode& node = nodes[*p];
        auto parent = states.find(node.parent);
        TurnState s = parent == states.end() ? TurnState{} : parent->second;
        if (node.kind == ItemKind::kCompactionCheckpoint) {
          s.replacement_left = node.replacement_items;
        } else if (s.replacement_left > 0) {
          --s.replacement_left;
        } else if (node.real_user) {
          ++s.turns;
        }
        states[*p] = s;
      }
      return states[id].turns;
    };

    std::vector<SearchHit> hits;
    size_t offset = 0;
    for (size_t batch = static_cast<size_t>(query.limit);
         hits.size() < static_cast<size_t>(query.limit) && offset < scored.size(); batch *= 2) {
      const size_t end = std::min(scored.size(), offset + batch);
      std::partial_sort(scored.begin() + static_cast<std::ptrdiff_t>(offset),
                        scored.begin() + static_cast<std::ptrdiff_t>(end), scored.end(), better);
      std::vector<int64_t> page;
      for (size_t k = offset; k < end; ++k) page.push_back(scored[k].second);
      offset = end;
      const std::string seeds = JsonIdArray(page);
      std::vector<int64_t> sorted_page = page;
      std::sort(sorted_page.begin(), sorted_page.end());

      // Highest ids first: in one session the newest match's chain holds
      // the older matches, which then need no walk of their own.
      std::vector<int64_t> need_body;
      for (auto seed = sorted_page.rbegin(); seed != sorted_page.rend(); ++seed) {
        if (nodes.count(*seed)) continue;
        up.reset();
        up.bind(1, *seed);
        while (up.executeStep()) {
          const int64_t id = up.getColumn(0).getInt64();
          if (nodes.count(id)) break;
          SearchNode node;
          node.parent = up.getColumn(1).isNull() ? 0 : up.getColumn(1).getInt64();
          node.kind = core::ItemKindFromName(up.getColumn(2).getText());
          if (node.kind == ItemKind::kCompactionCheckpoint ||
              (node.kind == ItemKind::kMessage && up.getColumn(3).getString() == "user")) {
            need_body.push_back(id);
          }
          nodes.emplace(id, node);
        }
      }
      bodies.reset();
      bodies.bind(1, JsonIdArray(need_body));
      while (bodies.executeStep()) {
        Item item;
        item.kind = core::ItemKindFromName(bodies.getColumn(1).getText());
        item.role = bodies.getColumn(2).getString();
        item.body = bodies.getColumn(3).getString();
        SearchNode& node = nodes[bodies.getColumn(0).getInt64()];
        if (item.kind == ItemKind::kCompactionCheckpoint) {
          node.replacement_items = CheckpointReplacementItems(item).value_or(0);
        } else {
          node.real_user = IsRealUserMessage(item);
        }
      }

      // Each session whose head lies below a match holds that match and every
      // match between the two. `nearest` is the closest match at or above an
      // item of the walk (0: none), filled in once per item.
      std::unordered_map<int64_t, int64_t> down_parent;
      std::vector<std::pair<int64_t, SessionInfo>> heads;
      down.reset();
      down.bind(1, seeds);
      while (down.executeStep()) {
        const int64_t id = down.getColumn(0).getInt64();
        const int64_t parent = down.getColumn(1).getInt64();
        if (parent != 0) down_parent[id] = parent;
        if (down.getColumn(2).isNull()) continue;  // no session's head
        SessionInfo s = ReadSession(down, 2);
        if (scope && !InScope(s, *scope)) continue;
        heads.emplace_back(id, std::move(s));
      }
      // A head reached from two matches comes once per path; keep it once.
      std::sort(heads.begin(), heads.end(),
                [](const auto& a, const auto& b) { return a.second.id < b.second.id; });
      heads.erase(
          std::unique(heads.begin(), heads.end(),
                      [](const auto& a, const auto& b) { return a.second.id == b.second.id; }),
          heads.end());
      const std::unordered_set<int64_t> is_match(page.begin(), page.end());
      std::unordered_map<int64_t, int64_t> nearest;
      auto nearest_match = [&](int64_t id) -> int64_t {
        std::vector<int64_t> path;
        int64_t found = 0;
        for (int64_t n = id; n != 0;) {
          if (auto it = nearest.find(n); it != nearest.end()) {
            found = it->second;
            break;
          }
          if (is_match.count(n)) {
            found = n;
            nearest[n] = n;
            break;
          }
          path.push_back(n);
          auto p = down_parent.find(n);
          n = p == down_parent.end() ? 0 : p->second;
        }
        for (int64_t n : path) nearest[n] = found;
        return found;
      };
      std::unordered_map<int64_t, std::vector<SearchHit::Where>> holders;
      for (const auto& [head, session] : heads) {
        for (int64_t m = nearest_match(head); m != 0;) {
          holders[m].push_back({session, 0});
          auto p = down_parent.find(m);
          m = p == down_parent.end() ? 0 : nearest_match(p->second);
        }
      }

      for (int64_t id : page) {
        if (hits.size() >= static_cast<size_t>(query.limit)) break;
        auto h = holders.find(id);
        if (h == holders.end()) continue;  // no live session holds it
        SearchHit hit;
        hit.item_id = id;
        hit.sessions = std::move(h->second);
        std::sort(hit.sessions.begin(), hit.sessions.end(), [](const auto& a, const auto& b) {
          if (a.session.updated_at_ms != b.session.updated_at_ms) {
            return a.session.updated_at_ms > b.session.updated_at_ms;
          }
          return a.session.id > b.session.id;
        });
        const int turn = turn_of(id);
        for (auto& w : hit.sessions) w.turn = turn;
        hits.push_back(std::move(hit));
      }
    }

    for (SearchHit& hit : hits) {
      snippet.reset();
      snippet.bind(1, fts);
      snippet.bind(2, hit.item_id);
      if (snippet.executeStep()) {
        hit.snippet = snippet.getColumn(0).getString();
        hit.kind = snippet.getColumn(1).getString();
        hit.role = snippet.getColumn(2).getString();
      }
      for (char& c : hit.snippet) {
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
      }
    }
    return hits;
  });
}

Result<std::vector<TreeNode>> SqliteSessionStore::Tree(std::string_view id) {
  const std::string sid(id);
  return Guarded(path_, "reading the fork tree", [&]() -> Result<std::vector<TreeNode>> {
    ASSIGN_OR_RETURN(SessionInfo root, GetById(sid));
    // Climb to the oldest ancestor still present (a removed parent ends the climb).
    for (int guard = 0; !root.forked_from_session.empty() && guard < 10'000; ++guard) {
      Result<SessionInfo> parent = GetById(root.forked_from_session);
      if (!parent.ok()) break;
      root = std::move(parent).value();
    }
    SQLite::Statement q(*db_, std::string("WITH RECURSIVE d(id) AS (SELECT ?1 UNION"
                                          " SELECT s.id FROM sessions AS s JOIN d"
                                          " ON s.forked_from_session = d.id)"
                                          " SELECT ") +
                                  kSessionCols +
                                  " FROM sessions WHERE id IN (SELECT id FROM d) AND id <> ?1"
                                  " ORDER BY created_at_ms, id");
    q.bind(1, root.id);
    std::multimap<std::string, SessionInfo> children;
    while (q.executeStep()) {
      SessionInfo s = ReadSession(q);
      std::string parent = s.forked_from_session;
      children.emplace(std::move(parent), std::move(s));
    }
    std::vector<TreeNode> out;
    // Depth-first, children oldest first (multimap keeps insertion order).
    std::vector<TreeNode> stack{{root, 0}};
    while (!stack.empty()) {
      TreeNode node = std::move(stack.back());
      stack.pop_back();
      auto [lo, hi] = children.equal_range(node.session.id);
      std::vector<TreeNode> kids;
      for (auto it = lo; it != hi; ++it) kids.push_back({it->second, node.depth + 1});
      out.push_back(std::move(node));
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(std::move(*it));
    }
    return out;
  });
}

Result<std::vector<core::TurnRecord>> SqliteSessionStore::LoadTurns(std::string_view id) {
  const std::string sid(id);
  return Guarded(path_, "loading turns", [&]() -> Result<std::vector<core::TurnRecord>> {
    SQLite::Statement q(*db_,
                        "SELECT turn_id, status, error, input_tokens, cached_input_tokens,"
                        " output_tokens, reasoning_output_tokens, total_tokens, started_at_ms,"
                        " ended_at_ms FROM turns WHERE session_id = ?"
                        " ORDER BY started_at_ms, ended_at_ms, turn_id");
    q.bind(1, sid);
    std::vector<core::TurnRecord> out;
    while (q.executeStep()) {
      core::TurnRecord t;
      t.session_id = sid;
      t.turn_id = q.getColumn(0).getString();
      t.status = TurnStatusFromName(q.getColumn(1).getText());
      t.error = q.getColumn(2).getString();
      t.usage.input_tokens = q.getColumn(3).getInt64();
      t.usage.cached_input_tokens = q.getColumn(4).getInt64();
      t.usage.output_tokens = q.getColumn(5).getInt64();
      t.usage.reasoning_output_tokens = q.getColumn(6).getInt64();
      t.usage.total_tokens = q.getColumn(7).getInt64();
      t.started_at_ms = q.getColumn(8).getInt64();
      t.ended_at_ms = q.getColumn(9).getInt64();
      out.push_back(std::move(t));
    }
    return out;
  });
}

Result<std::vector<EventRecord>> SqliteSessionStore::LoadEvents(std::string_view id) {
  const std::string sid(id);
  return Guarded(path_, "loading events", [&]() -> Result<std::vector<EventRecord>> {
    SQLite::Statement q(*db_,
                        "SELECT id, turn_id, type, payload, created_at_ms FROM events"
                        " WHERE session_id = ? ORDER BY id");
    q.bind(1, sid);
    std::vector<EventRecord> out;
    while (q.executeStep()) {
      EventRecord e;
      e.id = q.getColumn(0).getInt64();
      e.session_id = sid;
      e.turn_id = q.getColumn(1).getString();
      e.type = q.getColumn(2).getString();
      e.payload_json = q.getColumn(3).getString();
      e.created_at_ms = q.getColumn(4).getInt64();
      out.push_back(std::move(e));
    }
    return out;
  });
}

Result<SessionDetails> SqliteSessionStore::Show(std::string_view id) {
  const std::string sid(id);
  return Guarded(path_, "reading session " + sid, [&]() -> Result<SessionDetails> {
    SessionDetails d;
    ASSIGN_OR_RETURN(d.session, GetById(sid));
    ASSIGN_OR_RETURN(d.history, LoadHistory(d.session));
    ASSIGN_OR_RETURN(d.turns, LoadTurns(sid));
    ASSIGN_OR_RETURN(d.events, LoadEvents(sid));
    SQLite::Statement q(*db_, std::string("SELECT ") + kSessionCols +
                                  " FROM sessions WHERE forked_from_session = ?"
                                  " ORDER BY created_at_ms, id");
    q.bind(1, sid);
    while (q.executeStep()) d.forks.push_back(ReadSession(q));
    return d;
  });
}

Result<bool> SqliteSessionStore::ImportSession(const ImportedSession& session) {
  const std::string sid = ToLower(session.spec.id);
  if (!core::LooksLikeUuid(sid)) {
    return InvalidArgumentError("imported session id '" + session.spec.id + "' is not a UUID");
  }
  for (const EventRecord& e : session.events) {
    const nlohmann::json payload = nlohmann::json::parse(e.payload_json, nullptr, false);
    if (payload.is_discarded() || !payload.is_object()) {
      return InvalidArgumentError("event '" + e.type + "' payload is not a JSON object");
    }
  }
  return WithWriteTransaction(*db_, path_, "importing " + sid, [&]() -> Result<bool> {
    SQLite::Statement exists(*db_, "SELECT 1 FROM sessions WHERE id = ?");
    exists.bind(1, sid);
    if (exists.executeStep()) return false;
    const int64_t created = session.spec.created_at_ms != 0 ? session.spec.created_at_ms : NowMs();
    const int64_t updated = std::max(created, session.updated_at_ms);
    int64_t tokens = 0;
    for (const core::TurnRecord& t : session.turns) tokens += t.usage.total_tokens;
    std::string title =
        session.spec.title.empty() ? TitleFromItems(session.items) : session.spec.title;
    // The session row first (items reference nothing in it), head set after.
    SQLite::Statement ins(*db_,
                          "INSERT INTO sessions(id, cwd, model, provider, title, source,"
                          " created_at_ms, updated_at_ms, tokens_used, host, project)"
                          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    ins.bind(1, sid);
    ins.bind(2, session.spec.cwd);
    ins.bind(3, session.spec.model);
    ins.bind(4, session.spec.provider);
    ins.bind(5, title);
    ins.bind(6, session.spec.source.empty() ? std::string("import") : session.spec.source);
    ins.bind(7, created);
    ins.bind(8, updated);
    ins.bind(9, tokens);
    ins.bind(10, session.spec.host.empty() ? LocalHost() : session.spec.host);
    ins.bind(11, ProjectKey(session.spec.cwd));
    ins.exec();
    std::vector<int64_t> ids = InsertChain(*db_, sid, std::nullopt, session.items);
    SQLite::Statement usage(*db_, "INSERT INTO item_usage(item_id, total_tokens) VALUES (?, ?)");
    for (const auto& [index, total] : session.reported_totals) {
      if (index >= ids.size()) continue;
      usage.reset();
      usage.bind(1, ids[index]);
      usage.bind(2, total);
      usage.exec();
    }
    if (!ids.empty()) {
      SQLite::Statement head(*db_, "UPDATE sessions SET head_item_id = ? WHERE id = ?");
      head.bind(1, ids.back());
      head.bind(2, sid);
      head.exec();
    }
    SQLite::Statement turn(*db_,
                           "INSERT OR REPLACE INTO turns(session_id, turn_id, status, error,"
                           " input_tokens, cached_input_tokens, output_tokens,"
                           " reasoning_output_tokens, total_tokens, started_at_ms, ended_at_ms)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const core::TurnRecord& t : session.turns) {
      turn.reset();
      BindTurnRow(turn, sid, t);
      turn.exec();
    }
    SQLite::Statement ev(*db_,
                         "INSERT INTO events(session_id, turn_id, type, payload, created_at_ms)"
                         " VALUES (?, ?, ?, ?, ?)");
    for (const EventRecord& e : session.events) {
      ev.reset();
      ev.bind(1, sid);
      ev.bind(2, e.turn_id);
      ev.bind(3, e.type);
      ev.bind(4, e.payload_json);
      ev.bind(5, e.created_at_ms != 0 ? e.created_at_ms : created);
      ev.exec();
    }
    return true;
  });
}

Result<bool> SqliteSessionStore::CopySession(const SessionCopy& copy) {
  const std::string sid = ToLower(copy.info.id);
  if (!core::LooksLikeUuid(sid)) {
    return InvalidArgumentError("copied session id '" + copy.info.id + "' is not a UUID");
  }
  if (copy.forked_from_index && *copy.forked_from_index >= copy.items.size()) {
    return InvalidArgumentError("session " + sid + ": fork point index is past its items");
  }
  return WithWriteTransaction(*db_, path_, "copying " + sid, [&]() -> Result<bool> {
    SQLite::Statement exists(*db_, "SELECT 1 FROM sessions WHERE id = ?");
    exists.bind(1, sid);
    if (exists.executeStep()) return false;
    const SessionInfo& info = copy.info;
    SQLite::Statement ins(*db_,
                          "INSERT INTO sessions(id, forked_from_session, cwd, model, provider,"
                          " title, name, source, created_at_ms, updated_at_ms, archived,"
                          " tokens_used, host, project)"
                          " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    ins.bind(1, sid);
    if (info.forked_from_session.empty()) {
      ins.bind(2);
    } else {
      ins.bind(2, info.forked_from_session);
    }
    ins.bind(3, info.cwd);
    ins.bind(4, info.model);
    ins.bind(5, info.provider);
    ins.bind(6, info.title);
    if (info.name.empty()) {
      ins.bind(7);
    } else {
      ins.bind(7, info.name);
    }
    ins.bind(8, info.source);
    ins.bind(9, info.created_at_ms);
    ins.bind(10, info.updated_at_ms);
    ins.bind(11, info.archived ? 1 : 0);
    ins.bind(12, info.tokens_used);
    ins.bind(13, info.host);
    ins.bind(14, info.project);
    ins.exec();
    std::vector<ImportedItem> chain;
    chain.reserve(copy.items.size());
    for (const StoredItem& it : copy.items) {
      chain.push_back({it.turn_id, it.created_at_ms, it.item});
    }
    const std::vector<int64_t> ids = InsertChain(*db_, sid, copy.base_item_id, chain);
    SQLite::Statement usage(*db_, "INSERT INTO item_usage(item_id, total_tokens) VALUES (?, ?)");
    for (size_t i = 0; i < ids.size(); ++i) {
      if (!copy.items[i].reported_total_tokens) continue;
      usage.reset();
      usage.bind(1, ids[i]);
      usage.bind(2, *copy.items[i].reported_total_tokens);
      usage.exec();
    }
    std::optional<int64_t> head = ids.empty() ? copy.base_item_id : std::optional(ids.back());
    std::optional<int64_t> fork_point = copy.forked_from_item;
    if (!fork_point && copy.forked_from_index) fork_point = ids[*copy.forked_from_index];
    SQLite::Statement set(
        *db_, "UPDATE sessions SET head_item_id = ?, forked_from_item = ? WHERE id = ?");
    BindOptional(set, 1, head);
    BindOptional(set, 2, fork_point);
    set.bind(3, sid);
    set.exec();
    SQLite::Statement turn(*db_,
                           "INSERT OR REPLACE INTO turns(session_id, turn_id, status, error,"
                           " input_tokens, cached_input_tokens, output_tokens,"
                           " reasoning_output_tokens, total_tokens, started_at_ms, ended_at_ms)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const core::TurnRecord& t : copy.turns) {
      turn.reset();
      BindTurnRow(turn, sid, t);
      turn.exec();
    }
    SQLite::Statement ev(*db_,
                         "INSERT INTO events(session_id, turn_id, type, payload, created_at_ms)"
                         " VALUES (?, ?, ?, ?, ?)");
    for (const EventRecord& e : copy.events) {
      ev.reset();
      ev.bind(1, sid);
      ev.bind(2, e.turn_id);
      ev.bind(3, e.type);
      ev.bind(4, e.payload_json);
      ev.bind(5, e.created_at_ms);
      ev.exec();
    }
    return true;
  });
}

}  // namespace codex::storage
