// Confinement: the sandbox applied to a command between fork and exec.
//
// Modes:
//   * kReadOnly: the whole filesystem can be read and executed; nothing can
//     be written except the devices ordinary tools need: /dev/null,
//     /dev/zero, /dev/full, /dev/random, /dev/urandom, /dev/tty, /dev/ptmx
//     and /dev/pts/* (write, truncate and device ioctls on those only).
//     Network denied.
//   * kWorkspaceWrite: as read-only, plus every writable root (and /dev/shm)
//     may be written: create, write, truncate, remove, rename, symlink,
//     mkdir. Never device nodes (mknod would let root write raw disks).
//     A `.git` entry at the top of a writable root stays read-only. Landlock
//     can only allow, never carve out, so a root holding a `.git` is not
//     granted itself: write access goes to each of its entries except
//     `.git`. Consequences:
//       - at the top of such a root, entries cannot be created, removed or
//         renamed (writing into existing files and subdirectories works);
//       - entries created there after the sandbox started (by anyone) are
//         not writable from inside;
//       - `.git` directories deeper inside a root are not protected, nor is a
//         root's `.git` when another writable root encloses it (e.g. a
//         repository under /tmp in workspace-write): splitting /tmp the same
//         way would make `mktemp` fail, which is worse;
//       - symlinked entries are not followed when granting (writes through a
//         symlink reach its target only if the target is writable itself).
//     Network denied unless SandboxSpec::network is kAllowed.
//   * kFullAccess: no confinement at all.
// Enforcement: no_new_privs, then Landlock (filesystem; with ABI >= 4 also
// TCP bind/connect when the network is denied; with ABI >= 6 signals and
// abstract UNIX sockets are scoped to the sandbox), then seccomp (see
// seccomp_filter.h). With Landlock ABI 1, renames and links across
// directories fail with EXDEV even inside writable roots.
//
// When the kernel has no Landlock, Prepare() refuses kReadOnly and
// kWorkspaceWrite with kUnavailable rather than running unconfined.
// A prepared Confinement is immutable; ApplyInChild is async-signal-safe and
// may be used from any number of children. Thread-safe after Prepare().
#pragma once

#include <linux/filter.h>

#include <memory>
#include <string>
#include <vector>

#include "sandbox/error.h"
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

inline constexpr const char* kLandlockMissingMessage =
    "Landlock is not available on this kernel; use --sandbox danger-full-access to run without "
    "a sandbox";

class Confinement : public ChildSetup {
 public:
  // Builds the Landlock ruleset and the seccomp program. Errors:
  // kUnavailable (no Landlock, message kLandlockMissingMessage),
  // kInvalidArgument (a writable root does not exist or is not a directory),
  // kInternal.
  static Expected<std::unique_ptr<Confinement>> Prepare(const SandboxSpec& spec);

  int ApplyInChild(const char** what) const noexcept override;

  Mode mode() const { return mode_; }
  Network network() const { return network_; }
  // The Landlock ABI in use (0 for kFullAccess).
  int landlock_abi() const { return abi_; }
  // Canonical writable roots (kWorkspaceWrite), and the top-level `.git`
  // paths of those roots that were left out of the grants.
  const std::vector<std::string>& writable_roots() const { return roots_; }
  const std::vector<std::string>& protected_paths() const { return protected_; }

 private:
  Confinement() = default;

  Mode mode_ = Mode::kFullAccess;
  Network network_ = Network::kAllowed;
  int abi_ = 0;
  UniqueFd ruleset_;
  std::vector<sock_filter> seccomp_;
  std::vector<std::string> roots_;
  std::vector<std::string> protected_;
};

}  // namespace codex::sandbox
