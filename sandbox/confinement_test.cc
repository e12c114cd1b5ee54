// Real Landlock + seccomp: every case runs actual processes under the sandbox.
// The binary exits 4 (skipped) when the kernel has no Landlock.
#include "sandbox/confinement.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "sandbox/landlock.h"
#include "sandbox/process.h"

using namespace codex::sandbox;
namespace fs = std::filesystem;

namespace {

const int kRealAbi = [] {
  int abi = landlock::AbiVersion();
  if (abi < 1) {
    std::fprintf(stderr, "SKIP: Landlock is not available on this kernel (%s)\n",
                 "landlock_create_ruleset failed");
    std::_Exit(4);
  }
  return abi;
}();

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// A scratch tree:
//   <base>/ws/            workspace root with .git/{config,hooks/}, top.txt, src/a.txt,
//                         src/link -> ../../outside/target.txt, src/dirlink -> ../../outside
//   <base>/plain/         a second root without .git
//   <base>/outside/       not writable; target.txt
class Tree {
 public:
  Tree() {
    std::string templ = "/tmp/codex-confine-test-XXXXXX";
    REQUIRE(::mkdtemp(templ.data()) != nullptr);
    base_ = fs::canonical(templ);
    fs::create_directories(ws() / ".git" / "hooks");
    fs::create_directories(ws() / "src");
    fs::create_directories(plain());
    fs::create_directories(outside());
    WriteFile(ws() / ".git" / "config", "[core]\n");
    WriteFile(ws() / "top.txt", "top\n");
    WriteFile(ws() / "src" / "a.txt", "a\n");
    WriteFile(outside() / "target.txt", "original\n");
    fs::create_symlink("../../outside/target.txt", ws() / "src" / "link");
    fs::create_symlink("../../outside", ws() / "src" / "dirlink");
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  fs::path ws() const { return base_ / "ws"; }
  fs::path plain() const { return base_ / "plain"; }
  fs::path outside() const { return base_ / "outside"; }

  SandboxSpec WorkspaceWrite(Network network = Network::kDenied) const {
    SandboxSpec spec;
    spec.mode = Mode::kWorkspaceWrite;
    spec.writable_roots = {ws().string(), plain().string()};
    spec.network = network;
    return spec;
  }

 private:
  fs::path base_;
};

SandboxSpec Spec(Mode mode) {
  SandboxSpec spec;
  spec.mode = mode;
  return spec;
}

// Runs `script` with /bin/sh under `spec` in `cwd`.
ProcessResult Run(const SandboxSpec& spec, const fs::path& cwd, const std::string& script) {
  auto confinement = Confinement::Prepare(spec);
  REQUIRE(confinement.ok());
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.cwd = cwd.string();
  options.timeout_ms = 20'000;
  options.child_setup = confinement->get();
  auto r = RunProcess(options);
  if (!r.ok()) FAIL(r.error().message());
  return std::move(r).value();
}

// Forks, confines the child, and returns the exit code of `body` run there.
int InConfinedChild(const SandboxSpec& spec, const std::function<int()>& body) {
  auto confinement = Confinement::Prepare(spec);
  REQUIRE(confinement.ok());
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const char* what = nullptr;
    if ((*confinement)->ApplyInChild(&what) != 0) ::_exit(250);
    ::_exit(body());
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// 0 when socket(domain, type) works, else its errno.
int TrySocket(int domain, int type) {
  int fd = ::socket(domain, type, 0);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

// A TCP listener on 127.0.0.1 with a kernel-chosen port.
class LoopbackListener {
 public:
  LoopbackListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    socklen_t len = sizeof(addr);
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
  }
  ~LoopbackListener() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Restores the real Landlock ABI when a test is done pretending.
struct AbiOverride {
  explicit AbiOverride(int abi) { landlock::TEST_SetAbiOverride(abi); }
  ~AbiOverride() { landlock::TEST_SetAbiOverride(-1); }
};

}  // namespace

TEST_CASE("workspace-write allows writes inside the roots only, for every Landlock ABI") {
  const int abi = GENERATE(range(1, kRealAbi + 1));
  INFO("Landlock ABI " << abi);
  AbiOverride pretend(abi);
  Tree t;
  const auto spec = t.WorkspaceWrite();

  auto r = Run(spec, t.ws(), "echo new > src/new.txt && mkdir -p src/d/e && echo deep > src/d/e/f");
  CHECK(r.exit_code == 0);
  CHECK(ReadFile(t.ws() / "src" / "new.txt") == "new\n");
  CHECK(ReadFile(t.ws() / "src" / "d" / "e" / "f") == "deep\n");

  CHECK(Run(spec, t.ws(), "echo changed > top.txt").exit_code == 0);
  CHECK(ReadFile(t.ws() / "top.txt") == "changed\n");
  CHECK(Run(spec, t.ws(), "rm src/a.txt").exit_code == 0);
  CHECK_FALSE(fs::exists(t.ws() / "src" / "a.txt"));

  CHECK(Run(spec, t.ws(), "echo x > ../plain/top.txt && mkdir ../plain/dir").exit_code == 0);
  CHECK(ReadFile(t.plain() / "top.txt") == "x\n");

  r = Run(spec, t.ws(), "echo x > ../outside/new.txt");
  CHECK(r.exit_code != 0);
  CHECK(r.stderr_text.find("Permission denied") != std::string::npos);
  CHECK_FALSE(fs::exists(t.outside() / "new.txt"));
  CHECK(Run(spec, t.ws(), "echo x >> ../outside/target.txt").exit_code != 0);
  CHECK(Run(spec, t.ws(), "rm ../outside/target.txt").exit_code != 0);
  CHECK(ReadFile(t.outside() / "target.txt") == "original\n");
}

TEST_CASE("workspace-write keeps the top-level .git read-only") {
  Tree t;
  const auto spec = t.WorkspaceWrite();
  CHECK(Run(spec, t.ws(), "echo evil >> .git/config").exit_code != 0);
  CHECK(Run(spec, t.ws(), ": > .git/config").exit_code != 0);
  CHECK(ReadFile(t.ws() / ".git" / "config") == "[core]\n");
  CHECK(Run(spec, t.ws(), "rm .git/config").exit_code != 0);
  CHECK(fs::exists(t.ws() / ".git" / "config"));
  CHECK(Run(spec, t.ws(), "touch .git/index.lock").exit_code != 0);
  CHECK_FALSE(fs::exists(t.ws() / ".git" / "index.lock"));
  CHECK(Run(spec, t.ws(), "ln -s /tmp/x .git/hooks/pre-commit").exit_code != 0);
  CHECK_FALSE(fs::exists(fs::symlink_status(t.ws() / ".git" / "hooks" / "pre-commit")));
  CHECK(Run(spec, t.ws(), "mv src/a.txt .git/hooks/pre-commit").exit_code != 0);
  CHECK(Run(spec, t.ws(), "mkdir .git/objects").exit_code != 0);
  CHECK(Run(spec, t.ws(), "rm -rf .git").exit_code != 0);
  CHECK(fs::exists(t.ws() / ".git" / "config"));
  // The documented price: entries cannot be added next to a protected .git.
  CHECK(Run(spec, t.ws(), "touch newtop").exit_code != 0);
  CHECK_FALSE(fs::exists(t.ws() / "newtop"));
}

TEST_CASE("An enclosing writable root keeps its own top level creatable") {
  Tree t;
  SandboxSpec spec;
  spec.mode = Mode::kWorkspaceWrite;
  spec.writable_roots = {t.ws().parent_path().string(), t.ws().string()};
  auto confinement = Confinement::Prepare(spec);
  REQUIRE(confinement.ok());
  CHECK((*confinement)->protected_paths() == std::vector<std::string>{(t.ws() / ".git").string()});
  CHECK(Run(spec, t.ws(), "echo ok > ../outside/new.txt && echo ok > ../newtop").exit_code == 0);
  CHECK(Run(spec, t.ws(), "echo ok > src/new.txt").exit_code == 0);
  // Documented: the enclosing root's grant reaches the nested .git.
  CHECK(Run(spec, t.ws(), "echo more >> .git/config").exit_code == 0);
}

TEST_CASE("Symlinks inside the workspace cannot be written through to the outside") {
  Tree t;
  const auto spec = t.WorkspaceWrite();
  CHECK(Run(spec, t.ws(), "echo evil > src/link").exit_code != 0);
  CHECK(Run(spec, t.ws(), "echo evil > src/dirlink/new.txt").exit_code != 0);
  CHECK(
      Run(spec, t.ws(), "ln -s ../../outside/target.txt src/l2 && echo evil > src/l2").exit_code !=
      0);
  CHECK(fs::is_symlink(t.ws() / "src" / "l2"));
  CHECK(ReadFile(t.outside() / "target.txt") == "original\n");
  CHECK_FALSE(fs::exists(t.outside() / "new.txt"));
}

TEST_CASE("Grandchildren inherit the confinement") {
  Tree t;
  const auto spec = t.WorkspaceWrite();
  CHECK(Run(spec, t.ws(), "sh -c 'sh -c \"echo evil > ../outside/g\"'").exit_code != 0);
  CHECK_FALSE(fs::exists(t.outside() / "g"));
  CHECK(Run(spec, t.ws(), "sh -c 'sh -c \"echo ok > src/g\"'").exit_code == 0);
  CHECK(ReadFile(t.ws() / "src" / "g") == "ok\n");
  // A detached background grandchild is confined as well.
  CHECK(Run(spec, t.ws(), "(sh -c 'echo evil > ../outside/bg' &); sleep 0.3").exit_code == 0);
  CHECK_FALSE(fs::exists(t.outside() / "bg"));
}

TEST_CASE("read-only allows reading and the null device, nothing else") {
  Tree t;
  const auto spec = Spec(Mode::kReadOnly);
  auto r = Run(spec, t.ws(), "cat src/a.txt && ls / > /dev/null && echo hi > /dev/null");
  CHECK(r.exit_code == 0);
  CHECK(r.stdout_text == "a\n");
  CHECK(Run(spec, t.ws(), "echo x > src/new.txt").exit_code != 0);
  CHECK(Run(spec, t.ws(), "echo x > top.txt").exit_code != 0);
  const std::string in_tmp = "/tmp/codex-ro-test-" + std::to_string(::getpid());
  CHECK(Run(spec, t.ws(), "echo x > " + in_tmp).exit_code != 0);
  CHECK_FALSE(fs::exists(in_tmp));
  CHECK(ReadFile(t.ws() / "top.txt") == "top\n");
  CHECK_FALSE(fs::exists(t.ws() / "src" / "new.txt"));
}

TEST_CASE("Device nodes cannot be created in writable roots (matters for root)") {
  Tree t;
  auto r = Run(t.WorkspaceWrite(), t.ws(), "mknod src/null c 1 3");
  CHECK(r.exit_code != 0);
  CHECK_FALSE(fs::exists(fs::symlink_status(t.ws() / "src" / "null")));
}

TEST_CASE("danger-full-access does not confine") {
  Tree t;
  CHECK(Run(Spec(Mode::kFullAccess), t.ws(), "echo x > ../outside/new.txt && echo y >> .git/config")
            .exit_code == 0);
  CHECK(ReadFile(t.outside() / "new.txt") == "x\n");
}

TEST_CASE("TCP to a loopback listener fails unless the network is allowed") {
  Tree t;
  LoopbackListener listener;
  const std::string connect =
      "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(listener.port()) + " && echo connected";
  auto bash = [&](const SandboxSpec& spec) {
    auto confinement = Confinement::Prepare(spec);
    REQUIRE(confinement.ok());
    SpawnOptions options;
    options.argv = {"bash", "-c", connect};
    options.cwd = t.ws().string();
    options.child_setup = confinement->get();
    auto r = RunProcess(options);
    REQUIRE(r.ok());
    return std::move(r).value();
  };
  auto ro = bash(Spec(Mode::kReadOnly));
  CHECK(ro.exit_code != 0);
  CHECK(ro.stdout_text.empty());
  auto ww = bash(t.WorkspaceWrite());
  CHECK(ww.exit_code != 0);
  CHECK(ww.stdout_text.empty());
  auto ww_net = bash(t.WorkspaceWrite(Network::kAllowed));
  CHECK(ww_net.exit_code == 0);
  CHECK(ww_net.stdout_text == "connected\n");
  auto full = bash(Spec(Mode::kFullAccess));
  CHECK(full.exit_code == 0);
  CHECK(full.stdout_text == "connected\n");
}

TEST_CASE("Network denial is by socket family; AF_UNIX keeps working") {
  Tree t;
  const auto spec = t.WorkspaceWrite();
  CHECK(InConfinedChild(spec, [] { return TrySocket(AF_INET, SOCK_STREAM); }) == EPERM);
  CHECK(InConfinedChild(spec, [] { return TrySocket(AF_INET, SOCK_DGRAM); }) == EPERM);
  CHECK(InConfinedChild(spec, [] { return TrySocket(AF_INET6, SOCK_STREAM); }) == EPERM);
  CHECK(InConfinedChild(spec, [] { return TrySocket(AF_NETLINK, SOCK_RAW); }) == EPERM);
  CHECK(InConfinedChild(spec, [] { return TrySocket(AF_UNIX, SOCK_STREAM); }) == 0);
  CHECK(InConfinedChild(spec, [] {
          int sv[2];
          if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return errno;
          const char msg = 'x';
          char got = 0;
          int rc =
              (::write(sv[0], &msg, 1) == 1 && ::read(sv[1], &got, 1) == 1 && got == 'x') ? 0 : 99;
          ::close(sv[0]);
          ::close(sv[1]);
          return rc;
        }) == 0);

  // A UNIX listener outside the sandbox is reachable from inside.
  int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(server >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string path = (t.ws() / "src" / "sock").string();
  REQUIRE(path.size() < sizeof(addr.sun_path));
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  REQUIRE(::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(server, 4) == 0);
  CHECK(InConfinedChild(spec, [&] {
          int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
          if (fd < 0) return errno;
          int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 ? 0 : errno;
          ::close(fd);
          return rc;
        }) == 0);
  ::close(server);

  // With the network allowed, inet sockets work again.
  CHECK(InConfinedChild(t.WorkspaceWrite(Network::kAllowed),
                        [] { return TrySocket(AF_INET, SOCK_STREAM); }) == 0);
}

TEST_CASE("io_uring and terminal injection are denied in every confined mode") {
  Tree t;
  for (const auto& spec : {Spec(Mode::kReadOnly), t.WorkspaceWrite(Network::kAllowed)}) {
    CHECK(InConfinedChild(spec, [] {
            char params[120] = {};
            long fd = ::syscall(SYS_io_uring_setup, 4, params);
            if (fd >= 0) ::close(static_cast<int>(fd));
            return fd >= 0 ? 0 : errno;
          }) == EPERM);
    CHECK(InConfinedChild(spec, [] {
            char c = 'x';
            return ::ioctl(0, TIOCSTI, &c) == 0 ? 0 : errno;
          }) == EPERM);
  }
}

TEST_CASE("With Landlock ABI >= 6, signals cannot leave the sandbox") {
  if (kRealAbi < 6) {
    WARN("skipped: signal scoping needs Landlock ABI 6, the kernel has " << kRealAbi);
    return;
  }
  Tree t;
  pid_t outsider = ::fork();
  REQUIRE(outsider >= 0);
  if (outsider == 0) {
    ::pause();
    ::_exit(0);
  }
  auto r = Run(Spec(Mode::kReadOnly), t.ws(), "kill -0 " + std::to_string(outsider));
  CHECK(r.exit_code != 0);
  CHECK(::kill(outsider, SIGKILL) == 0);
  ::waitpid(outsider, nullptr, 0);
}

TEST_CASE("Without Landlock, sandboxed modes refuse to run unconfined") {
  AbiOverride pretend(0);
  for (Mode mode : {Mode::kReadOnly, Mode::kWorkspaceWrite}) {
    auto c = Confinement::Prepare(Spec(mode));
    REQUIRE_FALSE(c.ok());
    CHECK(c.error().kind() == ErrorKind::kUnavailable);
    CHECK(c.error().message() ==
          "Landlock is not available on this kernel; use --sandbox danger-full-access to run "
          "without a sandbox");
  }
  CHECK(Confinement::Prepare(Spec(Mode::kFullAccess)).ok());
}

TEST_CASE("Prepare rejects writable roots that are missing or not directories") {
  Tree t;
  SandboxSpec spec;
  spec.mode = Mode::kWorkspaceWrite;
  spec.writable_roots = {(t.ws() / "missing").string()};
  auto missing = Confinement::Prepare(spec);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind() == ErrorKind::kInvalidArgument);
  CHECK(missing.error().message().find("missing") != std::string::npos);

  spec.writable_roots = {(t.ws() / "top.txt").string()};
  auto file = Confinement::Prepare(spec);
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().kind() == ErrorKind::kInvalidArgument);
}
