// A private PostgreSQL server for tests and benchmarks (test support; not
// linked into codex). Started once per process on first use: `initdb` and
// `pg_ctl` from the Debian postgresql package (/usr/lib/postgresql/<N>/bin,
// or $CODEX_PG_BIN), a data directory and a Unix socket in a fresh temp
// directory, no TCP listener, trust authentication for the local socket.
// When the process runs as root the server runs as the unprivileged user
// `nobody` (PostgreSQL refuses root), which owns the temp directory. The
// server is stopped and its directory removed at process exit (also after a
// failed test); a forked child that exits with _exit leaves it alone. A
// watchdog process does the same when the binary dies without exit handlers
// (a crash, a timeout's SIGKILL).
//
// Thread-compatible; one server per process.
#pragma once

#include <string>
#include <vector>

namespace codex::storage::testing {

class PgTestServer {
 public:
  // The running server, starting it on the first call; nullptr when the
  // server binaries are absent or the server could not start (then
  // `*why_not` says why).
  static PgTestServer* Get(std::string* why_not);

  // A new, empty database on the server; its libpq URL
  // ("postgresql:///name?host=/tmp/...&user=codex"). Aborts the test binary
  // with a message when the server refuses.
  std::string NewDatabase();

  // The URL of an existing database `name`.
  std::string Url(const std::string& name) const;

  // The socket directory and the superuser the URLs use.
  const std::string& socket_dir() const { return socket_dir_; }

  // Kills every connection to `database` (a server restart seen from those
  // clients): the next statement of each finds its connection lost.
  void TerminateConnections(const std::string& database);

  // Restarts the server also listening on 127.0.0.1 at a free port with
  // TLS on, serving the PEM certificate and key files given (copied into the
  // data directory for the server user). Returns the port (URLs from Url and
  // NewDatabase name it from then on), or 0 with `*why_not` set.
  int EnableTls(const std::string& cert_file, const std::string& key_file, std::string* why_not);

  // Stops the server now (fast shutdown) / starts it again on the same data.
  bool Stop();
  bool Start();

  ~PgTestServer();

 private:
  PgTestServer() = default;
  bool Init(std::string* why_not);
  void StartWatchdog();
  bool RunAsServerUser(const std::vector<std::string>& argv, std::string* output);

  std::string bin_dir_;
  std::string root_;  // the temp directory
  std::string data_dir_;
  std::string socket_dir_;
  std::string log_file_;
  int next_db_ = 0;
  int tcp_port_ = 0;  // 0 = Unix socket only
  bool as_nobody_ = false;
  bool running_ = false;
  int owner_pid_ = 0;     // only the process that started it stops it
  int watchdog_fd_ = -1;  // the watchdog stops the server when this closes
};

}  // namespace codex::storage::testing
