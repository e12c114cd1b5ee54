// Landlock through raw system calls (the UAPI of linux/landlock.h).
//
// Rulesets are built in the parent (this allocates and opens files) and only
// enforced in the child with RestrictSelf(), which is async-signal-safe.
// The access rights handled depend on the kernel's ABI version:
//   v1: the 13 basic filesystem rights; v2: + REFER (cross-directory
//   rename/link; without it such renames always fail with EXDEV);
//   v3: + TRUNCATE; v4: + TCP bind/connect; v5: + IOCTL_DEV;
//   v6: + scoping of abstract UNIX sockets and signals.
// Thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "sandbox/unique_fd.h"

namespace codex::sandbox::landlock {

// Filesystem access rights (bit values are the kernel ABI).
inline constexpr uint64_t kExecute = 1ULL << 0;
inline constexpr uint64_t kWriteFile = 1ULL << 1;
inline constexpr uint64_t kReadFile = 1ULL << 2;
inline constexpr uint64_t kReadDir = 1ULL << 3;
inline constexpr uint64_t kRemoveDir = 1ULL << 4;
inline constexpr uint64_t kRemoveFile = 1ULL << 5;
inline constexpr uint64_t kMakeChar = 1ULL << 6;
inline constexpr uint64_t kMakeDir = 1ULL << 7;
inline constexpr uint64_t kMakeReg = 1ULL << 8;
inline constexpr uint64_t kMakeSock = 1ULL << 9;
inline constexpr uint64_t kMakeFifo = 1ULL << 10;
inline constexpr uint64_t kMakeBlock = 1ULL << 11;
inline constexpr uint64_t kMakeSym = 1ULL << 12;
inline constexpr uint64_t kRefer = 1ULL << 13;     // ABI >= 2
inline constexpr uint64_t kTruncate = 1ULL << 14;  // ABI >= 3
inline constexpr uint64_t kIoctlDev = 1ULL << 15;  // ABI >= 5

// Network access rights (ABI >= 4).
inline constexpr uint64_t kNetBindTcp = 1ULL << 0;
inline constexpr uint64_t kNetConnectTcp = 1ULL << 1;

// Scopes (ABI >= 6).
inline constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0;
inline constexpr uint64_t kScopeSignal = 1ULL << 1;

// Rights that make sense on a non-directory (the kernel rejects others).
inline constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

// The kernel's Landlock ABI version, 0 when Landlock is missing or disabled.
int AbiVersion();

// Every filesystem right the given ABI version knows.
uint64_t FsRightsForAbi(int abi);

// Pretends the kernel offers at most `abi` (0 = no Landlock); -1 restores the
// real value. For tests of ABI differences and of the refusal path.
void TEST_SetAbiOverride(int abi);

// A ruleset under construction; fd() is what RestrictSelf() enforces.
class Ruleset {
 public:
  // Handles `fs` (masked to what `abi` knows), `net` (ignored below v4) and
  // `scopes` (ignored below v6).
  static Result<Ruleset> Create(int abi, uint64_t fs, uint64_t net, uint64_t scopes);

  // Allows `access` beneath `path` (a directory) or on it (a file). Rights the
  // ruleset does not handle are dropped; for a file, rights outside
  // kFileRights are dropped; when nothing is left no rule is added. Symlinks are not followed:
  // `path` is expected to be canonical. A path that does not exist is kNotFound.
  [[nodiscard]] Status AddPathRule(const std::string& path, uint64_t access);
  // Same, for an already opened O_PATH descriptor.
  [[nodiscard]] Status AddFdRule(int fd, bool is_directory, uint64_t access);

  uint64_t handled_fs() const { return handled_fs_; }
  int fd() const { return fd_.get(); }
  // Releases the descriptor to the caller.
  UniqueFd TakeFd() { return std::move(fd_); }

 private:
  Ruleset(UniqueFd fd, uint64_t handled_fs) : fd_(std::move(fd)), handled_fs_(handled_fs) {}
  UniqueFd fd_;
  uint64_t handled_fs_ = 0;
};

// In the child: enforces `ruleset_fd` on the calling thread (no_new_privs must
// already be set). Returns 0 or an errno value. Async-signal-safe.
int RestrictSelf(int ruleset_fd) noexcept;

}  // namespace codex::sandbox::landlock
