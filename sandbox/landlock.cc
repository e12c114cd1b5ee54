#include "sandbox/landlock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace codex::sandbox::landlock {
namespace {

// The UAPI structs and flags, declared here because the system header may
// predate the fields this code uses (handled_access_net, scoped).
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

std::atomic<int> g_abi_override{-1};

long CreateRuleset(const RulesetAttr* attr, size_t size, uint32_t flags) {
  return ::syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

}  // namespace

int AbiVersion() {
  long abi = CreateRuleset(nullptr, 0, kCreateRulesetVersion);
  if (abi < 0) abi = 0;
  int override_abi = g_abi_override.load();
  if (override_abi >= 0 && override_abi < abi) abi = override_abi;
  return static_cast<int>(abi);
}

void TEST_SetAbiOverride(int abi) { g_abi_override.store(abi); }

uint64_t FsRightsForAbi(int abi) {
  if (abi < 1) return 0;
  uint64_t rights = (1ULL << 13) - 1;  // the 13 rights of v1
  if (abi >= 2) rights |= kRefer;
  if (abi >= 3) rights |= kTruncate;
  if (abi >= 5) rights |= kIoctlDev;
  return rights;
}

Result<Ruleset> Ruleset::Create(int abi, uint64_t fs, uint64_t net, uint64_t scopes) {
  if (abi < 1) {
    return Status(StatusCode::kFailedPrecondition, "Landlock is not available on this kernel");
  }
  RulesetAttr attr{};
  attr.handled_access_fs = fs & FsRightsForAbi(abi);
  size_t size = sizeof(uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = net & (kNetBindTcp | kNetConnectTcp);
    size = 2 * sizeof(uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = scopes & (kScopeAbstractUnixSocket | kScopeSignal);
    size = sizeof(RulesetAttr);
  }
  long fd = CreateRuleset(&attr, size, 0);
  if (fd < 0) {
    return Status(StatusCode::kInternal, ErrnoMessage("landlock_create_ruleset", errno));
  }
  return Ruleset(UniqueFd(static_cast<int>(fd)), attr.handled_access_fs);
}

Status Ruleset::AddPathRule(const std::string& path, uint64_t access) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    int err = errno;
    return Status(err == ENOENT ? StatusCode::kNotFound : StatusCode::kInternal,
                  ErrnoMessage("cannot open '" + path + "' for a sandbox rule", err));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return Status(StatusCode::kInternal, ErrnoMessage("stat '" + path + "'", errno));
  }
  return AddFdRule(fd.get(), S_ISDIR(st.st_mode), access);
}

Status Ruleset::AddFdRule(int fd, bool is_directory, uint64_t access) {
  PathBeneathAttr attr{};
  attr.allowed_access = access & handled_fs_;
  if (!is_directory) attr.allowed_access &= kFileRights;
  attr.parent_fd = fd;
  if (attr.allowed_access == 0) return OkStatus();
  if (::syscall(SYS_landlock_add_rule, fd_.get(), kRulePathBeneath, &attr, 0) != 0) {
    return Status(StatusCode::kInternal, ErrnoMessage("landlock_add_rule", errno));
  }
  return OkStatus();
}

int RestrictSelf(int ruleset_fd) noexcept {
  if (::syscall(SYS_landlock_restrict_self, ruleset_fd, 0) != 0) return errno;
  return 0;
}

}  // namespace codex::sandbox::landlock
