#include "sandbox/seccomp_filter.h"

#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <initializer_list>
#include <memory>

#include "sandbox/unique_fd.h"

namespace codex::sandbox {
namespace {

struct CtxDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxDeleter>;

Status SeccompError(const char* what, int rc) {
  // libseccomp returns negative errno values.
  return Status(StatusCode::kInternal, ErrnoMessage(std::string("seccomp: ") + what, -rc));
}

// The system calls denied in every confined mode, by name so that a name
// libseccomp does not know on this architecture is skipped, not an error.
constexpr const char* kDeniedCalls[] = {
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "reboot",
    "swapon",
    "swapoff",
    "sethostname",
    "setdomainname",
    "acct",
    "syslog",
    "vhangup",
    "quotactl",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "init_module",
    "finit_module",
    "delete_module",
    "kexec_load",
    "kexec_file_load",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "keyctl",
    "add_key",
    "request_key",
    "unshare",
    "setns",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    "name_to_handle_at",
    "open_by_handle_at",
};

constexpr uint64_t kNamespaceFlags[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
                                        CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
                                        CLONE_NEWNET, 0x00000080 /* CLONE_NEWTIME */};

}  // namespace

Result<std::vector<sock_filter>> BuildSeccompFilter(Network network) {
  Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Status(StatusCode::kInternal, "seccomp: cannot allocate a filter");
  // no_new_privs is set by the caller in the child; the filter is exported,
  // not loaded, so libseccomp's own NNP handling does not apply.
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  int rc = 0;
  auto add = [&](uint32_t action, int syscall_nr, std::initializer_list<scmp_arg_cmp> args) {
    if (rc == 0) {
      rc = seccomp_rule_add_array(ctx.get(), action, syscall_nr, static_cast<unsigned>(args.size()),
                                  args.begin());
    }
  };

  add(deny, SCMP_SYS(ioctl), {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFU, TIOCSTI)});
  add(deny, SCMP_SYS(ioctl), {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFU, TIOCLINUX)});
  for (const char* name : kDeniedCalls) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr != __NR_SCMP_ERROR) add(deny, nr, {});
  }
  for (uint64_t flag : kNamespaceFlags) {
    add(deny, SCMP_SYS(clone), {SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)});
  }
  add(SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), {});

  add(deny, SCMP_SYS(socketpair), {SCMP_A0(SCMP_CMP_NE, AF_UNIX)});
  add(deny, SCMP_SYS(socketpair), {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xF, SOCK_DGRAM)});
  if (network == Network::kDenied) {
    add(deny, SCMP_SYS(socket), {});
  } else {
    // Only AF_INET (2) and AF_INET6 (10): everything below, between and above.
    add(deny, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_LT, AF_INET)});
    add(deny, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_GT, AF_INET6)});
    for (int family = AF_INET + 1; family < AF_INET6; ++family) {
      add(deny, SCMP_SYS(socket), {SCMP_A0(SCMP_CMP_EQ, static_cast<uint64_t>(family))});
    }
  }
  if (rc != 0) return SeccompError("adding a rule", rc);

  // libseccomp 2.5 can only export to a file descriptor.
  UniqueFd mem(::memfd_create("codex-seccomp", MFD_CLOEXEC));
  if (!mem) return Status(StatusCode::kInternal, ErrnoMessage("memfd_create", errno));
  rc = seccomp_export_bpf(ctx.get(), mem.get());
  if (rc != 0) return SeccompError("exporting the filter", rc);
  off_t size = ::lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) {
    return Status(StatusCode::kInternal, "seccomp: the exported filter has an unexpected size");
  }
  std::vector<sock_filter> program(static_cast<size_t>(size) / sizeof(sock_filter));
  if (::pread(mem.get(), program.data(), static_cast<size_t>(size), 0) != size) {
    return Status(StatusCode::kInternal, ErrnoMessage("reading the seccomp filter", errno));
  }
  return program;
}

std::vector<std::string> DescribeSeccompFilter(Network network) {
  std::vector<std::string> lines = {
      network == Network::kDenied
          ? "sockets: socket() denied for every family (AF_UNIX, inet, inet6, netlink, packet)"
          : "sockets: socket() only for AF_INET and AF_INET6 (no UNIX, netlink or packet)",
      "socketpair: AF_UNIX stream and seqpacket only",
      "denied: clock, reboot, swap, hostname, mount, modules, kexec, bpf, perf, keyring, "
      "namespaces (unshare, setns, clone flags, clone3), ptrace, process_vm_*, io_uring, "
      "TIOCSTI"};
  return lines;
}

int InstallSeccompFilter(const sock_filter* program, size_t length) noexcept {
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(length);
  prog.filter = const_cast<sock_filter*>(program);
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return errno;
  return 0;
}

}  // namespace codex::sandbox
