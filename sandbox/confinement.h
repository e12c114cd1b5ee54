// Confinement: the sandbox applied to a command.
//
// Modes:
//   * kReadOnly: the whole filesystem can be read and executed; nothing can
//     be written except the devices ordinary tools need: /dev/null,
//     /dev/zero, /dev/full, /dev/random, /dev/urandom, /dev/tty (write,
//     truncate and device ioctls on those only). Network denied.
//   * kWorkspaceWrite: as read-only, plus every writable root (and /dev/shm)
//     may be written: create, write, truncate, remove, rename, symlink,
//     mkdir, at any depth including the top of the root. Never device nodes
//     (mknod would let root write raw disks). Under every writable root,
//     `.git` stays read-only: the directory, or a worktree's `.git` file and
//     the directories it points to (its gitdir and the common dir), wherever
//     the root lies (a repository under /tmp, or under an --add-dir parent);
//     so does a `.codex` directory at the top of a root (project settings).
//     Network denied unless SandboxSpec::network is kAllowed, which opens
//     inet and inet6 only.
//   * kFullAccess: no confinement at all.
//
// Layers, outermost first (see docs/threat-model.md):
//   1. Namespaces (launcher.h): bubblewrap runs the command in fresh user,
//      mount, PID, IPC and, with the network off, network namespaces. The
//      mount namespace shows / read-only, the writable roots writable and
//      their .git read-only again (bind mounts subtract what Landlock cannot),
//      a minimal /dev and a private /proc (no host process is visible, so no
//      environ, cmdline or maps of codex or anything else). When the PID 1
//      helper exits, every process the command started dies.
//   2. Landlock (filesystem; ABI >= 4 TCP bind/connect; ABI >= 6 abstract
//      UNIX sockets and signals scoped).
//   3. Every capability dropped (bounding, permitted, effective, inheritable,
//      ambient) and no_new_privs.
//   4. seccomp (seccomp_filter.h): no sockets but AF_UNIX stream/seqpacket
//      pairs with the network off, and the clock, reboot, mount, module,
//      namespace, ptrace... families denied.
// When bubblewrap is missing or user namespaces are not allowed, layers 2-4
// are applied in the forked child directly; Landlock cannot subtract a
// subtree, so a root holding a `.git` or `.codex` is then granted entry by
// entry (new entries at its top cannot be created or renamed, and a
// worktree's gitdir is not protected). Without Landlock the namespaces hold the
// filesystem. With neither, Prepare() refuses kReadOnly and kWorkspaceWrite
// with kUnavailable rather than running unconfined. A prepared Confinement is
// immutable and may be used by any number of children. Thread-safe after
// Prepare().
#pragma once

#include <linux/filter.h>

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "sandbox/launcher.h"
#include "sandbox/process.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/unique_fd.h"

namespace codex::sandbox {

enum class Mode { kReadOnly, kWorkspaceWrite, kFullAccess };

struct SandboxSpec {
  Mode mode = Mode::kReadOnly;
  // kWorkspaceWrite only: directories that may be written. Relative paths are
  // resolved against the current directory; symlinks are resolved. Each must
  // exist.
  std::vector<std::string> writable_roots;
  // Honoured for kWorkspaceWrite only; kReadOnly never has network access and
  // kFullAccess always has.
  Network network = Network::kDenied;
};

// One line of `codex sandbox --explain`: a layer, whether it is active, why.
struct LayerReport {
  std::string name;
  bool active = false;
  std::string detail;
};

class Confinement : public ChildSetup {
 public:
  // Probes the layers, builds the Landlock ruleset, the seccomp program and
  // the bubblewrap command line. Errors: kUnavailable (neither namespaces nor
  // Landlock; the message names what is missing and how to run unconfined),
  // kInvalidArgument (a writable root does not exist or is not a directory),
  // kInternal.
  static Result<std::unique_ptr<Confinement>> Prepare(const SandboxSpec& spec);

  int ApplyInChild(const char** what) const noexcept override;
  std::vector<std::string> LaunchArgv(const std::vector<std::string>& argv,
                                      int report_fd) const override;

  Mode mode() const { return mode_; }
  Network network() const { return network_; }
  // The Landlock ABI in use (0 for kFullAccess or without Landlock).
  int landlock_abi() const { return abi_; }
  // True when the command runs in fresh namespaces (bubblewrap).
  bool uses_namespaces() const { return use_ns_; }
  // Canonical writable roots (kWorkspaceWrite), and the paths under them kept
  // read-only (.git, what a .git file points to, .codex).
  const std::vector<std::string>& writable_roots() const { return roots_; }
  const std::vector<std::string>& protected_paths() const { return protected_; }
  // Every layer, active or not, with the reason.
  const std::vector<LayerReport>& layers() const { return layers_; }

  // What the sandbox server (sandbox_server.h) is launched with. With
  // namespaces: bubblewrap's command line up to and including "--", the
  // Landlock ruleset (-1 without Landlock) and the sealed seccomp program
  // (its descriptor and length in instructions), all close-on-exec. Without
  // namespaces the server is confined by ApplyInChild in its forked child.
  const std::vector<std::string>& bwrap_argv() const { return bwrap_args_; }
  int ruleset_fd() const { return ruleset_.get(); }
  int seccomp_program_fd() const { return seccomp_fd_.get(); }
  size_t seccomp_length() const { return seccomp_.size(); }

 private:
  Confinement() = default;

  Mode mode_ = Mode::kFullAccess;
  Network network_ = Network::kAllowed;
  int abi_ = 0;
  bool use_ns_ = false;
  UniqueFd ruleset_;
  std::vector<sock_filter> seccomp_;
  UniqueFd seccomp_fd_;  // the program, for the helper inside bubblewrap
  UniqueFd exe_fd_;      // this executable, run as the helper
  std::vector<std::string> bwrap_args_;
  std::vector<std::string> roots_;
  std::vector<std::string> protected_;
  std::vector<LayerReport> layers_;
};

}  // namespace codex::sandbox
