// Lean start (issue 24): a run maps only the libraries it uses. The
// PostgreSQL store's libpq and its tree (Kerberos, LDAP, SASL, GnuTLS ...)
// are loaded when a postgresql:// store is opened (storage/libpq.h), never
// for a SQLite run; a missing libpq is one line naming it. OpenSSL is loaded
// by the first https connection (core/http_client.h), never for an http://
// endpoint, and cpp-httplib only by the session viewer's module. Each case
// reads the running codex's /proc/PID/maps while it waits on a server, or
// the dynamic loader's own trace (LD_DEBUG=files) of a short run.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "testing/pg_test_server.h"
#include "testing/skip.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::ErrorLines;
using e2e::MakeEnv;
using e2e::WaitForRequests;

// The file names of the shared objects `pid` maps ("libpq.so.5", ...).
std::set<std::string> MappedLibraries(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::set<std::string> names;
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string name = std::filesystem::path(line.substr(slash)).filename().string();
    if (name.find(".so") != std::string::npos) names.insert(name);
  }
  return names;
}

bool MapsOneOf(const std::set<std::string>& libs, const std::string& prefix) {
  for (const auto& l : libs) {
    if (l.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// Starts `codex exec` in `env`, waits until its request reached the server
// (whose answer is held back), and returns what it maps then. The run is
// killed afterwards: only its libraries matter here.
std::set<std::string> LibrariesWhileWaiting(CodexTestEnv& env) {
  auto child = ChildProcess::Spawn(env.CodexCommand({"exec", "say hi"}));
  REQUIRE(child.ok());
  REQUIRE(WaitForRequests(env, 1));
  std::set<std::string> libs = MappedLibraries((*child)->pid());
  REQUIRE((*child)->Signal(SIGKILL).ok());
  auto done = (*child)->Wait(std::chrono::seconds(30));
  REQUIRE(done.ok());
  return libs;
}

constexpr const char* kHeldAnswer = R"([{"message": "late", "delay_ms": 60000}])";

TEST_CASE(
    "an exec against a SQLite store and an http:// endpoint maps no libpq, no OpenSSL, no "
    "httplib") {
  auto env = MakeEnv(kHeldAnswer);
  const std::set<std::string> libs = LibrariesWhileWaiting(*env);
  INFO(Catch::Detail::stringify(libs));
  // The reader sees what the run uses: the store is open, the request went out.
  CHECK(MapsOneOf(libs, "libsqlite3.so"));
  CHECK(MapsOneOf(libs, "libc.so"));
  for (const char* unused :
       {"libpq.so", "libgssapi_krb5.so", "libkrb5.so", "libldap", "libsasl2.so", "libgnutls.so",
        "libssl.so", "libcrypto.so", "libcpp-httplib.so", "codex-viewer-http.so"}) {
    INFO(unused);
    CHECK_FALSE(MapsOneOf(libs, unused));
  }
}

TEST_CASE("a postgresql:// store loads libpq when it is opened") {
  std::string why;
  auto* server = storage::testing::PgTestServer::Get(&why);
  if (server == nullptr) {
    SkipPart(why);
    return;
  }
  auto env = MakeEnv(kHeldAnswer, "session_store = \"" + server->NewDatabase() + "\"\n");
  const std::set<std::string> libs = LibrariesWhileWaiting(*env);
  INFO(Catch::Detail::stringify(libs));
  CHECK(MapsOneOf(libs, "libpq.so"));
  CHECK(MapsOneOf(libs, "libgssapi_krb5.so"));
}

TEST_CASE("codex --version loads neither OpenSSL nor httplib") {
  auto env = MakeEnv(R"(["never asked"])");
  ProcessOptions run = env->CodexCommand({"--version"});
  run.env["LD_DEBUG"] = "files";
  ProcessResult result = e2e::RunChecked(run);
  INFO("stderr: " << result.err.substr(0, 8000));
  CHECK(result.exit_code == 0);
  // The trace is there (it names the C library codex is linked to) ...
  REQUIRE(result.err.find("file=libc.so") != std::string::npos);
  // ... and names none of these, linked or opened.
  for (const char* unused : {"libssl.so", "libcrypto.so", "libcpp-httplib.so", "libpq.so"}) {
    INFO(unused);
    CHECK(result.err.find(unused) == std::string::npos);
  }
}

TEST_CASE("an https:// endpoint loads OpenSSL when it connects") {
  // A loopback listener that never answers: the TCP connect completes in the
  // kernel, then codex loads OpenSSL and waits for the TLS server's hello.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const std::string base = "https://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/v1";

  auto env = MakeEnv(R"(["never asked"])");
  auto child = ChildProcess::Spawn(env->CodexCommand(
      {"-c", "model_providers.scripted.base_url=\"" + base + "\"", "exec", "say hi"}));
  REQUIRE(child.ok());
  std::set<std::string> libs;
  for (int i = 0; i < 600 && !MapsOneOf(libs, "libssl.so"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    libs = MappedLibraries((*child)->pid());
  }
  REQUIRE((*child)->Signal(SIGKILL).ok());
  REQUIRE((*child)->Wait(std::chrono::seconds(30)).ok());
  ::close(listener);
  INFO(Catch::Detail::stringify(libs));
  CHECK(MapsOneOf(libs, "libssl.so"));
  CHECK(MapsOneOf(libs, "libcrypto.so"));
  CHECK_FALSE(MapsOneOf(libs, "libcpp-httplib.so"));
}

// The real file of the libpq this test links (the one codex would dlopen).
std::filesystem::path LibPqFile() {
  Dl_info info{};
  REQUIRE(::dladdr(reinterpret_cast<void*>(&::PQclear), &info) != 0);
  REQUIRE(info.dli_fname != nullptr);
  return std::filesystem::canonical(info.dli_fname);
}

TEST_CASE("a postgresql:// store without libpq is one line naming it, before any connection") {
  // libpq hidden from codex alone: a private mount namespace with an empty
  // file over it.
  const std::string libpq = LibPqFile().string();
  ProcessOptions probe;
  probe.argv = {"unshare", "-Urm", "sh", "-c", "mount --bind /dev/null \"$0\"", libpq};
  auto probed = RunProcess(probe);
  if (!probed.ok() || probed->exit_code != 0) {
    SkipPart("cannot hide libpq: unprivileged mount namespaces are unavailable here");
    return;
  }
  // Port 1: a connection attempt would fail with another message.
  auto env =
      MakeEnv(R"(["never asked"])", "session_store = \"postgresql://codex@127.0.0.1:1/codex\"\n");
  ProcessOptions run = env->CodexCommand({"exec", "say hi"});
  std::vector<std::string> argv = {
      "unshare", "-Urm", "sh", "-c", "mount --bind /dev/null \"$0\" && exec \"$@\"", libpq};
  argv.insert(argv.end(), run.argv.begin(), run.argv.end());
  run.argv = argv;
  ProcessResult result = e2e::RunChecked(run);
  INFO("stderr: " << result.err);
  CHECK(result.exit_code != 0);
  const auto errors = ErrorLines(result.err);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("libpq.so.5") != std::string::npos);
  CHECK(errors[0].find("install libpq5") != std::string::npos);
  CHECK(errors[0].find("connect") == std::string::npos);
  CHECK(env->server().requests_to("/responses").empty());
}

}  // namespace
}  // namespace codex::testing
