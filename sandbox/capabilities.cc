#include "sandbox/capabilities.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace codex::sandbox {

int DropAllCapabilities() noexcept {
  // Capabilities are numbered below 64 (two 32-bit words in the v3 ABI);
  // PR_CAPBSET_READ answers EINVAL past the kernel's last one.
  for (int cap = 0; cap < 64; ++cap) {
    int in_set = ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
    if (in_set < 0) break;
    // EPERM: no CAP_SETPCAP, so this process holds no capability to lose,
    // and with no_new_privs exec cannot grant one; the sets below still clear.
    if (in_set == 1 && ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EPERM) {
      return errno;
    }
  }
  // EINVAL: a kernel older than 4.3 without ambient capabilities.
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
    return errno;
  }
  __user_cap_header_struct header{};
  header.version = _LINUX_CAPABILITY_VERSION_3;
  header.pid = 0;
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return errno;
  return 0;
}

}  // namespace codex::sandbox
