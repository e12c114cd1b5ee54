#include "testing/pg_test_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include "testing/files.h"

namespace codex::storage::testing {

namespace {

constexpr const char* kUser = "codex";

std::string FindBinDir() {
  if (const char* env = std::getenv("CODEX_PG_BIN"); env && *env) return env;
  for (int v = 17; v >= 13; --v) {
    const std::string dir = "/usr/lib/postgresql/" + std::to_string(v) + "/bin";
    if (::access((dir + "/initdb").c_str(), X_OK) == 0 &&
        ::access((dir + "/pg_ctl").c_str(), X_OK) == 0) {
      return dir;
    }
  }
  return {};
}

// Runs one SQL statement as the superuser on database `db`; "" on success,
// else libpq's message.
std::string RunSql(const std::string& url, const std::string& sql) {
  PGconn* c = PQconnectdb(url.c_str());
  std::string error;
  if (PQstatus(c) != CONNECTION_OK) {
    error = PQerrorMessage(c);
  } else {
    PGresult* r = PQexec(c, sql.c_str());
    const ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) error = PQresultErrorMessage(r);
    PQclear(r);
  }
  PQfinish(c);
  return error;
}

}  // namespace

PgTestServer* PgTestServer::Get(std::string* why_not) {
  static std::unique_ptr<PgTestServer> server;
  static std::string failure;
  static bool tried = false;
  if (!tried) {
    tried = true;
    auto s = std::unique_ptr<PgTestServer>(new PgTestServer());
    if (s->Init(&failure)) server = std::move(s);
  }
  if (!server && why_not) *why_not = failure;
  return server.get();
}

bool PgTestServer::RunAsServerUser(const std::vector<std::string>& argv, std::string* output) {
  // Everything the child needs is prepared before fork: it only makes
  // system calls, then execs.
  std::vector<const char*> args;
  for (const std::string& a : argv) args.push_back(a.c_str());
  args.push_back(nullptr);
  const std::string out_path = root_ + "/command.log";
  uid_t uid = 0;
  gid_t gid = 0;
  if (as_nobody_) {
    const struct passwd* pw = ::getpwnam("nobody");
    if (!pw) return false;
    uid = pw->pw_uid;
    gid = pw->pw_gid;
  }
  const pid_t pid = ::fork();
  if (pid < 0) return false;
  if (pid == 0) {
    const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (as_nobody_) {
      if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) _exit(126);
    }
    ::execv(args[0], const_cast<char* const*>(args.data()));
    _exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (output) *output = ::codex::testing::ReadFile(out_path);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool PgTestServer::Init(std::string* why_not) {
  owner_pid_ = ::getpid();
  bin_dir_ = FindBinDir();
  if (bin_dir_.empty()) {
    *why_not =
        "the PostgreSQL server binaries (initdb, pg_ctl) are not installed: install the Debian "
        "package 'postgresql' (scripts/install-deps.sh) or set CODEX_PG_BIN";
    return false;
  }
  // A short path: the socket path must fit in sun_path (108 bytes).
  std::string tmpl = "/tmp/codex-pg-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    *why_not = "cannot create a temporary directory for PostgreSQL";
    return false;
  }
  root_ = tmpl;
  data_dir_ = root_ + "/data";
  socket_dir_ = root_ + "/sock";
  log_file_ = root_ + "/server.log";
  as_nobody_ = ::geteuid() == 0;
  // Traversable by others (0711): a client in another user namespace (the
  // e2e tests' second "machine", unshare -Ur -u) maps to no owner here.
  ::mkdir(socket_dir_.c_str(), 0711);
  ::chmod(socket_dir_.c_str(), 0711);
  ::chmod(root_.c_str(), 0711);
  if (as_nobody_) {
    // PostgreSQL refuses to run as root: the server user owns the directory.
    const struct passwd* pw = ::getpwnam("nobody");
    if (!pw) {
      *why_not = "running as root and there is no user 'nobody' to run PostgreSQL as";
      return false;
    }
    if (::chown(root_.c_str(), pw->pw_uid, pw->pw_gid) != 0 ||
        ::chown(socket_dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      *why_not = "cannot give " + root_ + " to user nobody";
      return false;
    }
  }
  std::string out;
  if (!RunAsServerUser({bin_dir_ + "/initdb", "-D", data_dir_, "-U", kUser, "-A", "trust", "-E",
                        "UTF8", "--locale=C", "--no-sync", "--no-instructions"},
                       &out)) {
    *why_not = "initdb failed: " + out;
    return false;
  }
  StartWatchdog();
  if (!Start()) {
    *why_not =
        "the private PostgreSQL server did not start: " + ::codex::testing::ReadFile(log_file_);
    return false;
  }
  return true;
}

// A process that outlives a test binary killed without running its exit
// handlers (a crash, ctest's timeout): it waits for the end of a pipe only
// this process writes, then stops the server and removes its directory.
// Everything it needs is prepared before fork.
void PgTestServer::StartWatchdog() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  const std::vector<std::string> stop = {bin_dir_ + "/pg_ctl", "-D", data_dir_, "-m",
                                         "immediate",          "-w", "stop"};
  std::vector<const char*> stop_argv;
  for (const std::string& a : stop) stop_argv.push_back(a.c_str());
  stop_argv.push_back(nullptr);
  const std::vector<std::string> rm = {"/bin/rm", "-rf", root_};
  std::vector<const char*> rm_argv;
  for (const std::string& a : rm) rm_argv.push_back(a.c_str());
  rm_argv.push_back(nullptr);
  uid_t uid = 0;
  gid_t gid = 0;
  if (as_nobody_) {
    const struct passwd* pw = ::getpwnam("nobody");
    if (!pw) return;
    uid = pw->pw_uid;
    gid = pw->pw_gid;
  }
  const bool as_nobody = as_nobody_;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid == 0) {
    ::close(fds[1]);
    // Out of the test's process group and off its output (ctest waits for
    // the output pipes to close).
    ::setsid();
    const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
      ::dup2(devnull, 0);
      ::dup2(devnull, 1);
      ::dup2(devnull, 2);
    }
    char byte;
    while (::read(fds[0], &byte, 1) != 0) {
    }
    const pid_t stopper = ::fork();
    if (stopper == 0) {
      if (as_nobody && (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)) {
        _exit(126);
      }
      ::execv(stop_argv[0], const_cast<char* const*>(stop_argv.data()));
      _exit(127);
    }
    if (stopper > 0) ::waitpid(stopper, nullptr, 0);
    ::execv(rm_argv[0], const_cast<char* const*>(rm_argv.data()));
    _exit(127);
  }
  ::close(fds[0]);
  watchdog_fd_ = fds[1];  // closed by exit, whatever the way
}

bool PgTestServer::Start() {
  // No TCP listener; fsync off (test data need not survive a power cut).
  const std::string options = "-k " + socket_dir_ +
                              " -c listen_addresses='' -c fsync=off -c synchronous_commit=off"
                              " -c full_page_writes=off -c max_connections=120"
                              " -c shared_buffers=64MB";
  std::string tcp = options;
  if (tcp_port_ != 0) {
    tcp = "-k " + socket_dir_ + " -p " + std::to_string(tcp_port_) +
          " -c listen_addresses=127.0.0.1 -c ssl=on -c ssl_cert_file=" + data_dir_ +
          "/server.crt -c ssl_key_file=" + data_dir_ +
          "/server.key -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
          " -c max_connections=120 -c shared_buffers=64MB";
  }
  std::string out;
  running_ = RunAsServerUser({bin_dir_ + "/pg_ctl", "-D", data_dir_, "-l", log_file_, "-w", "-t",
                              "120", "-o", tcp, "start"},
                             &out);
  return running_;
}

bool PgTestServer::Stop() {
  if (!running_) return true;
  std::string out;
  const bool ok = RunAsServerUser(
      {bin_dir_ + "/pg_ctl", "-D", data_dir_, "-m", "fast", "-w", "-t", "60", "stop"}, &out);
  running_ = !ok;
  return ok;
}

PgTestServer::~PgTestServer() {
  if (::getpid() != owner_pid_) return;
  if (running_) {
    std::string out;
    RunAsServerUser({bin_dir_ + "/pg_ctl", "-D", data_dir_, "-m", "immediate", "-w", "stop"}, &out);
  }
  std::error_code ec;
  if (!root_.empty()) std::filesystem::remove_all(root_, ec);
}

std::string PgTestServer::Url(const std::string& name) const {
  std::string url = "postgresql:///" + name + "?host=" + socket_dir_ + "&user=" + kUser;
  if (tcp_port_ != 0) url += "&port=" + std::to_string(tcp_port_);
  return url;
}

int PgTestServer::EnableTls(const std::string& cert_file, const std::string& key_file,
                            std::string* why_not) {
  // A free port: bind to 0, read it back, close (the server binds it next).
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) ::close(fd);
    *why_not = "cannot find a free loopback port";
    return 0;
  }
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  std::error_code ec;
  for (const auto& [from, to] : {std::pair{cert_file, data_dir_ + "/server.crt"},
                                 std::pair{key_file, data_dir_ + "/server.key"}}) {
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
    if (ec || ::chmod(to.c_str(), 0600) != 0) {
      *why_not = "cannot copy " + from + " into the data directory";
      return 0;
    }
    if (as_nobody_) {
      const struct passwd* pw = ::getpwnam("nobody");
      if (!pw || ::chown(to.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        *why_not = "cannot give " + to + " to user nobody";
        return 0;
      }
    }
  }
  if (!Stop()) {
    *why_not = "cannot stop the server to enable TLS";
    return 0;
  }
  tcp_port_ = port;
  if (!Start()) {
    *why_not = "the server did not start with TLS: " + ::codex::testing::ReadFile(log_file_);
    tcp_port_ = 0;
    Start();
    return 0;
  }
  return port;
}

std::string PgTestServer::NewDatabase() {
  const std::string name = "t" + std::to_string(::getpid()) + "_" + std::to_string(++next_db_);
  const std::string error = RunSql(Url("postgres"), "CREATE DATABASE " + name);
  if (!error.empty()) {
    std::fprintf(stderr, "cannot create test database %s: %s\n", name.c_str(), error.c_str());
    std::abort();
  }
  return Url(name);
}

void PgTestServer::TerminateConnections(const std::string& database) {
  RunSql(Url("postgres"),
         "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + database +
             "' AND pid <> pg_backend_pid()");
}

}  // namespace codex::storage::testing
