#include "sandbox/seccomp_filter.h"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <memory>

#include "sandbox/unique_fd.h"

namespace codex::sandbox {
namespace {

struct CtxDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxDeleter>;

Error SeccompError(const char* what, int rc) {
  // libseccomp returns negative errno values.
  return Error(ErrorKind::kInternal, ErrnoMessage(std::string("seccomp: ") + what, -rc));
}

}  // namespace

Expected<std::vector<sock_filter>> BuildSeccompFilter(Network network) {
  Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Error(ErrorKind::kInternal, "seccomp: cannot allocate a filter");
  // no_new_privs is set by the caller in the child; the filter is exported,
  // not loaded, so libseccomp's own NNP handling does not apply.
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  int rc = 0;
  auto add = [&](int syscall_nr, unsigned count, const scmp_arg_cmp* args) {
    if (rc == 0) rc = seccomp_rule_add_array(ctx.get(), deny, syscall_nr, count, args);
  };

  const std::array<scmp_arg_cmp, 1> sti = {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFU, TIOCSTI)};
  const std::array<scmp_arg_cmp, 1> tlinux = {SCMP_A1(SCMP_CMP_MASKED_EQ, 0xFFFFFFFFU, TIOCLINUX)};
  add(SCMP_SYS(ioctl), 1, sti.data());
  add(SCMP_SYS(ioctl), 1, tlinux.data());
  for (int nr : {SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
                 SCMP_SYS(init_module), SCMP_SYS(finit_module), SCMP_SYS(delete_module),
                 SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load)}) {
    add(nr, 0, nullptr);
  }
  if (network == Network::kDenied) {
    const std::array<scmp_arg_cmp, 1> not_unix = {SCMP_A0(SCMP_CMP_NE, AF_UNIX)};
    add(SCMP_SYS(socket), 1, not_unix.data());
    add(SCMP_SYS(socketpair), 1, not_unix.data());
  }
  if (rc != 0) return SeccompError("adding a rule", rc);

  // libseccomp 2.5 can only export to a file descriptor.
  UniqueFd mem(::memfd_create("codex-seccomp", MFD_CLOEXEC));
  if (!mem) return Error(ErrorKind::kInternal, ErrnoMessage("memfd_create", errno));
  rc = seccomp_export_bpf(ctx.get(), mem.get());
  if (rc != 0) return SeccompError("exporting the filter", rc);
  off_t size = ::lseek(mem.get(), 0, SEEK_END);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) {
    return Error(ErrorKind::kInternal, "seccomp: the exported filter has an unexpected size");
  }
  std::vector<sock_filter> program(static_cast<size_t>(size) / sizeof(sock_filter));
  if (::pread(mem.get(), program.data(), static_cast<size_t>(size), 0) != size) {
    return Error(ErrorKind::kInternal, ErrnoMessage("reading the seccomp filter", errno));
  }
  return program;
}

int InstallSeccompFilter(const sock_filter* program, size_t length) noexcept {
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(length);
  prog.filter = const_cast<sock_filter*>(program);
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return errno;
  return 0;
}

}  // namespace codex::sandbox
