// The sandbox's red-team suite (issue 10): every attack of the review, and
// more, run against the real `codex` binary, both through `codex sandbox` and
// through the model's shell tool in `codex exec` with the scripted server.
// Attacks are made by tests/escape_probe.cc (one system call each) or by a
// shell. Runs as the invoking user (root in CI) and, when root, again as
// nobody through setpriv. Without Landlock or working namespaces the cases
// print why and return; docs/threat-model.md maps each layer to the case
// that shows it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/shell.h"
#include "sandbox/landlock.h"
#include "sandbox/launcher.h"
#include "sandbox/shell_lexer.h"
#include "testing/eventually.h"
#include "testing/files.h"
#include "testing/loopback_listener.h"
#include "testing/skip.h"
#include "testing/temp_dir.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::OutputFor;

constexpr char kSecret[] = "sk-escape-suite-SECRET-4242";

std::string Quoted(const std::string& s) { return Json(s).dump(); }

// The two tools a model runs commands with: a rule about the sandbox is
// checked through both.
enum class ModelDoor { kShell, kExecCommand };

const char* DoorName(ModelDoor door) {
  return door == ModelDoor::kShell ? "shell" : "exec_command";
}

// A scripted response calling `door` with the shell command `script` under `call_id`.
std::string DoorCall(ModelDoor door, const std::string& script, const std::string& call_id) {
  Json call;
  if (door == ModelDoor::kShell) {
    call = {{"shell", Json::array({"sh", "-c", script})}, {"call_id", call_id}};
  } else {
    call = {{"function_call", "exec_command"},
            {"call_id", call_id},
            {"arguments", {{"cmd", script}, {"login", false}, {"yield_time_ms", 10000}}}};
  }
  return Json{{"output", Json::array({call})}}.dump();
}

bool SandboxAvailable() {
  if (sandbox::landlock::AbiVersion() < 1 && !sandbox::ProbeBwrap().usable) {
    codex::testing::SkipPart("neither Landlock nor user namespaces here: escape suite skipped");
    return false;
  }
  return true;
}

// A scratch directory under /tmp (a writable root of workspace-write, like
// many real workspaces), world-accessible so that nobody can use it too.
struct Scratch : TempDir {
  Scratch() : TempDir("codex-escape-", "/tmp") { fs::permissions(path(), fs::perms::all); }
};

// A host UNIX listener (pathname or abstract) that records whether anyone
// connected.
class UnixListener {
 public:
  UnixListener(const std::string& name, bool abstract) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    size_t off = abstract ? 1 : 0;
    REQUIRE(name.size() + off < sizeof(addr.sun_path));
    std::memcpy(addr.sun_path + off, name.data(), name.size());
    auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + off + name.size() +
                                      (abstract ? 0 : 1));
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0);
    if (!abstract) ::chmod(name.c_str(), 0777);
    REQUIRE(::listen(fd_, 8) == 0);
  }
  ~UnixListener() { ::close(fd_); }
  bool Connected() const {
    int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return false;
    ::close(c);
    return true;
  }

 private:
  int fd_ = -1;
};

// Who runs codex: the invoking user, or nobody (when the invoker is root).
enum class As { kInvoker, kNobody };

std::vector<As> Users() {
  if (::getuid() != 0) return {As::kInvoker};
  ProcessOptions check;
  check.argv = {"setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                CODEX_BINARY,
                "sandbox",
                "-s",
                "danger-full-access",
                "--",
                ESCAPE_PROBE,
                "kill",
                "0"};
  auto r = RunProcess(check);
  if (!r.ok() || r->exit_code != 0) {
    WARN(
        "cannot run codex as nobody (setpriv missing or the binary not reachable): "
        "unprivileged cases skipped");
    return {As::kInvoker};
  }
  return {As::kInvoker, As::kNobody};
}

// `codex sandbox ARGS...` as `as`, with a secret in codex's environment.
ProcessResult Sandbox(As as, std::vector<std::string> args, const fs::path& cwd,
                      const std::map<std::string, std::string>& extra_env = {}) {
  ProcessOptions p;
  if (as == As::kNobody) {
    p.argv = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  }
  p.argv.push_back(CODEX_BINARY);
  p.argv.push_back("sandbox");
  p.argv.insert(p.argv.end(), args.begin(), args.end());
  p.env["OPENAI_API_KEY"] = kSecret;
  for (const auto& [k, v] : extra_env) p.env[k] = v;
  p.cwd = cwd;
  auto r = RunProcess(p);
  REQUIRE(r.ok());
  INFO("stdout: " << r->out << "\nstderr: " << r->err);
  REQUIRE_FALSE(r->timed_out);
  return *r;
}

std::vector<std::string> ProbeArgs(const std::string& mode, std::vector<std::string> op) {
  std::vector<std::string> args = {"-s", mode, "--", ESCAPE_PROBE};
  args.insert(args.end(), op.begin(), op.end());
  return args;
}

std::string Trim(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

std::string Survivors(const std::string& marker) {
  ProcessOptions p;
  p.argv = {"pgrep", "-f", marker};
  auto r = RunProcess(p);
  REQUIRE(r.ok());
  return r->out;
}

void KillSurvivors(const std::string& marker) {
  ProcessOptions p;
  p.argv = {"pkill", "-KILL", "-f", marker};
  (void)RunProcess(p);
}

}  // namespace

TEST_CASE("codex sandbox: no socket of the host is reachable with the network off") {
  if (!SandboxAvailable()) return;
  const As as = GENERATE(from_range(Users()));
  INFO((as == As::kNobody ? "as nobody" : "as the invoking user"));
  Scratch s;
  const std::string path = (s.path() / "agent.sock").string();
  const std::string abstract = "codex-escape-" + std::to_string(::getpid());
  UnixListener pathname_listener(path, false);
  UnixListener abstract_listener(abstract, true);
  LoopbackListener tcp;
  for (const std::string mode : {"read-only", "workspace-write"}) {
    INFO(mode);
    CHECK(Trim(Sandbox(as, ProbeArgs(mode, {"connect-unix", path}), s.path()).out) ==
          "denied EPERM");
    CHECK(Trim(Sandbox(as, ProbeArgs(mode, {"connect-abstract", abstract}), s.path()).out) ==
          "denied EPERM");
    CHECK(Trim(Sandbox(as, ProbeArgs(mode, {"connect-tcp", std::to_string(tcp.port())}), s.path())
                   .out) == "denied EPERM");
    for (const char* family : {"netlink", "packet", "inet6"}) {
      CHECK(Trim(Sandbox(as, ProbeArgs(mode, {"socket", family, "raw"}), s.path()).out) ==
            "denied EPERM");
    }
    CHECK(Trim(Sandbox(as, ProbeArgs(mode, {"socketpair", "stream"}), s.path()).out) == "ok");
    // A real client, as in the review: tmux/ssh-agent style.
    auto shell = Sandbox(
        as,
        {"-s", mode, "--", "sh", "-c", "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(tcp.port())},
        s.path());
    CHECK(shell.exit_code != 0);
  }
  CHECK_FALSE(pathname_listener.Connected());
  CHECK_FALSE(abstract_listener.Connected());
  // network on: inet only, host UNIX sockets still out of reach.
  CHECK(Trim(Sandbox(as,
                     {"-s", "workspace-write", "--network", "--", ESCAPE_PROBE, "connect-tcp",
                      std::to_string(tcp.port())},
                     s.path())
                 .out) == "ok");
  CHECK(
      Trim(Sandbox(as,
                   {"-s", "workspace-write", "--network", "--", ESCAPE_PROBE, "connect-unix", path},
                   s.path())
               .out) == "denied EPERM");
  CHECK_FALSE(pathname_listener.Connected());
}

TEST_CASE("codex sandbox: no privileges, no host processes, no secrets") {
  if (!SandboxAvailable()) return;
  const As as = GENERATE(from_range(Users()));
  INFO((as == As::kNobody ? "as nobody" : "as the invoking user"));
  Scratch s;
  for (const std::string mode : {"read-only", "workspace-write"}) {
    INFO(mode);
    auto caps = Sandbox(as, ProbeArgs(mode, {"caps"}), s.path());
    CHECK(caps.exit_code == 0);
    CHECK_THAT(caps.out, Catch::Contains("CapEff:\t0000000000000000"));
    for (const char* op : {"settimeofday", "clock_settime", "adjtimex", "reboot", "sethostname",
                           "mount", "unshare", "keyctl", "bpf", "perf", "finit_module"}) {
      INFO(op);
      CHECK(Trim(Sandbox(as, ProbeArgs(mode, {op}), s.path()).out) == "denied EPERM");
    }
    // The review's known-safe `date --se=...`: the clock stays.
    auto date = Sandbox(as, {"-s", mode, "--", "sh", "-c", "date --se=@$(date +%s)"}, s.path());
    CHECK(date.exit_code != 0);
    // Our own environment, and codex's, through /proc: another host process.
    auto env_read = Sandbox(as,
                            {"-s", mode, "--", "sh", "-c",
                             "cat /proc/" + std::to_string(::getppid()) + "/environ /proc/" +
                                 std::to_string(::getpid()) +
                                 "/environ; for f in /proc/[0-9]*/environ; do cat $f; done"},
                            s.path());
    CHECK(env_read.out.find(kSecret) == std::string::npos);
    CHECK(env_read.err.find(kSecret) == std::string::npos);
  }
}

TEST_CASE("codex sandbox: .git in a repository under /tmp; the repository top is writable") {
  if (!SandboxAvailable()) return;
  if (!sandbox::ProbeBwrap().usable) {
    codex::testing::SkipPart("no namespaces here: " + sandbox::ProbeBwrap().reason +
                             "; .git under /tmp skipped");
    return;
  }
  Scratch s;
  const fs::path repo = s.path() / "repo";
  fs::create_directories(repo);
  ProcessOptions init;
  init.argv = {"git", "init", "-q", repo.string()};
  auto r = RunProcess(init);
  REQUIRE(r.ok());
  REQUIRE(r->exit_code == 0);
  std::ofstream(repo / "a.txt") << "a\n";
  std::ofstream(repo / "b.txt") << "b\n";
  const std::string config = ReadFile(repo / ".git" / "config");
  auto attack = Sandbox(As::kInvoker,
                        {"-s", "workspace-write", "--", "sh", "-c",
                         "echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config; "
                         "echo x > .git/hooks/post-checkout; mv .git .git2; rm -rf .git; "
                         "git config core.fsmonitor 'touch /tmp/pwned'"},
                        repo);
  CHECK(ReadFile(repo / ".git" / "config") == config);
  CHECK_FALSE(fs::exists(repo / ".git" / "hooks" / "post-checkout"));
  CHECK_FALSE(fs::exists(repo / ".git2"));
  // A developer's workspace-write: new top-level entries, removals, renames.
  auto dev = Sandbox(As::kInvoker,
                     {"-s", "workspace-write", "--", "sh", "-c",
                      "mkdir build && echo x > build/CMakeCache.txt && touch new.txt && rm a.txt "
                      "&& mv b.txt c.txt"},
                     repo);
  CHECK(dev.exit_code == 0);
  CHECK(fs::exists(repo / "build" / "CMakeCache.txt"));
  CHECK(fs::exists(repo / "new.txt"));
  CHECK_FALSE(fs::exists(repo / "a.txt"));
  CHECK(fs::exists(repo / "c.txt"));
  // The workspace under an --add-dir parent: its .git stays read-only there too.
  auto parent = Sandbox(As::kInvoker,
                        {"-s", "workspace-write", "--add-dir", s.path().string(), "--", "sh", "-c",
                         "echo ok > ../beside && echo evil >> ../repo/.git/config"},
                        repo);
  CHECK(parent.exit_code != 0);
  CHECK(fs::exists(s.path() / "beside"));
  CHECK(ReadFile(repo / ".git" / "config") == config);
}

TEST_CASE("codex sandbox --explain names the layers") {
  if (!SandboxAvailable()) return;
  Scratch s;
  auto r = Sandbox(As::kInvoker, {"-s", "workspace-write", "--explain"}, s.path());
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("mode: workspace-write, network off\n"));
  for (const char* layer : {"namespaces", "landlock", "capabilities", "seccomp"}) {
    CHECK_THAT(r.out, Catch::Contains(std::string("\n") + layer));
  }
  if (sandbox::ProbeBwrap().usable) CHECK_THAT(r.out, Catch::Contains("namespaces    on"));
}

TEST_CASE("codex exec: the model's shell cannot escape, read keys, or leave daemons") {
  if (!SandboxAvailable()) return;
  Scratch s;
  const std::string path = (s.path() / "tmux.sock").string();
  const std::string abstract = "codex-escape-exec-" + std::to_string(::getpid());
  UnixListener pathname_listener(path, false);
  UnixListener abstract_listener(abstract, true);
  const std::string marker = "codex-escape-daemon-" + std::to_string(::getpid());
  const std::string me = std::to_string(::getpid());
  const std::string environ_scan =
      "cat /proc/" + me + "/environ; for f in /proc/[0-9]*/environ; do cat $f; done; echo scanned";
  const std::string daemons = "setsid sh -c 'exec -a " + marker +
                              " sleep 300' </dev/null >/dev/null 2>&1 & (sh -c 'exec -a " + marker +
                              " sleep 300' </dev/null >/dev/null 2>&1 &); echo started";
  const std::string stubborn =
      "setsid sh -c 'exec -a " + marker + " sleep 300' </dev/null >/dev/null 2>&1 & sleep 300";
  CodexTestEnvOptions options;
  options.api_key = kSecret;
  ::setenv("CODEX_ESCAPE_TEST_SECRET", kSecret, 1);  // this process: another host process
  const std::string probe = ShellQuote(ESCAPE_PROBE);
  // Every attack through both of the model's doors: `shell` and `exec_command`.
  for (const ModelDoor door : {ModelDoor::kShell, ModelDoor::kExecCommand}) {
    INFO("door: " << DoorName(door));
    std::string script = R"({"responses": [)";
    for (const auto& [cmd, id] : std::vector<std::pair<std::string, std::string>>{
             {probe + " connect-unix " + ShellQuote(path), "unix"},
             {probe + " connect-abstract " + ShellQuote(abstract), "abstract"},
             {environ_scan, "environ"},
             {probe + " caps", "caps"},
             {probe + " settimeofday", "clock"},
             {"echo x >> .git/config", "git"},
             {"mkdir -p build && touch top.txt && echo made", "top"},
             {daemons, "daemons"}}) {
      script += DoorCall(door, cmd, id) + ",";
    }
    // A command that outlives its call: the shell tool's timeout, or a
    // unified exec session still running when the turn ends.
    Json stubborn_call = Json::parse(DoorCall(door, stubborn, "timeout"));
    if (door == ModelDoor::kShell) {
      stubborn_call["output"][0]["timeout_ms"] = 500;
    } else {
      stubborn_call["output"][0]["arguments"]["yield_time_ms"] = 500;
    }
    script += stubborn_call.dump() + R"(, "done"]})";
    auto env = CodexTestEnv::Create(script, options);
    REQUIRE(env.ok());
    CodexTestEnv& e = **env;
    const fs::path ws = e.workdir();
    ProcessOptions init;
    init.argv = {"git", "init", "-q", ws.string()};
    auto gi = RunProcess(init);
    REQUIRE(gi.ok());
    const std::string config = ReadFile(ws / ".git" / "config");

    ProcessOptions p = e.CodexCommand({"exec", "--full-auto", "attack"});
    p.env["OPENAI_API_KEY"] = kSecret;
    auto run = RunProcess(p);
    REQUIRE(run.ok());
    INFO("stderr: " << run->err);
    CHECK(run->exit_code == 0);
    const std::string remaining = Survivors(marker);
    KillSurvivors(marker);
    CHECK(remaining.empty());

    auto requests = e.server().requests_to("/responses");
    REQUIRE_FALSE(requests.empty());
    auto output = [&](const std::string& id) {
      std::string text = OutputFor(requests.back().InputItems(), id);
      Json j = Json::parse(text, nullptr, false);
      return j.is_object() ? j.value("output", std::string()) : text;
    };
    CHECK_THAT(output("unix"), Catch::Contains("denied EPERM"));
    CHECK_THAT(output("abstract"), Catch::Contains("denied EPERM"));
    CHECK_FALSE(pathname_listener.Connected());
    CHECK_FALSE(abstract_listener.Connected());
    CHECK_THAT(output("environ"), Catch::Contains("scanned"));
    CHECK(output("environ").find(kSecret) == std::string::npos);
    CHECK_THAT(output("caps"), Catch::Contains("CapEff:\t0000000000000000"));
    CHECK_THAT(output("clock"), Catch::Contains("denied EPERM"));
    CHECK(ReadFile(ws / ".git" / "config") == config);
    if (sandbox::ProbeBwrap().usable) {
      CHECK_THAT(output("top"), Catch::Contains("made"));
      CHECK(fs::is_directory(ws / "build"));
    }
    CHECK_THAT(output("daemons"), Catch::Contains("started"));
    CHECK_THAT(output("timeout"),
               Catch::Contains(door == ModelDoor::kShell ? "timed out"
                                                         : "Process running with session ID"));
  }
}

// Without bubblewrap (CODEX_SANDBOX_BWRAP naming no executable) the command
// runs under Landlock + seccomp alone, which still keep the host's UNIX
// sockets and codex's secrets out; without Landlock too, codex refuses.
TEST_CASE("no bubblewrap: the Landlock + seccomp fallback, or a refusal naming the way out") {
  const std::map<std::string, std::string> no_bwrap = {{"CODEX_SANDBOX_BWRAP", "/nonexistent"}};
  Scratch s;
  const std::string path = (s.path() / "agent.sock").string();
  const std::string abstract = "codex-escape-nobwrap-" + std::to_string(::getpid());
  UnixListener pathname_listener(path, false);
  UnixListener abstract_listener(abstract, true);

  auto explain = Sandbox(As::kInvoker, {"--explain"}, s.path(), no_bwrap);
  if (sandbox::landlock::AbiVersion() < 1) {
    codex::testing::SkipPart("no Landlock here: only the refusal is checked");
    CHECK(explain.exit_code != 0);
    auto run = Sandbox(As::kInvoker, {"--", "true"}, s.path(), no_bwrap);
    CHECK(run.exit_code != 0);
    CHECK_THAT(run.err, Catch::StartsWith("error: ") && Catch::Contains("cannot enforce") &&
                            Catch::Contains("install bubblewrap") &&
                            Catch::Contains("--sandbox danger-full-access"));
    return;
  }
  CHECK(explain.exit_code == 0);
  CHECK_THAT(explain.out, Catch::Contains("namespaces    off") &&
                              Catch::Contains("not found at CODEX_SANDBOX_BWRAP=/nonexistent"));
  CHECK_THAT(explain.out, Catch::Contains("landlock      on"));
  CHECK_THAT(explain.out, Catch::Contains("seccomp       on"));

  for (const std::string mode : {"read-only", "workspace-write"}) {
    INFO(mode);
    CHECK(Trim(Sandbox(As::kInvoker, ProbeArgs(mode, {"connect-unix", path}), s.path(), no_bwrap)
                   .out) == "denied EPERM");
    CHECK(Trim(Sandbox(As::kInvoker, ProbeArgs(mode, {"connect-abstract", abstract}), s.path(),
                       no_bwrap)
                   .out) == "denied EPERM");
    auto env_read = Sandbox(As::kInvoker,
                            {"-s", mode, "--", "sh", "-c",
                             "env; for f in /proc/[0-9]*/environ; do cat $f; done; echo scanned"},
                            s.path(), no_bwrap);
    CHECK_THAT(env_read.out, Catch::Contains("scanned"));
    CHECK(env_read.out.find(kSecret) == std::string::npos);
    CHECK(env_read.err.find(kSecret) == std::string::npos);
  }

  // The same through the model's shell in `codex exec`.
  CodexTestEnvOptions options;
  options.api_key = kSecret;
  auto env = CodexTestEnv::Create(R"({"responses": [
    {"output": [{"shell": [)" + Quoted(ESCAPE_PROBE) +
                                      R"(, "connect-unix", )" + Quoted(path) +
                                      R"(], "call_id": "unix"}]},
    {"output": [{"shell": ["sh", "-c", "env; for f in /proc/[0-9]*/environ; do cat $f; done; echo scanned"],
                 "call_id": "environ"}]},
    "done"]})",
                                  options);
  REQUIRE(env.ok());
  ProcessOptions p = (*env)->CodexCommand({"exec", "--full-auto", "attack"});
  p.env["OPENAI_API_KEY"] = kSecret;
  p.env["CODEX_SANDBOX_BWRAP"] = "/nonexistent";
  auto run = RunProcess(p);
  REQUIRE(run.ok());
  INFO("stderr: " << run->err);
  CHECK(run->exit_code == 0);
  auto requests = (*env)->server().requests_to("/responses");
  REQUIRE_FALSE(requests.empty());
  auto output = [&](const std::string& id) {
    std::string text = OutputFor(requests.back().InputItems(), id);
    Json j = Json::parse(text, nullptr, false);
    return j.is_object() ? j.value("output", std::string()) : text;
  };
  CHECK_THAT(output("unix"), Catch::Contains("denied EPERM"));
  CHECK_THAT(output("environ"), Catch::Contains("scanned"));
  CHECK(output("environ").find(kSecret) == std::string::npos);
  CHECK_FALSE(pathname_listener.Connected());
  CHECK_FALSE(abstract_listener.Connected());
}

}  // namespace codex::testing

namespace codex::testing {

// PR_SET_DUMPABLE 0 is what keeps a process of the same uid (outside any
// sandbox, or inside one without namespaces) from reading codex's environ.
// Root is kept out by its capabilities anyway, so both run as nobody.
TEST_CASE("codex is not dumpable: the same uid cannot read its environ") {
  if (::getuid() != 0 || Users().size() < 2) {
    WARN("needs root (to run codex and the reader as nobody): skipped");
    return;
  }
  CodexTestEnvOptions options;
  options.api_key = kSecret;
  auto env = CodexTestEnv::Create(
      R"({"responses": [{"message": "late", "header_delay_ms": 4000}]})", options);
  REQUIRE(env.ok());
  CodexTestEnv& e = **env;
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(e.root(), ec)) {
    ::lchown(entry.path().c_str(), 65534, 65534);
  }
  ::lchown(e.root().c_str(), 65534, 65534);
  ProcessOptions p = e.CodexCommand({"exec", "wait for the server"});
  p.argv.insert(p.argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  auto codex = ChildProcess::Spawn(p);
  REQUIRE(codex.ok());
  // Wait until codex is inside the request (it is then past its startup).
  REQUIRE(e2e::WaitForRequests(e, 1));
  auto read_as_nobody = [](pid_t pid) {
    ProcessOptions r;
    r.argv = {"setpriv",        "--reuid=65534", "--regid=65534",
              "--clear-groups", "cat",           "/proc/" + std::to_string(pid) + "/environ"};
    auto out = RunProcess(r);
    REQUIRE(out.ok());
    return *out;
  };
  auto codex_environ = read_as_nobody((*codex)->pid());
  CHECK(codex_environ.exit_code != 0);
  CHECK(codex_environ.out.find(kSecret) == std::string::npos);
  // The control: a dumpable process of nobody's is readable.
  ProcessOptions sleeper_options;
  sleeper_options.argv = {"setpriv",        "--reuid=65534", "--regid=65534",
                          "--clear-groups", "sleep",         "30"};
  sleeper_options.env["CODEX_DUMPABLE_CONTROL"] = "visible";
  auto sleeper = ChildProcess::Spawn(sleeper_options);
  REQUIRE(sleeper.ok());
  // Read once setpriv has become `sleep` as nobody (before, it is root's).
  const std::string comm = "/proc/" + std::to_string((*sleeper)->pid()) + "/comm";
  REQUIRE(Eventually([&] { return ReadFile(comm) == "sleep\n"; }));
  CHECK_THAT(read_as_nobody((*sleeper)->pid()).out, Catch::Contains("CODEX_DUMPABLE_CONTROL"));
}

}  // namespace codex::testing

namespace codex::testing {
namespace {

// Issue 23: the scenes of the workspace policy, each a directory under a
// scratch dir in /tmp (itself a writable root), an attack script run from
// `cwd`, and what must hold on the host afterwards.
struct PolicyScene {
  std::string name;
  fs::path cwd;
  std::string attack;
  std::function<void()> check;
};

void Git(const fs::path& cwd, std::vector<std::string> args) {
  ProcessOptions p;
  p.argv = {"git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"};
  p.argv.insert(p.argv.end(), args.begin(), args.end());
  p.cwd = cwd;
  auto r = RunProcess(p);
  REQUIRE(r.ok());
  INFO("git " << args[0] << ": " << r->err);
  REQUIRE(r->exit_code == 0);
}

std::vector<PolicyScene> PolicyScenes(const fs::path& base) {
  std::vector<PolicyScene> scenes;
  // A workspace that is not a git repository.
  const fs::path plain = base / "plain";
  fs::create_directories(plain);
  scenes.push_back({"git init in a non-git workspace, then core.fsmonitor", plain,
                    "git init -q . ; git config core.fsmonitor 'touch " +
                        (base / "PWNED").string() +
                        "'; mkdir -p .git/hooks; echo '[core]' > .git/config",
                    [plain] {
                      CHECK_FALSE(fs::exists(plain / ".git" / "config"));
                      CHECK_FALSE(fs::exists(plain / ".git" / "HEAD"));
                    }});
  scenes.push_back({".codex/config.toml in a workspace without one", plain,
                    "mkdir -p .codex; echo 'sandbox_mode = \"danger-full-access\"' > "
                    ".codex/config.toml",
                    [plain] { CHECK_FALSE(fs::exists(plain / ".codex" / "config.toml")); }});
  // A repository and a linked worktree beside it.
  const fs::path main = base / "main";
  fs::create_directories(main);
  Git(main, {"init", "-q", "."});
  std::ofstream(main / "a.txt") << "a\n";
  Git(main, {"add", "a.txt"});
  Git(main, {"commit", "-q", "-m", "a"});
  const fs::path wt = base / "wt";
  Git(main, {"worktree", "add", "-q", wt.string()});
  const std::string main_config = ReadFile(main / ".git" / "config");
  const std::string wt_head = ReadFile(main / ".git" / "worktrees" / "wt" / "HEAD");
  scenes.push_back({"a linked worktree writes its main repository's hooks and config", wt,
                    "echo x > ../main/.git/hooks/pre-commit; echo x >> ../main/.git/config; "
                    "echo x > \"$(git rev-parse --git-dir)/HEAD\"; echo 'gitdir: /tmp' > .git",
                    [main, wt, main_config, wt_head] {
                      CHECK_FALSE(fs::exists(main / ".git" / "hooks" / "pre-commit"));
                      CHECK(ReadFile(main / ".git" / "config") == main_config);
                      CHECK(ReadFile(main / ".git" / "worktrees" / "wt" / "HEAD") == wt_head);
                      CHECK_THAT(ReadFile(wt / ".git"), Catch::Contains("worktrees"));
                    }});
  // Started in repo/sub.
  const fs::path sub = main / "sub";
  fs::create_directories(sub);
  scenes.push_back({"started in repo/sub, ../.git/hooks", sub,
                    "echo x > ../.git/hooks/post-checkout; mv ../.git ../git-old", [main] {
                      CHECK_FALSE(fs::exists(main / ".git" / "hooks" / "post-checkout"));
                      CHECK(fs::is_directory(main / ".git" / "objects"));
                    }});
  // The symlink swap on a real repository.
  scenes.push_back({"rm .git && ln -s /tmp/evil.git .git", main,
                    "mkdir -p /tmp/evil.git 2>/dev/null; rm -rf .git; rm .git; "
                    "ln -s /tmp/evil.git .git; mv .git g",
                    [main] {
                      CHECK_FALSE(fs::is_symlink(main / ".git"));
                      CHECK(fs::is_directory(main / ".git" / "objects"));
                    }});
  return scenes;
}

// The layer sets `codex` can run here: with namespaces, and the fallback.
std::vector<std::map<std::string, std::string>> LayerEnvs() {
  std::vector<std::map<std::string, std::string>> out;
  if (sandbox::ProbeBwrap().usable) out.push_back({});
  if (sandbox::landlock::AbiVersion() >= 1)
    out.push_back({{"CODEX_SANDBOX_BWRAP", "/nonexistent"}});
  return out;
}

}  // namespace

TEST_CASE("workspace policy: every protected path holds through codex sandbox and codex exec") {
  if (!SandboxAvailable()) return;
  for (const auto& layer_env : LayerEnvs()) {
    const bool fallback = !layer_env.empty();
    Scratch s;
    const std::vector<PolicyScene> scenes = PolicyScenes(s.path());
    for (const PolicyScene& scene : scenes) {
      INFO((fallback ? "fallback (no namespaces): " : "namespaces: ") << scene.name);
      // Door 1: codex sandbox.
      auto r = Sandbox(
          As::kInvoker,
          {"-s", "workspace-write", "--", "sh", "-c", "set +e; " + scene.attack + "; echo done"},
          scene.cwd, layer_env);
      INFO("stderr: " << r.err);
      CHECK_THAT(r.out, Catch::Contains("done"));
      scene.check();
      // Doors 2 and 3: the model's tools in codex exec, the one-shot `shell`
      // and unified exec's `exec_command` (the default harness).
      for (const ModelDoor door : {ModelDoor::kShell, ModelDoor::kExecCommand}) {
        INFO("door: " << DoorName(door));
        auto env = CodexTestEnv::Create(
            R"({"responses": [)" +
            DoorCall(door, "set +e; " + scene.attack + "; echo done", "attack") + R"(, "done"]})");
        REQUIRE(env.ok());
        ProcessOptions p = (*env)->CodexCommand({"exec", "-s", "workspace-write", "attack"});
        p.cwd = scene.cwd;
        for (const auto& [k, v] : layer_env) p.env[k] = v;
        auto run = RunProcess(p);
        REQUIRE(run.ok());
        INFO("exec stderr: " << run->err);
        CHECK(run->exit_code == 0);
        auto requests = (*env)->server().requests_to("/responses");
        REQUIRE(requests.size() == 2);
        CHECK_THAT(OutputFor(requests.back().InputItems(), "attack"), Catch::Contains("done"));
        scene.check();
      }
    }
    CHECK_FALSE(fs::exists(s.path() / "PWNED"));
  }
}

TEST_CASE("workspace policy: a protected path through a writable symlink is refused") {
  if (!SandboxAvailable()) return;
  struct Plant {
    const char* name;
    std::function<void(const fs::path&)> make;
  };
  const std::vector<Plant> plants = {
      {".git -> /proc",
       [](const fs::path& ws) { fs::create_directory_symlink("/proc", ws / ".git"); }},
      {".git -> /tmp/evil.git",
       [](const fs::path& ws) {
         fs::create_directories(ws.parent_path() / "evil.git");
         fs::create_directory_symlink(ws.parent_path() / "evil.git", ws / ".git");
       }},
      {".git file with gitdir: /proc",
       [](const fs::path& ws) { std::ofstream(ws / ".git") << "gitdir: /proc\n"; }},
      {".codex -> /proc",
       [](const fs::path& ws) { fs::create_directory_symlink("/proc", ws / ".codex"); }},
  };
  for (const auto& layer_env : LayerEnvs()) {
    for (const Plant& plant : plants) {
      INFO((layer_env.empty() ? "namespaces: " : "fallback: ") << plant.name);
      Scratch s;
      const fs::path ws = s.path() / "ws";
      fs::create_directories(ws);
      plant.make(ws);
      auto r = Sandbox(As::kInvoker,
                       {"-s", "workspace-write", "--", "sh", "-c", "ls /proc | wc -l; echo ran"},
                       ws, layer_env);
      CHECK(r.exit_code != 0);
      CHECK(r.out.find("ran") == std::string::npos);
      CHECK_THAT(r.err, Catch::StartsWith("error: cannot enforce sandbox read-only path"));
      CHECK(e2e::ErrorLines(r.err).size() == 1);
      // The model's shell and exec_command get the same refusal as their tool output.
      for (const ModelDoor door : {ModelDoor::kShell, ModelDoor::kExecCommand}) {
        INFO("door: " << DoorName(door));
        auto env = CodexTestEnv::Create(R"({"responses": [)" + DoorCall(door, "echo r''an", "run") +
                                        R"(, "done"]})");
        REQUIRE(env.ok());
        ProcessOptions p = (*env)->CodexCommand({"exec", "-s", "workspace-write", "go"});
        p.cwd = ws;
        for (const auto& [k, v] : layer_env) p.env[k] = v;
        auto run = RunProcess(p);
        REQUIRE(run.ok());
        auto requests = (*env)->server().requests_to("/responses");
        REQUIRE_FALSE(requests.empty());
        const std::string out = OutputFor(requests.back().InputItems(), "run");
        CHECK_THAT(out, Catch::Contains("cannot enforce sandbox read-only path"));
        CHECK(out.find("ran") == std::string::npos);
      }
    }
  }
}

TEST_CASE("workspace policy: the --ephemeral store is out of the commands' reach") {
  if (!SandboxAvailable()) return;
  // The workspace beside $CODEX_HOME, and one that contains it (a writable
  // root covers the store: the policy's private path must still hold).
  for (const auto& [layer_env, covering] :
       {std::pair{std::map<std::string, std::string>{}, false},
        std::pair{std::map<std::string, std::string>{}, true},
        std::pair{std::map<std::string, std::string>{{"CODEX_SANDBOX_BWRAP", "/nonexistent"}},
                  false},
        std::pair{std::map<std::string, std::string>{{"CODEX_SANDBOX_BWRAP", "/nonexistent"}},
                  true}}) {
    const bool fallback = !layer_env.empty();
    if (fallback ? sandbox::landlock::AbiVersion() < 1 : !sandbox::ProbeBwrap().usable) continue;
    INFO((fallback ? "fallback" : "namespaces") << (covering ? ", cwd above $CODEX_HOME" : ""));
    // $CODEX_HOME reaches the command's environment (it is no secret).
    const std::string script =
        "set +e; echo home=$CODEX_HOME; cat \"$CODEX_HOME\"/ephemeral/*/sessions.d[b] 2>/dev/null "
        "| head -c 15; echo; for f in \"$CODEX_HOME\"/ephemeral/*/sessions.d[b]; do "
        "[ -e \"$f\" ] && echo x >> \"$f\" && echo wrote; done; echo end";
    auto env = CodexTestEnv::Create(R"({"responses": [
        {"output": [{"shell": ["sh", "-c", )" +
                                    Quoted(script) + R"(], "call_id": "peek"}]}, "done"]})");
    REQUIRE(env.ok());
    const fs::path store = (*env)->codex_home() / "ephemeral";
    ProcessOptions p =
        (*env)->CodexCommand({"exec", "--ephemeral", "-s", "workspace-write", "peek"});
    if (covering) p.cwd = (*env)->root();
    for (const auto& [k, v] : layer_env) p.env[k] = v;
    auto run = RunProcess(p);
    REQUIRE(run.ok());
    INFO("stderr: " << run->err);
    CHECK(run->exit_code == 0);
    auto requests = (*env)->server().requests_to("/responses");
    REQUIRE(requests.size() == 2);
    const std::string out = OutputFor(requests.back().InputItems(), "peek");
    CHECK_THAT(out, Catch::Contains("end"));
    CHECK_THAT(out, Catch::Contains("home=" + (*env)->codex_home().string()));
    CHECK(out.find("wrote") == std::string::npos);
    // With namespaces not even readable (without them, as any file of the user).
    // (The fallback's read shows that the script does find the store.)
    if (!fallback) {
      CHECK(out.find("SQLite format") == std::string::npos);
    } else {
      CHECK_THAT(out, Catch::Contains("SQLite format"));
    }
    // Nothing of this run's store is left in /tmp or under $CODEX_HOME.
    CHECK(fs::is_empty(store));
  }
}

}  // namespace codex::testing

namespace codex::testing {

// Issue 23, point 4: /dev/shm is not the host's, and another terminal of the
// user cannot be written through /dev/pts, with namespaces and without.
TEST_CASE("codex sandbox: /dev/shm is private and another terminal's /dev/pts is closed") {
  if (!SandboxAvailable()) return;
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(::grantpt(master) == 0);
  REQUIRE(::unlockpt(master) == 0);
  const std::string slave = ::ptsname(master);
  ::chmod(slave.c_str(), 0666);
  const std::string host_shm = "/dev/shm/codex-escape-host-" + std::to_string(::getpid());
  std::ofstream(host_shm) << "host\n";
  const std::string inside = "/dev/shm/codex-escape-inside-" + std::to_string(::getpid());
  for (const auto& layer_env : LayerEnvs()) {
    const bool fallback = !layer_env.empty();
    INFO((fallback ? "fallback" : "namespaces"));
    Scratch s;
    for (const std::string mode : {"read-only", "workspace-write"}) {
      INFO(mode);
      auto r = Sandbox(As::kInvoker,
                       {"-s", mode, "--", "sh", "-c",
                        "printf '\\033]0;pwned\\007' > " + slave + " && echo tty-written; cat " +
                            host_shm + "; echo x > " + inside + " && echo shm-written; echo end"},
                       s.path(), layer_env);
      CHECK_THAT(r.out, Catch::Contains("end"));
      CHECK(r.out.find("tty-written") == std::string::npos);
      if (!fallback) CHECK(r.out.find("host") == std::string::npos);
      // Never the host's: with namespaces workspace-write has a private,
      // writable /dev/shm (removed when the command ends), read-only and
      // the fallback none that can be written.
      if (!fallback && mode == "workspace-write") {
        CHECK(r.out.find("shm-written") != std::string::npos);
      } else {
        CHECK(r.out.find("shm-written") == std::string::npos);
      }
      CHECK_FALSE(fs::exists(inside));
    }
  }
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  char buf[64];
  CHECK(::read(master, buf, sizeof buf) < 0);  // nothing reached the terminal
  ::close(master);
  fs::remove(host_shm);
}

}  // namespace codex::testing
