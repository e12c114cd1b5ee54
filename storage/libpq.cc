#include "storage/libpq.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace codex::storage {
namespace {

LibPq g_libpq{};

// One function of `handle` into `slot`; false (and `*missing` named) when absent.
template <typename Fn>
bool Resolve(void* handle, const char* name, Fn* slot, std::string* missing) {
  void* sym = ::dlsym(handle, name);
  if (sym == nullptr) {
    *missing = name;
    return false;
  }
  *slot = reinterpret_cast<Fn>(sym);
  return true;
}

Status LoadOnce() {
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
  const bool ok = Resolve(handle, "PQconnectdbParams", &t.connectdb_params, &missing) &&
                  Resolve(handle, "PQstatus", &t.status, &missing) &&
                  Resolve(handle, "PQfinish", &t.finish, &missing) &&
                  Resolve(handle, "PQreset", &t.reset, &missing) &&
                  Resolve(handle, "PQerrorMessage", &t.error_message, &missing) &&
                  Resolve(handle, "PQsetNoticeProcessor", &t.set_notice_processor, &missing) &&
                  Resolve(handle, "PQexec", &t.exec, &missing) &&
                  Resolve(handle, "PQexecParams", &t.exec_params, &missing) &&
                  Resolve(handle, "PQresultStatus", &t.result_status, &missing) &&
                  Resolve(handle, "PQresultErrorField", &t.result_error_field, &missing) &&
                  Resolve(handle, "PQresultErrorMessage", &t.result_error_message, &missing) &&
                  Resolve(handle, "PQclear", &t.clear, &missing) &&
                  Resolve(handle, "PQntuples", &t.ntuples, &missing) &&
                  Resolve(handle, "PQgetisnull", &t.getisnull, &missing) &&
                  Resolve(handle, "PQgetvalue", &t.getvalue, &missing) &&
                  Resolve(handle, "PQgetlength", &t.getlength, &missing) &&
                  Resolve(handle, "PQcmdTuples", &t.cmd_tuples, &missing);
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
  std::call_once(once, [] { loaded = LoadOnce(); });
  if (!loaded.ok()) return loaded;
  return &g_libpq;
}

const LibPq& Pq() { return g_libpq; }

}  // namespace codex::storage
