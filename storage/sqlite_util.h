// Internal helpers of codex_storage: converting SQLiteCpp exceptions into
// Status at the module edge, and running write transactions with BEGIN
// IMMEDIATE plus a bounded retry on SQLITE_BUSY / SQLITE_LOCKED (on top of the
// connection's busy_timeout). Not part of the public interface.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include <chrono>
#include <exception>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include "core/status.h"

namespace codex::storage::internal {

int64_t NowMs();

// The Status for an exception thrown while doing `what` on the database at
// `path`. SQLite errors keep their extended result code in the message;
// corruption maps to kDataLoss, lock contention to kUnavailable.
Status StatusFromException(const std::exception& e, const std::string& path, std::string_view what);

// True for an SQLite exception that a retry of the whole transaction may cure.
bool IsBusy(const std::exception& e);

// Runs `body` (returning Status or Result<T>) inside BEGIN IMMEDIATE ... COMMIT.
// A non-OK result rolls back. SQLITE_BUSY/LOCKED anywhere retries the whole
// transaction a few times with jittered backoff; other exceptions become a
// Status. Never throws.
template <typename F>
auto WithWriteTransaction(SQLite::Database& db, const std::string& path, std::string_view what,
                          F&& body) -> decltype(body()) {
  using R = decltype(body());
  constexpr int kAttempts = 8;
  thread_local std::minstd_rand rng{std::random_device{}()};
  for (int attempt = 1;; ++attempt) {
    try {
      SQLite::Transaction txn(db, SQLite::TransactionBehavior::IMMEDIATE);
      R result = body();
      if (result.ok()) txn.commit();
      return result;  // ~Transaction rolls back when not committed
    } catch (const std::exception& e) {
      if (attempt < kAttempts && IsBusy(e)) {
        const int max_ms = 5 << attempt;
        std::this_thread::sleep_for(
            std::chrono::milliseconds(1 + static_cast<int>(rng() % static_cast<unsigned>(max_ms))));
        continue;
      }
      return R(StatusFromException(e, path, what));
    }
  }
}

// Runs a read-only `body`, converting exceptions. Never throws.
template <typename F>
auto Guarded(const std::string& path, std::string_view what, F&& body) -> decltype(body()) {
  using R = decltype(body());
  try {
    return body();
  } catch (const std::exception& e) {
    return R(StatusFromException(e, path, what));
  }
}

}  // namespace codex::storage::internal
