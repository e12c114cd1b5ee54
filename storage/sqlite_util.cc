#include "storage/sqlite_util.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "storage/fts_tokenizer.h"
#include "storage/packed_text.h"
#include "storage/project_identity.h"
#include "storage/search_rank.h"
#include "storage/search_text.h"

namespace codex::storage::internal {

namespace {

int ExtendedCode(const std::exception& e) {
  if (const auto* se = dynamic_cast<const SQLite::Exception*>(&e)) {
    return se->getExtendedErrorCode();
  }
  return -1;
}

// True when the filesystem holding `path` has (next to) no space left for
// this user: what an I/O error while writing there means.
bool OutOfSpace(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return errno == ENOSPC;
  return static_cast<unsigned long long>(st.f_bavail) * st.f_frsize < 64 * 1024;
}

}  // namespace

std::string LockHolder(const std::string& path) {
  std::set<unsigned long> inodes;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    struct stat st {};
    if (::stat((path + suffix).c_str(), &st) == 0) inodes.insert(st.st_ino);
  }
  std::ifstream locks("/proc/locks");
  long holder = 0;
  bool holder_writes = false;
  for (std::string line; std::getline(locks, line);) {
    // "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; waiters have "->" after the number.
    std::istringstream in(line);
    std::string number, kind, mode, access, dev_ino;
    long pid = 0;
    if (!(in >> number >> kind >> mode >> access >> pid >> dev_ino) || kind == "->") continue;
    const size_t colon = dev_ino.rfind(':');
    if (colon == std::string::npos || pid <= 0) continue;
    const unsigned long ino = std::strtoul(dev_ino.c_str() + colon + 1, nullptr, 10);
    if (!inodes.count(ino)) continue;
    const bool writes = access == "WRITE";
    if (holder == 0 || (writes && !holder_writes) || (holder == ::getpid() && pid != ::getpid())) {
      holder = pid;
      holder_writes = writes;
    }
  }
  if (holder == 0) return "another process";
  if (holder == ::getpid()) return "another connection of this process";
  std::string comm;
  std::getline(std::ifstream("/proc/" + std::to_string(holder) + "/comm"), comm);
  if (comm == "codex") return "another codex process (pid " + std::to_string(holder) + ")";
  if (comm.empty()) return "another process (pid " + std::to_string(holder) + ")";
  return "another process (" + comm + ", pid " + std::to_string(holder) + ")";
}

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
    if (wait->on_wait) wait->on_wait(LockHolder(wait->path));
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
                              " gave up: " + LockHolder(path) + " kept the database locked (" +
                              e.what() + "); try again when it has finished");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DataLossError(message + "; the file is damaged or not a codex database: move it " +
                           "aside (mv " + path + " " + path + ".broken) to start afresh, or " +
                           "recover what it holds with 'sqlite3 " + path + ".broken .recover | " +
                           "sqlite3 " + path + "'");
    case SQLITE_FULL:
    case SQLITE_IOERR:
      if ((code & 0xff) == SQLITE_FULL || OutOfSpace(path)) {
        return ResourceExhaustedError("sessions database " + path + ": " + std::string(what) +
                                      " failed: no space left on device; free space on the "
                                      "filesystem of " +
                                      path + " and try again (what was saved before is intact)");
      }
      return InternalError(std::move(message));
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

Status RegisterStoreFunctions(sqlite3* db) {
  RegisterSearchTextFunction(db);
  RegisterPackedTextFunctions(db);
  RegisterPlaceFunctions(db);
  RETURN_IF_ERROR(RegisterSearchRank(db));
  return RegisterCodexTokenizer(db);
}

}  // namespace codex::storage::internal
