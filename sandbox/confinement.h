// Confinement: the sandbox applied to a command.
//
// Modes:
//   * kReadOnly: the whole filesystem can be read and executed; nothing can
//     be written except the devices ordinary tools need: /dev/null,
//     /dev/zero, /dev/full, /dev/random, /dev/urandom, /dev/tty (write,
//     truncate and device ioctls on those only). Network denied.
//   * kWorkspaceWrite: as read-only, plus every writable root may be written:
//     create, write, truncate, remove, rename, symlink, mkdir, at any depth
//     including the top of the root. Never device nodes (mknod would let root
//     write raw disks). What stays read-only inside the roots is decided by
//     the one workspace policy (workspace_policy.h): `.git` and `.codex` at
//     the top of each root whether or not they exist, a worktree's gitdir and
//     common dir, submodules' `.git` files, the `.git` of the repository
//     above a root; codex's private paths are masked. A protected path that
//     crosses a writable symlink makes Prepare() fail (kFailedPrecondition).
//     With namespaces /dev/shm is the sandbox's own. Network denied unless
//     SandboxSpec::network is kAllowed, which opens inet and inet6 only.
//   * kFullAccess: no confinement at all.
//
// Layers, outermost first (see docs/threat-model.md):
//   1. Namespaces (launcher.h): bubblewrap runs the command in fresh user,
//      mount, PID, IPC and, with the network off, network namespaces. The
//      mount namespace shows / read-only, the writable roots writable and
//      the protected paths read-only again (bind mounts subtract what
//      Landlock cannot; the directories on the way are bound onto
//      themselves so that they cannot be renamed away),
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
// subtree, so every directory on the way to a protected path (existing or
// not) is granted entry by entry: nothing new can be created at the top of a
// workspace root, nor in /tmp when the workspace lies under it. The top-level
// `.git`/`.codex` of /tmp and $TMPDIR themselves are left writable there (to
// keep /tmp usable), /dev/shm and /dev/pts are not writable (they are the
// host's). Without Landlock the namespaces hold the filesystem. With neither,
// Prepare() refuses kReadOnly and kWorkspaceWrite with kUnavailable rather
// than running unconfined. A prepared Confinement is immutable and may be used
// by any number of children (they share its /dev/shm directory); it enforces
// the workspace policy as the filesystem was at Prepare() (which paths
// existed), so a long-lived user such as a per-session server should prepare
// a fresh one per command, as core::PrepareCommand does. Thread-safe after
// Prepare().
#pragma once

#include <linux/filter.h>

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "sandbox/launcher.h"
#include "sandbox/mount_point.h"
#include "sandbox/process.h"
#include "sandbox/seccomp_filter.h"
#include "sandbox/unique_fd.h"
#include "sandbox/workspace_policy.h"

namespace codex::sandbox {

enum class Mode { kReadOnly, kWorkspaceWrite, kFullAccess };

struct SandboxSpec {
  Mode mode = Mode::kReadOnly;
  // kWorkspaceWrite only: directories that may be written, exactly these
  // (WorkspacePolicy::Compute(...).root_paths() gives the usual list, with
  // /tmp and $TMPDIR unless excluded). Relative paths are resolved against the current
  // directory; symlinks are resolved. Each must exist.
  std::vector<std::string> writable_roots;
  // kWorkspaceWrite only: codex's own state (e.g. the --ephemeral store),
  // masked with namespaces and never writable.
  std::vector<std::string> private_paths;
  // kWorkspaceWrite only: codex's own files commands may read but never
  // write (WritableRootsSpec::read_only_paths).
  std::vector<std::string> read_only_paths;
  // kWorkspaceWrite with namespaces: a private, writable /dev/shm (a fresh
  // directory under the host's /dev/shm, removed by ~Confinement). Turn it
  // off when the Confinement is never destroyed (the command replaces this
  // process); /dev/shm is then private and empty but
  // not writable.
  bool writable_shm = true;
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
  // kFailedPrecondition (a protected path crosses a writable symlink; see
  // workspace_policy.h), kInternal.
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
  // Canonical writable roots (kWorkspaceWrite), and the protected paths
  // inside them that the sandbox keeps read-only (existing or not).
  const std::vector<std::string>& writable_roots() const { return roots_; }
  const std::vector<std::string>& protected_paths() const { return protected_; }
  // The whole workspace policy this confinement enforces (kWorkspaceWrite).
  const WorkspacePolicy& policy() const { return policy_; }
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

 public:
  ~Confinement() override;

 private:
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
  WorkspacePolicy policy_;
  std::string shm_dir_;  // the sandbox's own /dev/shm, removed by the destructor
  // The directories bubblewrap mounts over absent protected paths, removed
  // again when no sandbox uses them (mount_point.h).
  std::vector<std::shared_ptr<MountPoint>> mount_points_;
  std::vector<LayerReport> layers_;
};

}  // namespace codex::sandbox
