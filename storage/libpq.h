// The PostgreSQL store's one door to libpq. libpq and its tree (Kerberos,
// LDAP, SASL, GnuTLS, ...: about 30 libraries) are not linked into codex:
// the first PostgreSQL store a run opens loads libpq.so.5 with dlopen, so a
// run against SQLite never maps them (tests/lean_start_e2e_test.cc). Only the
// libpq functions the store calls are resolved; the types and constants come
// from <libpq-fe.h> as usual.
//
// Thread-safe: the first LoadLibPq() loads, every later call returns the
// same table; the library is never unloaded.
#pragma once

#include <libpq-fe.h>

#include "base/status.h"

namespace codex::storage {

// Pointers to the libpq functions the PostgreSQL store uses, named after them.
struct LibPq {
  decltype(&::PQconnectdbParams) connectdb_params;
  decltype(&::PQstatus) status;
  decltype(&::PQfinish) finish;
  decltype(&::PQreset) reset;
  decltype(&::PQerrorMessage) error_message;
  decltype(&::PQsetNoticeProcessor) set_notice_processor;
  decltype(&::PQexec) exec;
  decltype(&::PQexecParams) exec_params;
  decltype(&::PQresultStatus) result_status;
  decltype(&::PQresultErrorField) result_error_field;
  decltype(&::PQresultErrorMessage) result_error_message;
  decltype(&::PQclear) clear;
  decltype(&::PQntuples) ntuples;
  decltype(&::PQgetisnull) getisnull;
  decltype(&::PQgetvalue) getvalue;
  decltype(&::PQgetlength) getlength;
  decltype(&::PQcmdTuples) cmd_tuples;
};

// The shared object loaded: libpq's soname (Debian package libpq5).
inline constexpr const char* kLibPqName = "libpq.so.5";

// Loads libpq on first use. kFailedPrecondition, one line naming the library,
// why it could not be loaded and what to do, when it is missing or lacks a
// function.
Result<const LibPq*> LoadLibPq();

// The loaded table: only after LoadLibPq() succeeded (PostgresSessionStore
// loads it before its first connection).
const LibPq& Pq();

}  // namespace codex::storage
