// The seccomp-bpf filter of the sandbox, built with libseccomp in the parent
// and installed in the child with a raw system call (no allocation there).
//
// Always (in read-only and workspace-write):
//   * ioctl TIOCSTI / TIOCLINUX -> EPERM (no typing into the user's terminal);
//   * io_uring_setup/enter/register -> EPERM (io_uring would bypass the
//     socket rule below);
//   * init_module, finit_module, delete_module, kexec_load, kexec_file_load
//     -> EPERM (matters when running as root).
// With Network::kDenied additionally:
//   * socket() and socketpair() for any family but AF_UNIX -> EPERM. Without
//     an inet socket, connect/bind/sendto etc. have nothing to act on, while
//     local IPC over UNIX sockets keeps working.
// System calls of a foreign architecture (e.g. 32-bit int 0x80 on x86_64)
// kill the process, so the filter cannot be bypassed through socketcall.
// Thread-compatible.
#pragma once

#include <linux/filter.h>

#include <vector>

#include "sandbox/error.h"

namespace codex::sandbox {

enum class Network { kDenied, kAllowed };

// The compiled filter program.
Expected<std::vector<sock_filter>> BuildSeccompFilter(Network network);

// In the child: installs `program` (no_new_privs must already be set).
// Returns 0 or an errno value. Async-signal-safe.
int InstallSeccompFilter(const sock_filter* program, size_t length) noexcept;

}  // namespace codex::sandbox
