#include "storage/sqlite_util.h"

#include "storage/project_identity.h"
#include "storage/store_rules.h"

namespace codex::storage::internal {

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

int ExtendedCode(const std::exception& e) {
  if (const auto* se = dynamic_cast<const SQLite::Exception*>(&e)) {
    return se->getExtendedErrorCode();
  }
  return -1;
}

}  // namespace

namespace {

int BusyHandler(void* arg, int count) {
  auto* wait = static_cast<BusyWait*>(arg);
  const auto now = std::chrono::steady_clock::now();
  if (count == 0) {
    wait->start = now;
    wait->noticed = false;
  }
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - wait->start).count();
  if (elapsed >= wait->timeout_ms) return 0;
  if (!wait->noticed && elapsed >= wait->notice_ms) {
    wait->noticed = true;
    if (wait->on_wait) wait->on_wait();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(count < 10 ? 2 + count * 2 : 25));
  return 1;
}

}  // namespace

void InstallBusyWait(SQLite::Database& db, BusyWait* wait) {
  sqlite3_busy_handler(db.getHandle(), BusyHandler, wait);
}

bool IsBusy(const std::exception& e) {
  const int code = ExtendedCode(e);
  if (code < 0) return false;
  const int primary = code & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
}

Status StatusFromException(const std::exception& e, const std::string& path,
                           std::string_view what) {
  const int code = ExtendedCode(e);
  std::string message =
      "sessions database " + path + ": " + std::string(what) + " failed: " + e.what();
  if (code < 0) return InternalError(std::move(message));
  message += " (sqlite error " + std::to_string(code) + ")";
  switch (code & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return UnavailableError("sessions database " + path + ": " + std::string(what) +
                              " gave up: another codex process kept the database locked (" +
                              e.what() + "); try again when it has finished");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DataLossError(message + "; the file is damaged or not a codex database: move it " +
                           "aside (mv " + path + " " + path + ".broken) to start afresh, or " +
                           "recover what it holds with 'sqlite3 " + path + ".broken .recover | " +
                           "sqlite3 " + path + "'");
    case SQLITE_FULL:
      return ResourceExhaustedError(message + "; the disk is full");
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
      return FailedPreconditionError(message + "; check the file's permissions");
    default:
      return InternalError(std::move(message));
  }
}

void RegisterPlaceFunctions(sqlite3* db) {
  static const auto host = [](sqlite3_context* ctx, int, sqlite3_value**) {
    const std::string name = LocalHost();
    sqlite3_result_text(ctx, name.data(), static_cast<int>(name.size()), SQLITE_TRANSIENT);
  };
  static const auto project = [](sqlite3_context* ctx, int argc, sqlite3_value** argv) {
    const unsigned char* p = argc == 1 ? sqlite3_value_text(argv[0]) : nullptr;
    const std::string key =
        p ? ProjectKey(std::string_view(reinterpret_cast<const char*>(p),
                                        static_cast<size_t>(sqlite3_value_bytes(argv[0]))))
          : std::string();
    sqlite3_result_text(ctx, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
  };
  sqlite3_create_function(db, "codex_host_name", 0, SQLITE_UTF8, nullptr, +host, nullptr, nullptr);
  sqlite3_create_function(db, "codex_project_key", 1, SQLITE_UTF8, nullptr, +project, nullptr,
                          nullptr);
}

}  // namespace codex::storage::internal
