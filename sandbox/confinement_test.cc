// Real namespaces + Landlock + seccomp: every case runs actual processes under
// the sandbox, most of them twice: with the namespace layer (bubblewrap) and
// with Landlock + seccomp alone (bubblewrap hidden), as on a machine without
// user namespaces. Attacks are run through tests/escape_probe.cc. The binary
// exits 4 (skipped) when the kernel has no Landlock.
#include "sandbox/confinement.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "sandbox/landlock.h"
#include "sandbox/launcher.h"
#include "sandbox/process.h"
#include "sandbox/sandbox_server.h"
#include "testing/files.h"
#include "testing/loopback_listener.h"
#include "testing/skip.h"
#include "testing/temp_dir.h"

using codex::StatusCode;
using namespace codex::sandbox;
namespace fs = std::filesystem;

namespace {

const int kRealAbi = [] {
  int abi = landlock::AbiVersion();
  if (abi < 1) {
    codex::testing::SkipTest(
        "Landlock is not available on this kernel (landlock_create_ruleset failed)");
  }
  return abi;
}();

using codex::testing::ReadFile;
using codex::testing::WriteFile;

// A scratch tree:
//   <base>/ws/            workspace root with .git/{config,hooks/}, top.txt, src/a.txt,
//                         src/link -> ../../outside/target.txt, src/dirlink -> ../../outside
//   <base>/plain/         a second root without .git
//   <base>/outside/       not writable; target.txt
class Tree {
 public:
  Tree() {
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
  codex::testing::TempDir dir_{"codex-confine-test-", "/tmp"};
  fs::path base_ = dir_.path();
};

SandboxSpec Spec(Mode mode) {
  SandboxSpec spec;
  spec.mode = mode;
  return spec;
}

// Every command runs the way codex runs it: through a sandbox server
// (sandbox_server.h) started for `spec`, which forks it from inside the
// sandbox.
codex::Result<ProcessResult> RunConfined(const SandboxSpec& spec, const SpawnOptions& options) {
  auto confinement = Confinement::Prepare(spec);
  REQUIRE(confinement.ok());
  auto server = SandboxServer::Start(**confinement);
  if (!server.ok()) FAIL(server.status().message());
  return (*server)->Run(options);
}

// Runs `script` with /bin/sh under `spec` in `cwd`.
ProcessResult Run(const SandboxSpec& spec, const fs::path& cwd, const std::string& script) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.cwd = cwd.string();
  options.timeout_ms = 20'000;
  auto r = RunConfined(spec, options);
  if (!r.ok()) FAIL(r.status().message());
  return std::move(r).value();
}

// Runs escape-probe OP ARGS... under `spec`.
ProcessResult Probe(const SandboxSpec& spec, std::vector<std::string> args) {
  args.insert(args.begin(), ESCAPE_PROBE);
  SpawnOptions options;
  options.argv = std::move(args);
  options.timeout_ms = 20'000;
  auto r = RunConfined(spec, options);
  if (!r.ok()) FAIL(r.status().message());
  INFO("probe: " << r->output);
  return std::move(r).value();
}

// The probe's answer ("ok", "denied EPERM", ...), newline removed.
std::string Answer(const ProcessResult& r) {
  std::string text = r.stdout_text;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

bool HaveBwrap() { return ProbeBwrap().usable; }

// Which layers a case runs with: the full stack, or without namespaces.
enum class Layers { kNamespaces, kLandlockOnly };

// Hides bubblewrap for the lifetime of the object when asked to.
struct LayerChoice {
  explicit LayerChoice(Layers layers) {
    if (layers == Layers::kLandlockOnly) TEST_SetBwrapOverride(std::string());
  }
  ~LayerChoice() { TEST_SetBwrapOverride(std::nullopt); }
};

// The layer sets this machine can run: both, or Landlock alone.
std::vector<Layers> AvailableLayers() {
  if (HaveBwrap()) return {Layers::kNamespaces, Layers::kLandlockOnly};
  std::fprintf(stderr,
               "note: bubblewrap cannot create namespaces here (%s); namespace cases skipped\n",
               ProbeBwrap().reason.c_str());
  return {Layers::kLandlockOnly};
}

const char* Name(Layers layers) {
  return layers == Layers::kNamespaces ? "namespaces+landlock+seccomp" : "landlock+seccomp";
}

bool Denied(const ProcessResult& r) {
  return r.stderr_text.find("Permission denied") != std::string::npos ||
         r.stderr_text.find("Read-only file system") != std::string::npos;
}

using codex::testing::LoopbackListener;

// Restores the real Landlock ABI when a test is done pretending.
struct AbiOverride {
  explicit AbiOverride(int abi) { landlock::TEST_SetAbiOverride(abi); }
  ~AbiOverride() { landlock::TEST_SetAbiOverride(-1); }
};

}  // namespace

TEST_CASE("workspace-write allows writes inside the roots only, for every Landlock ABI") {
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  const int abi = GENERATE(range(1, kRealAbi + 1));
  INFO(Name(layers) << ", Landlock ABI " << abi);
  LayerChoice choice(layers);
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

  // A root without .git: new top-level entries with namespaces; without them
  // the absent .git and .codex are kept absent by not granting the root
  // itself (issue 23), so only its existing entries are writable.
  CHECK((Run(spec, t.ws(), "echo x > ../plain/top.txt && mkdir ../plain/dir").exit_code == 0) ==
        (layers == Layers::kNamespaces));
  fs::create_directories(t.plain() / "sub");
  CHECK(Run(spec, t.ws(), "echo x > ../plain/sub/f && mkdir ../plain/sub/dir").exit_code == 0);
  CHECK(ReadFile(t.plain() / "sub" / "f") == "x\n");

  r = Run(spec, t.ws(), "echo x > ../outside/new.txt");
  CHECK(r.exit_code != 0);
  CHECK(Denied(r));
  CHECK_FALSE(fs::exists(t.outside() / "new.txt"));
  CHECK(Run(spec, t.ws(), "echo x >> ../outside/target.txt").exit_code != 0);
  CHECK(Run(spec, t.ws(), "rm ../outside/target.txt").exit_code != 0);
  CHECK(ReadFile(t.outside() / "target.txt") == "original\n");
}

TEST_CASE("workspace-write keeps the top-level .git read-only") {
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
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
  CHECK(Run(spec, t.ws(), "mv .git .git-old && mkdir .git").exit_code != 0);
  CHECK(fs::exists(t.ws() / ".git" / "config"));
  CHECK(fs::is_directory(t.ws() / ".git"));
  if (layers == Layers::kLandlockOnly) {
    // The documented price without a mount namespace: entries cannot be
    // added next to a protected .git.
    CHECK(Run(spec, t.ws(), "touch newtop").exit_code != 0);
    CHECK_FALSE(fs::exists(t.ws() / "newtop"));
  }
}

TEST_CASE("A .codex directory at the top of a writable root stays read-only") {
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
  Tree t;
  fs::create_directories(t.plain() / ".codex");
  fs::create_directories(t.plain() / "existing");
  WriteFile(t.plain() / ".codex" / "config.toml", "sandbox_mode = \"read-only\"\n");
  const auto spec = t.WorkspaceWrite();
  auto confinement = Confinement::Prepare(spec);
  REQUIRE(confinement.ok());
  const auto& prot = (*confinement)->protected_paths();
  CHECK(std::find(prot.begin(), prot.end(), (t.plain() / ".codex").string()) != prot.end());
  CHECK(Run(spec, t.plain(), "echo 'sandbox_mode = \"danger-full-access\"' > .codex/config.toml")
            .exit_code != 0);
  CHECK(Run(spec, t.plain(), "touch .codex/new").exit_code != 0);
  CHECK(ReadFile(t.plain() / ".codex" / "config.toml") == "sandbox_mode = \"read-only\"\n");
  CHECK(Run(spec, t.plain(), "echo ok > existing/f").exit_code == 0);
  // Without namespaces, the documented price of a protected entry: no new
  // entries at the top of that root.
  CHECK((Run(spec, t.plain(), "mkdir sub").exit_code == 0) == (layers == Layers::kNamespaces));
}

TEST_CASE("With namespaces the top of a git workspace is writable like any directory") {
  if (!HaveBwrap()) return;
  Tree t;
  const auto spec = t.WorkspaceWrite();
  auto r = Run(spec, t.ws(),
               "mkdir build && touch build/CMakeCache.txt newtop && mv top.txt moved.txt && "
               "rm newtop && mv src source && ln -s source link");
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(t.ws() / "build" / "CMakeCache.txt"));
  CHECK(fs::exists(t.ws() / "moved.txt"));
  CHECK_FALSE(fs::exists(t.ws() / "top.txt"));
  CHECK_FALSE(fs::exists(t.ws() / "newtop"));
  CHECK(fs::is_directory(t.ws() / "source"));
  CHECK(fs::is_symlink(t.ws() / "link"));
  // Entries created after the sandbox was prepared are writable too.
  fs::create_directories(t.ws() / "later");
  CHECK(Run(spec, t.ws(), "echo ok > later/f && rm -r later").exit_code == 0);
  CHECK(ReadFile(t.ws() / ".git" / "config") == "[core]\n");
}

TEST_CASE("A nested workspace's .git stays read-only inside an enclosing writable root") {
  // As a repository under /tmp: /tmp and the workspace are both roots. Without
  // namespaces (issue 23) Landlock leaves the way to ws/.git out of the grants.
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
  Tree t;
  SandboxSpec spec;
  spec.mode = Mode::kWorkspaceWrite;
  spec.writable_roots = {t.ws().parent_path().string(), t.ws().string()};
  auto confinement = Confinement::Prepare(spec);
  REQUIRE(confinement.ok());
  const auto& prot = (*confinement)->protected_paths();
  CHECK(std::find(prot.begin(), prot.end(), (t.ws() / ".git").string()) != prot.end());
  CHECK(Run(spec, t.ws(), "echo ok > ../outside/new.txt").exit_code == 0);
  CHECK(Run(spec, t.ws(), "echo ok > src/new.txt").exit_code == 0);
  CHECK(Run(spec, t.ws(), "echo more >> .git/config").exit_code != 0);
  CHECK(Run(spec, t.ws().parent_path(), "echo more >> ws/.git/config").exit_code != 0);
  CHECK(Run(spec, t.ws().parent_path(), "mv ws ws2").exit_code != 0);
  CHECK(Run(spec, t.ws().parent_path(), "mv ws/.git ws/git-old").exit_code != 0);
  CHECK(ReadFile(t.ws() / ".git" / "config") == "[core]\n");
  CHECK(fs::is_directory(t.ws()));
  if (layers == Layers::kNamespaces) {
    CHECK(Run(spec, t.ws(), "echo ok > ../newtop && touch newtop").exit_code == 0);
  }
}

TEST_CASE("A worktree's .git file and the directories it points to stay read-only") {
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
  Tree t;
  // ws/.git is the main repository; wt is a linked worktree beside it.
  const fs::path wt = t.ws().parent_path() / "wt";
  const fs::path gitdir = t.ws() / ".git" / "worktrees" / "wt";
  fs::create_directories(wt);
  fs::create_directories(gitdir);
  WriteFile(wt / ".git", "gitdir: " + gitdir.string() + "\n");
  WriteFile(gitdir / "commondir", "../..\n");
  WriteFile(gitdir / "HEAD", "ref: refs/heads/wt\n");
  SandboxSpec spec;
  spec.mode = Mode::kWorkspaceWrite;
  spec.writable_roots = {wt.string(), t.ws().parent_path().string()};
  auto confinement = Confinement::Prepare(spec);
  REQUIRE(confinement.ok());
  const auto& prot = (*confinement)->protected_paths();
  CHECK(std::find(prot.begin(), prot.end(), (wt / ".git").string()) != prot.end());
  CHECK(std::find(prot.begin(), prot.end(), gitdir.string()) != prot.end());
  CHECK(std::find(prot.begin(), prot.end(), (t.ws() / ".git").string()) != prot.end());
  CHECK(Run(spec, wt, "echo 'gitdir: /tmp/evil' > .git").exit_code != 0);
  CHECK(Run(spec, wt, "echo evil > " + (gitdir / "HEAD").string()).exit_code != 0);
  CHECK(Run(spec, wt, "echo evil >> " + (t.ws() / ".git" / "config").string()).exit_code != 0);
  fs::create_directories(wt / "d");
  CHECK(Run(spec, wt, "touch d/src.txt && mkdir d/e").exit_code == 0);
  CHECK(ReadFile(gitdir / "HEAD") == "ref: refs/heads/wt\n");
  CHECK(ReadFile(t.ws() / ".git" / "config") == "[core]\n");
}

TEST_CASE("Symlinks inside the workspace cannot be written through to the outside") {
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
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
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
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
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
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
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
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
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
  Tree t;
  LoopbackListener listener(16);
  const std::string port = std::to_string(listener.port());
  CHECK(Answer(Probe(Spec(Mode::kReadOnly), {"connect-tcp", port})) == "denied EPERM");
  CHECK(Answer(Probe(t.WorkspaceWrite(), {"connect-tcp", port})) == "denied EPERM");
  CHECK(Answer(Probe(t.WorkspaceWrite(Network::kAllowed), {"connect-tcp", port})) == "ok");
  CHECK(Answer(Probe(Spec(Mode::kFullAccess), {"connect-tcp", port})) == "ok");
}

TEST_CASE("No socket reaches out with the network off; socketpair keeps working") {
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
  Tree t;
  for (const auto& spec : {Spec(Mode::kReadOnly), t.WorkspaceWrite()}) {
    for (const char* family : {"unix", "inet", "inet6", "netlink", "packet", "vsock"}) {
      for (const char* type : {"stream", "dgram", "raw"}) {
        INFO(family << " " << type);
        CHECK(Answer(Probe(spec, {"socket", family, type})) == "denied EPERM");
      }
    }
    CHECK(Answer(Probe(spec, {"socketpair", "stream"})) == "ok");
    CHECK(Answer(Probe(spec, {"socketpair", "seqpacket"})) == "ok");
    CHECK(Answer(Probe(spec, {"socketpair", "dgram"})) == "denied EPERM");
  }
  // With the network on: inet and inet6 only.
  const auto net = t.WorkspaceWrite(Network::kAllowed);
  CHECK(Answer(Probe(net, {"socket", "inet", "stream"})) == "ok");
  CHECK(Answer(Probe(net, {"socket", "inet6", "dgram"})) == "ok");
  CHECK(Answer(Probe(net, {"socket", "unix", "stream"})) == "denied EPERM");
  CHECK(Answer(Probe(net, {"socket", "netlink", "raw"})) == "denied EPERM");
  CHECK(Answer(Probe(net, {"socket", "packet", "raw"})) == "denied EPERM");
}

TEST_CASE("Host UNIX sockets, pathname and abstract, are out of reach") {
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
  Tree t;
  // Listeners of the host: a stream socket in the workspace, an abstract one,
  // and a datagram socket like /dev/log.
  auto listen = [](int type, const std::string& name, bool abstract) {
    int fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    REQUIRE(fd >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    size_t off = abstract ? 1 : 0;
    REQUIRE(name.size() + off < sizeof(addr.sun_path));
    std::memcpy(addr.sun_path + off, name.data(), name.size());
    auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + off + name.size() +
                                      (abstract ? 0 : 1));
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0);
    if (type == SOCK_STREAM) REQUIRE(::listen(fd, 4) == 0);
    return fd;
  };
  const std::string path = (t.ws() / "src" / "sock").string();
  const std::string dgram = (t.ws() / "src" / "log").string();
  const std::string abstract = "codex-confine-test-" + std::to_string(::getpid());
  int s1 = listen(SOCK_STREAM, path, false);
  int s2 = listen(SOCK_STREAM, abstract, true);
  int s3 = listen(SOCK_DGRAM, dgram, false);
  for (const auto& spec :
       {Spec(Mode::kReadOnly), t.WorkspaceWrite(), t.WorkspaceWrite(Network::kAllowed)}) {
    CHECK(Answer(Probe(spec, {"connect-unix", path})) == "denied EPERM");
    CHECK(Answer(Probe(spec, {"connect-abstract", abstract})) == "denied EPERM");
    CHECK(Answer(Probe(spec, {"dgram-via-pair", dgram})) == "denied EPERM");
  }
  // The same probes reach them unconfined: the listeners are real.
  CHECK(Answer(Probe(Spec(Mode::kFullAccess), {"connect-unix", path})) == "ok");
  CHECK(Answer(Probe(Spec(Mode::kFullAccess), {"connect-abstract", abstract})) == "ok");
  CHECK(Answer(Probe(Spec(Mode::kFullAccess), {"dgram-via-pair", dgram})) == "ok");
  ::close(s1);
  ::close(s2);
  ::close(s3);
}

TEST_CASE("No capabilities and no privileged system calls, even as root") {
  const Layers layers = GENERATE(from_range(AvailableLayers()));
  INFO(Name(layers));
  LayerChoice choice(layers);
  Tree t;
  for (const auto& spec : {Spec(Mode::kReadOnly), t.WorkspaceWrite(Network::kAllowed)}) {
    auto caps = Probe(spec, {"caps"});
    CHECK(caps.exit_code == 0);
    CHECK_THAT(caps.stdout_text, Catch::Contains("CapEff:\t0000000000000000"));
    if (::getuid() == 0) CHECK_THAT(caps.stdout_text, Catch::Contains("CapBnd:\t0000000000000000"));
    for (const char* op : {"settimeofday", "clock_settime", "adjtimex", "reboot", "sethostname",
                           "mount", "swapon", "unshare", "clone-newuser", "setns", "keyctl", "bpf",
                           "perf", "finit_module", "io_uring", "tiocsti"}) {
      INFO(op);
      CHECK(Answer(Probe(spec, {op})) == "denied EPERM");
    }
    CHECK(Answer(Probe(spec, {"clone3"})) == "denied ENOSYS");
    CHECK(Answer(Probe(spec, {"ptrace", std::to_string(::getpid())})) == "denied EPERM");
  }
}

TEST_CASE("With namespaces no host process is visible: no environ, no signals") {
  if (!HaveBwrap()) return;
  Tree t;
  ::setenv("CODEX_CONFINE_TEST_SECRET", "hunter2-secret", 1);
  const std::string me = std::to_string(::getpid());
  for (const auto& spec : {Spec(Mode::kReadOnly), t.WorkspaceWrite(Network::kAllowed)}) {
    auto env_read = Probe(spec, {"read", "/proc/" + me + "/environ"});
    CHECK(env_read.exit_code != 0);
    CHECK(env_read.output.find("hunter2") == std::string::npos);
    CHECK(Probe(spec, {"read", "/proc/1/cmdline"}).stdout_text.find("sandbox_confinement") ==
          std::string::npos);
    CHECK(Answer(Probe(spec, {"kill", me})) != "ok");
    auto ls = Run(spec, t.ws(), "ls /proc | grep -c '^[0-9]'");
    // The server, the command's keeper, sh, ls, grep.
    CHECK(std::atoi(ls.stdout_text.c_str()) <= 5);
  }
  // Even with "/" itself as a writable root (codex started in /).
  SandboxSpec everything;
  everything.mode = Mode::kWorkspaceWrite;
  everything.writable_roots = {"/"};
  CHECK(Probe(everything, {"read", "/proc/" + me + "/environ"}).exit_code != 0);
  // The sandbox's own /dev, not the host's: what is written there stays there.
  CHECK(Answer(Probe(everything, {"write", "/dev/codex-host-dev-" + me})) == "ok");
  CHECK_FALSE(fs::exists("/dev/codex-host-dev-" + me));
  if (fs::exists("/dev/kmsg")) {
    CHECK(Answer(Probe(everything, {"read", "/dev/kmsg"})) == "denied ENOENT");
  }
  ::unsetenv("CODEX_CONFINE_TEST_SECRET");
}

TEST_CASE("With namespaces nothing the command started survives it") {
  if (!HaveBwrap()) return;
  Tree t;
  const std::string marker = "codex-survivor-" + std::to_string(::getpid());
  auto survivors = [&] {
    SpawnOptions options;
    options.argv = {"pgrep", "-f", marker};
    auto r = RunProcess(options);
    REQUIRE(r.ok());
    return r->stdout_text;
  };
  // The server stays up between the commands (as in a session): what a
  // command leaves behind is killed with it, not when the server ends.
  auto confinement = Confinement::Prepare(Spec(Mode::kReadOnly));
  REQUIRE(confinement.ok());
  auto server = SandboxServer::Start(**confinement);
  REQUIRE(server.ok());
  // Daemons that left the process group and the session, after a normal exit.
  SpawnOptions daemons;
  daemons.argv = {"sh", "-c",
                  "setsid sh -c 'exec -a " + marker +
                      " sleep 60' </dev/null >/dev/null 2>&1 & "
                      "(sh -c 'exec -a " +
                      marker + " sleep 60' </dev/null >/dev/null 2>&1 &) ; exit 3"};
  daemons.cwd = t.ws().string();
  auto r = (*server)->Run(daemons);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 3);
  CHECK(survivors().empty());
  CHECK((*server)->Alive());
  // And after a timeout: still 124, SIGTERM first (the trap runs).
  SpawnOptions options;
  options.argv = {"sh", "-c",
                  "setsid sh -c 'exec -a " + marker +
                      " sleep 60' </dev/null >/dev/null 2>&1 & trap 'echo got-term; echo "
                      "trap-ran-to-exit; exit 5' TERM; "
                      "while :; do sleep 0.05; done"};
  options.timeout_ms = 500;
  options.kill_grace_ms = 5'000;
  auto timed = (*server)->Run(options);
  REQUIRE(timed.ok());
  CHECK(timed->timed_out);
  CHECK(timed->exit_code == 124);
  // The trap ended it (its last line written), not the SIGKILL after the grace.
  CHECK_THAT(timed->stdout_text, Catch::Contains("got-term\ntrap-ran-to-exit\n"));
  CHECK(survivors().empty());
  // And when the caller cancels (Ctrl-C in codex).
  const auto start = std::chrono::steady_clock::now();
  options.timeout_ms = 60'000;
  options.should_cancel = [&] {
    return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(500);
  };
  auto cancelled = (*server)->Run(options);
  REQUIRE_FALSE(cancelled.ok());
  CHECK(cancelled.status().code() == StatusCode::kCancelled);
  CHECK(survivors().empty());
}

TEST_CASE("Without namespaces or Landlock, sandboxed modes refuse to run unconfined") {
  AbiOverride pretend(0);
  LayerChoice choice(Layers::kLandlockOnly);
  for (Mode mode : {Mode::kReadOnly, Mode::kWorkspaceWrite}) {
    auto c = Confinement::Prepare(Spec(mode));
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().code() == StatusCode::kFailedPrecondition);
    CHECK_THAT(c.status().message(),
               Catch::StartsWith("cannot enforce") &&
                   Catch::Contains("Landlock is not available on this kernel") &&
                   Catch::Contains("bubblewrap (bwrap) is not installed") &&
                   Catch::EndsWith("or run unconfined with --sandbox danger-full-access"));
  }
  CHECK(Confinement::Prepare(Spec(Mode::kFullAccess)).ok());
}

TEST_CASE("Without Landlock the namespaces still hold the filesystem") {
  if (!HaveBwrap()) return;
  AbiOverride pretend(0);
  Tree t;
  const auto spec = t.WorkspaceWrite();
  auto c = Confinement::Prepare(spec);
  REQUIRE(c.ok());
  CHECK((*c)->landlock_abi() == 0);
  CHECK((*c)->uses_namespaces());
  CHECK(Run(spec, t.ws(), "echo ok > newtop && echo ok > src/new").exit_code == 0);
  CHECK(Run(spec, t.ws(), "echo evil > ../outside/new.txt").exit_code != 0);
  CHECK(Run(spec, t.ws(), "echo evil >> .git/config").exit_code != 0);
  CHECK_FALSE(fs::exists(t.outside() / "new.txt"));
  CHECK(Answer(Probe(spec, {"socket", "unix", "stream"})) == "denied EPERM");
}

TEST_CASE("With Landlock ABI >= 6, signals cannot leave the sandbox") {
  if (kRealAbi < 6) {
    codex::testing::SkipPart("signal scoping needs Landlock ABI 6, the kernel has " +
                             std::to_string(kRealAbi));
    return;
  }
  LayerChoice choice(Layers::kLandlockOnly);
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

TEST_CASE("Prepare rejects writable roots that are missing or not directories") {
  Tree t;
  SandboxSpec spec;
  spec.mode = Mode::kWorkspaceWrite;
  spec.writable_roots = {(t.ws() / "missing").string()};
  auto missing = Confinement::Prepare(spec);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kInvalidArgument);
  CHECK(missing.status().message().find("missing") != std::string::npos);

  spec.writable_roots = {(t.ws() / "top.txt").string()};
  auto file = Confinement::Prepare(spec);
  REQUIRE_FALSE(file.ok());
  CHECK(file.status().code() == StatusCode::kInvalidArgument);
}

// Issue 23: the workspace policy (workspace_policy.h) through the sandbox
// door, one row per protected path, each in every layer set: the attack must
// fail and leave the host's files as they were.
TEST_CASE("Every protected path, existing or not, holds against the sandboxed shell") {
  struct Row {
    const char* name;
    // Builds the scene under `base`; returns the spec's roots and the cwd.
    std::function<void(const fs::path& base, std::vector<std::string>& roots, fs::path& cwd)> setup;
    const char* attack;
    std::function<void(const fs::path& base)> check;
  };
  const std::vector<Row> rows = {
      {"existing .git: write, remove, swap for a symlink",
       [](const fs::path& b, std::vector<std::string>& roots, fs::path& cwd) {
         fs::create_directories(b / "ws" / ".git" / "hooks");
         WriteFile(b / "ws" / ".git" / "config", "[core]\n");
         roots = {(b / "ws").string()};
         cwd = b / "ws";
       },
       "echo '[core] fsmonitor = x' >> .git/config; rm -rf .git; "
       "mv .git g; rm .git; ln -s /tmp/evil.git .git; ln -sfn /tmp/evil.git .git",
       [](const fs::path& b) {
         CHECK(ReadFile(b / "ws" / ".git" / "config") == "[core]\n");
         CHECK_FALSE(fs::is_symlink(b / "ws" / ".git"));
         CHECK_FALSE(fs::exists(b / "ws" / "g"));
       }},
      {"absent .git: git init and plant core.fsmonitor",
       [](const fs::path& b, std::vector<std::string>& roots, fs::path& cwd) {
         fs::create_directories(b / "plain");
         roots = {(b / "plain").string()};
         cwd = b / "plain";
       },
       "git init -q . ; git config core.fsmonitor 'touch pwned'; mkdir -p .git/hooks; "
       "echo '[core] fsmonitor = x' > .git/config; ln -s /tmp/evil.git .git; "
       "echo 'gitdir: /tmp/evil' > .git",
       [](const fs::path& b) {
         CHECK_FALSE(fs::exists(b / "plain" / ".git" / "config"));
         CHECK_FALSE(fs::exists(b / "plain" / ".git" / "HEAD"));
         CHECK_FALSE(fs::is_symlink(b / "plain" / ".git"));
         CHECK_FALSE(fs::is_regular_file(b / "plain" / ".git"));
       }},
      {"absent .codex: project settings",
       [](const fs::path& b, std::vector<std::string>& roots, fs::path& cwd) {
         fs::create_directories(b / "plain");
         roots = {(b / "plain").string()};
         cwd = b / "plain";
       },
       "mkdir -p .codex; echo 'sandbox_mode = \"danger-full-access\"' > .codex/config.toml; "
       "ln -s /proc .codex",
       [](const fs::path& b) {
         CHECK_FALSE(fs::exists(b / "plain" / ".codex" / "config.toml"));
         CHECK_FALSE(fs::is_symlink(b / "plain" / ".codex"));
       }},
      {"a submodule's .git file",
       [](const fs::path& b, std::vector<std::string>& roots, fs::path& cwd) {
         fs::create_directories(b / "ws" / ".git" / "modules" / "mod");
         fs::create_directories(b / "ws" / "mod");
         WriteFile(b / "ws" / ".gitmodules", "[submodule \"mod\"]\n\tpath = mod\n\turl = x\n");
         WriteFile(b / "ws" / "mod" / ".git", "gitdir: ../.git/modules/mod\n");
         WriteFile(b / "ws" / ".git" / "modules" / "mod" / "config", "[core]\n");
         roots = {(b / "ws").string()};
         cwd = b / "ws";
       },
       "echo 'gitdir: /tmp/evil' > mod/.git; rm -f mod/.git; mv mod mod2; "
       "echo x >> .git/modules/mod/config",
       [](const fs::path& b) {
         CHECK(ReadFile(b / "ws" / "mod" / ".git") == "gitdir: ../.git/modules/mod\n");
         CHECK(ReadFile(b / "ws" / ".git" / "modules" / "mod" / "config") == "[core]\n");
       }},
      {"the .git of the repository above the workspace (started in repo/sub)",
       [](const fs::path& b, std::vector<std::string>& roots, fs::path& cwd) {
         fs::create_directories(b / "repo" / ".git" / "hooks");
         fs::create_directories(b / "repo" / "sub");
         WriteFile(b / "repo" / ".git" / "config", "[core]\n");
         // The enclosing directory is writable too, as /tmp is.
         roots = {b.string(), (b / "repo" / "sub").string()};
         cwd = b / "repo" / "sub";
       },
       "echo x > ../.git/hooks/pre-commit; echo x >> ../.git/config; mv ../.git ../g",
       [](const fs::path& b) {
         CHECK_FALSE(fs::exists(b / "repo" / ".git" / "hooks" / "pre-commit"));
         CHECK(ReadFile(b / "repo" / ".git" / "config") == "[core]\n");
       }},
      {"rename the directory above a workspace under /tmp, then plant a new one",
       [](const fs::path& b, std::vector<std::string>& roots, fs::path& cwd) {
         fs::create_directories(b / "x" / "ws" / ".git");
         WriteFile(b / "x" / "ws" / "marker", "original\n");
         roots = {b.string(), (b / "x" / "ws").string()};
         cwd = b / "x" / "ws";
       },
       "cd ../.. && mv x y; mkdir -p x/ws/.git && echo '[core]' > x/ws/.git/config",
       [](const fs::path& b) {
         CHECK(ReadFile(b / "x" / "ws" / "marker") == "original\n");
         CHECK_FALSE(fs::exists(b / "y"));
         CHECK_FALSE(fs::exists(b / "x" / "ws" / ".git" / "config"));
       }},
      {"an absent .git above the workspace",
       [](const fs::path& b, std::vector<std::string>& roots, fs::path& cwd) {
         fs::create_directories(b / "proj" / "sub");
         roots = {b.string(), (b / "proj" / "sub").string()};
         cwd = b / "proj" / "sub";
       },
       "mkdir -p ../.git/hooks && echo x > ../.git/config; git init -q ..",
       [](const fs::path& b) {
         CHECK_FALSE(fs::exists(b / "proj" / ".git" / "config"));
         CHECK_FALSE(fs::exists(b / "proj" / ".git" / "HEAD"));
       }},
  };
  for (const Layers layers : AvailableLayers()) {
    LayerChoice choice(layers);
    for (const Row& row : rows) {
      INFO(Name(layers) << ": " << row.name);
      codex::testing::TempDir dir("codex-policy-test-", "/tmp");
      SandboxSpec spec;
      spec.mode = Mode::kWorkspaceWrite;
      fs::path cwd;
      row.setup(dir.path(), spec.writable_roots, cwd);
      auto r = Run(spec, cwd, std::string("set +e; ") + row.attack + "; echo done");
      INFO("stderr: " << r.stderr_text);
      CHECK(r.stdout_text.find("done") != std::string::npos);
      row.check(dir.path());
    }
  }
}

TEST_CASE("A protected path that crosses a writable symlink is refused, in one line") {
  struct Row {
    const char* name;
    std::function<void(const fs::path& root)> plant;
    const char* expect;
  };
  const std::vector<Row> rows = {
      {".git -> /proc",
       [](const fs::path& r) { fs::create_directory_symlink("/proc", r / ".git"); },
       "crosses writable symlink"},
      {".git -> an attacker's repository",
       [](const fs::path& r) {
         fs::create_directories(r.parent_path() / "evil.git");
         fs::create_directory_symlink(r.parent_path() / "evil.git", r / ".git");
       },
       "crosses writable symlink"},
      {".codex -> /proc",
       [](const fs::path& r) { fs::create_directory_symlink("/proc", r / ".codex"); },
       "crosses writable symlink"},
      {".git file with gitdir: /proc",
       [](const fs::path& r) { WriteFile(r / ".git", "gitdir: /proc\n"); }, "/proc"},
      {".git file whose gitdir goes through a writable symlink",
       [](const fs::path& r) {
         fs::create_directories(r / "real");
         fs::create_directory_symlink("/proc", r / "link");
         WriteFile(r / ".git", "gitdir: link/self\n");
       },
       "crosses writable symlink"},
  };
  for (const Layers layers : AvailableLayers()) {
    LayerChoice choice(layers);
    for (const Row& row : rows) {
      INFO(Name(layers) << ": " << row.name);
      codex::testing::TempDir dir("codex-policy-test-", "/tmp");
      const fs::path root = dir.path() / "ws";
      fs::create_directories(root);
      row.plant(root);
      SandboxSpec spec;
      spec.mode = Mode::kWorkspaceWrite;
      spec.writable_roots = {root.string()};
      auto c = Confinement::Prepare(spec);
      REQUIRE_FALSE(c.ok());
      CHECK(c.status().code() == StatusCode::kFailedPrecondition);
      CHECK_THAT(c.status().message(), Catch::Contains(row.expect));
      CHECK(c.status().message().find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("/dev/shm is the sandbox's own, never the host's") {
  if (!fs::is_directory("/dev/shm")) return;
  const std::string host_marker = "/dev/shm/codex-confine-host-" + std::to_string(::getpid());
  WriteFile(host_marker, "host\n");
  const std::string inside = "codex-confine-inside-" + std::to_string(::getpid());
  for (const Layers layers : AvailableLayers()) {
    INFO(Name(layers));
    LayerChoice choice(layers);
    Tree t;
    const auto spec = t.WorkspaceWrite();
    auto r = Run(spec, t.ws(),
                 "cat " + host_marker + "; echo x > /dev/shm/" + inside + " && echo wrote");
    if (layers == Layers::kNamespaces) {
      // A private directory: the host's files are not there, its own writes work.
      CHECK(r.stdout_text.find("host") == std::string::npos);
      CHECK(r.stdout_text.find("wrote") != std::string::npos);
    } else {
      // Without namespaces it is the host's: not writable at all.
      CHECK(r.stdout_text.find("wrote") == std::string::npos);
    }
    CHECK_FALSE(fs::exists("/dev/shm/" + inside));
  }
  fs::remove(host_marker);
}

TEST_CASE("Another terminal's /dev/pts cannot be written, in every layer set") {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    WARN("no pseudo-terminal here: skipped");
    return;
  }
  const std::string slave = ::ptsname(master);
  ::chmod(slave.c_str(), 0666);
  for (const Layers layers : AvailableLayers()) {
    INFO(Name(layers));
    LayerChoice choice(layers);
    Tree t;
    for (const SandboxSpec& spec : {Spec(Mode::kReadOnly), t.WorkspaceWrite()}) {
      auto r = Run(spec, t.ws(), "printf '\\033]0;pwned\\007' > " + slave + " && echo wrote");
      CHECK(r.stdout_text.find("wrote") == std::string::npos);
    }
  }
  ::fcntl(master, F_SETFL, O_NONBLOCK);
  char buf[64];
  CHECK(::read(master, buf, sizeof buf) < 0);
  ::close(master);
}

TEST_CASE("Private paths (the --ephemeral store) are masked and never writable") {
  for (const Layers layers : AvailableLayers()) {
    INFO(Name(layers));
    LayerChoice choice(layers);
    Tree t;
    fs::create_directories(t.ws() / "state");
    WriteFile(t.ws() / "state" / "sessions.db", "secret transcript\n");
    auto spec = t.WorkspaceWrite();
    spec.private_paths = {(t.ws() / "state").string()};
    auto r = Run(spec, t.ws(), "cat state/sessions.db; echo x > state/sessions.db; rm -rf state");
    if (layers == Layers::kNamespaces) {
      CHECK(r.stdout_text.find("secret") == std::string::npos);
    }
    CHECK(ReadFile(t.ws() / "state" / "sessions.db") == "secret transcript\n");
  }
}

TEST_CASE("Read-only paths (the shell snapshots) are readable and never writable") {
  for (const Layers layers : AvailableLayers()) {
    INFO(Name(layers));
    LayerChoice choice(layers);
    Tree t;
    const fs::path dir = t.ws() / "home" / ".codex" / "shell_snapshots";
    fs::create_directories(dir);
    fs::create_directories(t.ws() / "src");
    WriteFile(dir / "1.2.ab.sh", "export FROM_SNAPSHOT=1\n");
    auto spec = t.WorkspaceWrite();
    spec.read_only_paths = {dir.string()};
    auto r = Run(spec, t.ws(),
                 "d=home/.codex/shell_snapshots; . $d/1.2.ab.sh && echo read=$FROM_SNAPSHOT; "
                 "echo 'echo planted' >> $d/1.2.ab.sh; echo x > $d/new.sh; rm -f $d/1.2.ab.sh; "
                 "mv $d $d.away; mv home/.codex home/.codex.away; mkdir -p $d; "
                 "echo planted > $d/1.2.ab.sh; echo done");
    INFO(r.output);
    CHECK_THAT(r.stdout_text, Catch::StartsWith("read=1\n") && Catch::EndsWith("done\n"));
    CHECK(ReadFile(dir / "1.2.ab.sh") == "export FROM_SNAPSHOT=1\n");
    CHECK_FALSE(fs::exists(dir / "new.sh"));
    // The rest of the workspace stays writable (without namespaces, but for
    // new entries in the directories on the way to it, as for a nested .git).
    CHECK(Run(spec, t.ws(), "echo y > src/other && echo ok").stdout_text == "ok\n");
  }
}

TEST_CASE(
    "An absent .git or .codex leaves no mount point behind, and holds while another sandbox "
    "of the same root still runs") {
  if (!HaveBwrap()) {
    codex::testing::SkipTest("bubblewrap cannot create namespaces here (" + ProbeBwrap().reason +
                             "); absent paths get no mount point without them");
  }
  Tree t;
  const auto spec = t.WorkspaceWrite();
  const fs::path git = t.plain() / ".git";
  const fs::path codex_dir = t.plain() / ".codex";
  // One command: the placeholders exist only while it runs.
  auto once = Run(spec, t.plain(), "test -d .git && test -d .codex && echo reserved");
  CHECK(once.stdout_text == "reserved\n");
  CHECK_FALSE(fs::exists(git));
  CHECK_FALSE(fs::exists(codex_dir));

  // Two sandboxes of the same root at once (parallel tool calls): the first
  // one ending must not open the path to the second one's command.
  auto first = Confinement::Prepare(spec);
  auto second = Confinement::Prepare(spec);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(fs::is_directory(git));
  first->reset();
  CHECK(fs::is_directory(git));
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c",
                  "mkdir .git/hooks; echo '[core]' > .git/config; echo x > .codex/config.toml; "
                  "ls -A .git .codex"};
  options.cwd = t.plain().string();
  options.timeout_ms = 20'000;
  options.child_setup = second->get();
  auto r = RunProcess(options);
  REQUIRE(r.ok());
  INFO(r->output);
  CHECK(Denied(*r));
  CHECK(fs::is_empty(git));
  CHECK(fs::is_empty(codex_dir));
  second->reset();
  CHECK_FALSE(fs::exists(git));
  CHECK_FALSE(fs::exists(codex_dir));

  // A directory that was there before (the user's own empty .git) stays.
  fs::create_directory(git);
  Run(spec, t.plain(), "true");
  CHECK(fs::is_directory(git));
}
