#include "storage/libpq.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace codex::storage {
namespace {

LibPq g_libpq{};

// One function of `handle` into `slot`; false (and `*missing` named) when absent.
template <typename Fn>
bool ResolveLibPqSymbol(void* handle, const char* name, Fn* slot, std::string* missing) {
  void* sym = ::dlsym(handle, name);
  if (sym == nullptr) {
    *missing = name;
    return false;
  }
  *slot = reinterpret_cast<Fn>(sym);
  return true;
}

Status LoadLibPqOnce() {
  void* handle = ::dlopen(kLibPqName, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return FailedPreconditionError(std::string("the PostgreSQL session store needs ") + kLibPqName +
                                   ", which cannot be loaded (" + (why ? why : "unknown error") +
                                   "); install libpq5 (apt-get install libpq5) or use a SQLite "
                                   "session_store");
  }
  std::string missing;
  LibPq& t = g_libpq;
  const bool ok =
      ResolveLibPqSymbol(handle, "PQconnectdbParams", &t.connectdb_params, &missing) &&
      ResolveLibPqSymbol(handle, "PQstatus", &t.status, &missing) &&
      ResolveLibPqSymbol(handle, "PQfinish", &t.finish, &missing) &&
      ResolveLibPqSymbol(handle, "PQreset", &t.reset, &missing) &&
      ResolveLibPqSymbol(handle, "PQerrorMessage", &t.error_message, &missing) &&
      ResolveLibPqSymbol(handle, "PQsetNoticeProcessor", &t.set_notice_processor, &missing) &&
      ResolveLibPqSymbol(handle, "PQexec", &t.exec, &missing) &&
      ResolveLibPqSymbol(handle, "PQexecParams", &t.exec_params, &missing) &&
      ResolveLibPqSymbol(handle, "PQresultStatus", &t.result_status, &missing) &&
      ResolveLibPqSymbol(handle, "PQresultErrorField", &t.result_error_field, &missing) &&
      ResolveLibPqSymbol(handle, "PQresultErrorMessage", &t.result_error_message, &missing) &&
      ResolveLibPqSymbol(handle, "PQclear", &t.clear, &missing) &&
      ResolveLibPqSymbol(handle, "PQntuples", &t.ntuples, &missing) &&
      ResolveLibPqSymbol(handle, "PQgetisnull", &t.getisnull, &missing) &&
      ResolveLibPqSymbol(handle, "PQgetvalue", &t.getvalue, &missing) &&
      ResolveLibPqSymbol(handle, "PQgetlength", &t.getlength, &missing) &&
      ResolveLibPqSymbol(handle, "PQcmdTuples", &t.cmd_tuples, &missing);
  if (!ok) {
    return FailedPreconditionError(std::string("the PostgreSQL session store needs ") + kLibPqName +
                                   " with " + missing +
                                   ", which the one loaded lacks; install a current libpq5");
  }
  return OkStatus();
}

}  // namespace

Result<const LibPq*> LoadLibPq() {
  static std::once_flag once;
  static Status loaded;
  std::call_once(once, [] { loaded = LoadLibPqOnce(); });
  if (!loaded.ok()) return loaded;
  return &g_libpq;
}

const LibPq& Pq() { return g_libpq; }

}  // namespace codex::storage
