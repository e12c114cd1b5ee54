// The seccomp-bpf filter of the sandbox, built with libseccomp in the parent
// and installed in the child with a raw system call (no allocation there).
//
// Always (in read-only and workspace-write), each answering EPERM unless
// stated otherwise; these matter most when the command runs as root, and
// stay as defence in depth behind the dropped capabilities:
//   * ioctl TIOCSTI / TIOCLINUX (no typing into the user's terminal);
//   * io_uring_setup/enter/register (io_uring would bypass the socket rules);
//   * the clock: settimeofday, clock_settime, clock_adjtime, adjtimex;
//   * reboot, swapon, swapoff, sethostname, setdomainname, acct, syslog,
//     vhangup, quotactl;
//   * mount, umount2, pivot_root, chroot and the new mount API (open_tree,
//     move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr);
//   * init_module, finit_module, delete_module, kexec_load, kexec_file_load,
//     bpf, perf_event_open, userfaultfd;
//   * the keyring: keyctl, add_key, request_key;
//   * namespaces: unshare, setns, and clone with any CLONE_NEW* flag; clone3
//     answers ENOSYS (its flags sit in memory a filter cannot read) so libc
//     falls back to clone;
//   * ptrace, process_vm_readv/writev, kcmp, pidfd_getfd, name_to_handle_at,
//     open_by_handle_at.
// Sockets:
//   * socketpair() only for AF_UNIX and not SOCK_DGRAM (a datagram socket
//     can sendmsg() to any pathname socket, e.g. /dev/log, whatever it is
//     connected to); stream and seqpacket pairs keep working.
//   * Network::kDenied: socket() fails for every family, AF_UNIX included.
//     No new socket means no connect() to a host UNIX socket (pathname or
//     abstract), no inet/inet6, netlink or packet socket.
//   * Network::kAllowed: socket() only for AF_INET and AF_INET6; host UNIX
//     sockets stay out of reach.
// System calls of a foreign architecture (e.g. 32-bit int 0x80 on x86_64)
// kill the process, so the filter cannot be bypassed through socketcall.
// Thread-compatible.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace codex::sandbox {

enum class Network { kDenied, kAllowed };

// The compiled filter program.
Result<std::vector<sock_filter>> BuildSeccompFilter(Network network);

// One line per rule group, for `codex sandbox --explain`.
std::vector<std::string> DescribeSeccompFilter(Network network);

// In the child: installs `program` (no_new_privs must already be set).
// Returns 0 or an errno value. Async-signal-safe.
int InstallSeccompFilter(const sock_filter* program, size_t length) noexcept;

}  // namespace codex::sandbox
