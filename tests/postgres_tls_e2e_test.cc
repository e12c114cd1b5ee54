// `sslmode=verify-full` against the private PostgreSQL server
// (testing/pg_test_server.h) with a test CA made at test time by the openssl
// CLI: codex works over TLS with the right CA and refuses the server, in one
// line, with another one. Its own binary: the server restarts with TLS on.
// Skipped (exit 4, reason printed) when the PostgreSQL server binaries or
// the openssl CLI are absent.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "testing/pg_test_server.h"
#include "testing/skip.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::ErrorLines;
using e2e::MakeEnv;
using e2e::Run;
using e2e::SessionIdFromBanner;
using storage::testing::PgTestServer;

void OpenSsl(const std::filesystem::path& dir, std::vector<std::string> args) {
  ProcessOptions opts;
  opts.argv = {"openssl"};
  for (auto& a : args) opts.argv.push_back(std::move(a));
  opts.cwd = dir;
  auto r = RunProcess(opts);
  if (!r.ok()) SkipTest("the openssl CLI is not installed (Debian package openssl)");
  INFO("openssl " << args.size() << ": " << r->err);
  REQUIRE(r->exit_code == 0);
}

// A CA named `name` (name.crt, name.key) on P-256 keys.
void MakeCa(const std::filesystem::path& dir, const std::string& name) {
  OpenSsl(dir, {"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-keyout", name + ".key", "-out", name + ".crt", "-days", "2", "-subj",
                "/CN=codex test " + name});
}

TEST_CASE("postgres TLS: verify-full works with the test CA and refuses another CA in one line") {
  std::string why;
  PgTestServer* server = PgTestServer::Get(&why);
  if (server == nullptr) SkipTest(why);
  auto env = MakeEnv(R"(["answer over TLS"])");
  const std::filesystem::path dir = env->root() / "tls";
  std::filesystem::create_directories(dir);
  MakeCa(dir, "ca");
  MakeCa(dir, "other");
  OpenSsl(dir, {"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"});
  std::ofstream(dir / "san.cnf") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
  OpenSsl(dir, {"x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "san.cnf"});
  const int port =
      server->EnableTls((dir / "server.crt").string(), (dir / "server.key").string(), &why);
  INFO(why);
  REQUIRE(port != 0);
  const std::string unix_url = server->NewDatabase();  // postgresql:///NAME?host=...
  const std::string name = unix_url.substr(14, unix_url.find('?') - 14);
  const std::string base =
      "postgresql://codex@localhost:" + std::to_string(port) + "/" + name + "?sslmode=verify-full";

  REQUIRE(env->WriteConfig("session_store = \"" + base +
                           "&sslrootcert=" + (dir / "ca.crt").string() + "\"\n")
              .ok());
  auto run = Run(*env, {"exec", "hello over TLS"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const std::string id = SessionIdFromBanner(run.err);
  auto list = Run(*env, {"sessions", "list", "--all"});
  CHECK(list.exit_code == 0);
  CHECK(list.out.find(id.substr(0, 8)) != std::string::npos);

  // The same server, the wrong CA: refused before anything is sent.
  REQUIRE(env->WriteConfig("session_store = \"" + base +
                           "&sslrootcert=" + (dir / "other.crt").string() + "\"\n")
              .ok());
  auto refused = Run(*env, {"exec", "never sent"});
  INFO(refused.err);
  CHECK(refused.exit_code != 0);
  auto errors = ErrorLines(refused.err);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].rfind("error: cannot connect to PostgreSQL at postgresql://codex@localhost", 0) ==
        0);
  CHECK(errors[0].find("certificate verify failed") != std::string::npos);
  CHECK(env->server().requests_to("/responses").size() == 1);
  // And with no CA at all, verify-full cannot be satisfied: one line too.
  REQUIRE(env->WriteConfig("session_store = \"" + base +
                           "&sslrootcert=" + (dir / "missing.crt").string() + "\"\n")
              .ok());
  auto no_ca = Run(*env, {"sessions", "list"});
  CHECK(no_ca.exit_code != 0);
  CHECK(ErrorLines(no_ca.err).size() == 1);
}

}  // namespace
}  // namespace codex::testing
