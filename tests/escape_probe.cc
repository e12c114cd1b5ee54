// escape-probe: one attack per invocation, for the sandbox tests
// (tests/escape_e2e_test.cc, sandbox/confinement_test.cc).
//
//   escape-probe OP [ARGS...]
//
// Prints one line, "ok" or "denied <errno name>" (or what was read), and
// exits 0 when the operation succeeded, 1 when it failed, 2 on bad usage.
// Operations that change the machine when they succeed do as little as they
// can: the clock is set to what it already reads, the hostname to itself, and
// reboot(2) gets an invalid command (EINVAL means the capability check
// passed, EPERM that it did not).
#include <arpa/inet.h>
#include <linux/reboot.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

// In the sanitizer build the probe runs under the sandbox's seccomp filter,
// which denies ptrace: LeakSanitizer's exit-time scan needs it and would turn
// every run into exit 1. The probe holds nothing worth a leak check.
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }

namespace {

int Report(long rc) {
  if (rc >= 0) {
    std::puts("ok");
    return 0;
  }
  std::printf("denied %s\n", strerrorname_np(errno));
  return 1;
}

int Family(const std::string& name) {
  static const std::map<std::string, int> families = {
      {"unix", AF_UNIX},       {"inet", AF_INET},     {"inet6", AF_INET6},
      {"netlink", AF_NETLINK}, {"packet", AF_PACKET}, {"vsock", AF_VSOCK}};
  auto it = families.find(name);
  return it == families.end() ? -1 : it->second;
}

int Type(const std::string& name) {
  if (name == "stream") return SOCK_STREAM;
  if (name == "dgram") return SOCK_DGRAM;
  if (name == "seqpacket") return SOCK_SEQPACKET;
  if (name == "raw") return SOCK_RAW;
  return -1;
}

sockaddr_un UnixAddress(const std::string& path, bool abstract, socklen_t* len) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t offset = abstract ? 1 : 0;
  std::memcpy(addr.sun_path + offset, path.data(),
              std::min(path.size(), sizeof(addr.sun_path) - offset - 1));
  *len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + path.size() +
                                (abstract ? 0 : 1));
  return addr;
}

int ConnectUnix(const std::string& path, bool abstract) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return Report(-1);
  socklen_t len = 0;
  sockaddr_un addr = UnixAddress(path, abstract, &len);
  long rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), len);
  if (rc == 0 && ::write(fd, "escaped\n", 8) != 8) rc = -1;
  return Report(rc);
}

int ConnectTcp(int port, bool v6) {
  int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Report(-1);
  if (v6) {
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_addr = in6addr_loopback;
    addr.sin6_port = htons(static_cast<uint16_t>(port));
    return Report(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return Report(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
}

int SocketPair(int type) {
  int sv[2];
  if (::socketpair(AF_UNIX, type, 0, sv) != 0) return Report(-1);
  char got = 0;
  bool ok = ::write(sv[0], "x", 1) == 1 && ::read(sv[1], &got, 1) == 1 && got == 'x';
  if (!ok) errno = EIO;
  return Report(ok ? 0 : -1);
}

// A datagram socketpair, then sendto() a host pathname socket.
int DgramViaPair(const std::string& path) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0) return Report(-1);
  socklen_t len = 0;
  sockaddr_un addr = UnixAddress(path, false, &len);
  return Report(::sendto(sv[0], "escaped\n", 8, 0, reinterpret_cast<sockaddr*>(&addr), len));
}

int Caps() {
  std::ifstream in("/proc/self/status");
  std::string line;
  bool all_zero = true;
  while (std::getline(in, line)) {
    if (line.rfind("Cap", 0) != 0) continue;
    std::puts(line.c_str());
    std::string value = line.substr(line.find(':') + 1);
    if (value.find_first_not_of("0\t ") != std::string::npos) all_zero = false;
  }
  return all_zero ? 0 : 1;
}

int ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Report(-1);
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Report(-1);
  std::string text = ss.str();
  for (char& c : text) {
    if (c == '\0') c = '\n';
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int Usage() {
  std::fprintf(stderr, "usage: escape-probe OP [ARGS...] (see tests/escape_probe.cc)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string op = argv[1];
  const std::string a1 = argc > 2 ? argv[2] : "";
  const std::string a2 = argc > 3 ? argv[3] : "";
  if (op == "socket") {
    if (Family(a1) < 0 || Type(a2) < 0) return Usage();
    return Report(::socket(Family(a1), Type(a2), a1 == "packet" ? htons(0x0003) : 0));
  }
  if (op == "connect-unix") return ConnectUnix(a1, false);
  if (op == "connect-abstract") return ConnectUnix(a1, true);
  if (op == "connect-tcp") return ConnectTcp(std::atoi(a1.c_str()), false);
  if (op == "connect-tcp6") return ConnectTcp(std::atoi(a1.c_str()), true);
  if (op == "socketpair") return Type(a1) < 0 ? Usage() : SocketPair(Type(a1));
  if (op == "dgram-via-pair") return DgramViaPair(a1);
  if (op == "caps") return Caps();
  if (op == "read") return ReadFile(a1);
  if (op == "settimeofday") {
    timeval now{};
    ::gettimeofday(&now, nullptr);
    return Report(::settimeofday(&now, nullptr));
  }
  if (op == "clock_settime") {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    return Report(::clock_settime(CLOCK_REALTIME, &now));
  }
  if (op == "adjtimex") {
    timex tx{};
    if (::adjtimex(&tx) < 0) return Report(-1);  // read the current values
    tx.modes = ADJ_TICK;                         // and write one back unchanged
    return Report(::adjtimex(&tx));
  }
  if (op == "reboot") {
    return Report(::syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2, 0x0BADC0DE, 0));
  }
  if (op == "sethostname") {
    char name[256] = {};
    ::gethostname(name, sizeof(name) - 1);
    return Report(::sethostname(name, std::strlen(name)));
  }
  if (op == "mount") return Report(::mount("none", "/tmp", "tmpfs", 0, nullptr));
  if (op == "swapon") return Report(::syscall(SYS_swapon, "/nonexistent-swap", 0));
  if (op == "unshare") return Report(::unshare(CLONE_NEWUSER));
  if (op == "clone-newuser") {
    long pid = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) ::_exit(0);
    if (pid > 0) ::waitpid(static_cast<pid_t>(pid), nullptr, 0);
    return Report(pid);
  }
  if (op == "clone3") return Report(::syscall(SYS_clone3, nullptr, 0));
  if (op == "setns") return Report(::syscall(SYS_setns, -1, 0));
  if (op == "ptrace")
    return Report(::ptrace(PTRACE_ATTACH, std::atoi(a1.c_str()), nullptr, nullptr));
  if (op == "keyctl") {
    return Report(::syscall(SYS_add_key, "user", "codex-probe", "x", 1, -2 /* process keyring */));
  }
  if (op == "bpf") return Report(::syscall(SYS_bpf, 0x7FFF, nullptr, 0));
  if (op == "perf") return Report(::syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0));
  if (op == "finit_module") return Report(::syscall(SYS_finit_module, -1, "", 0));
  if (op == "io_uring") {
    char params[120] = {};
    return Report(::syscall(SYS_io_uring_setup, 4, params));
  }
  if (op == "tiocsti") {
    char c = ' ';
    return Report(::ioctl(0, TIOCSTI, &c));
  }
  if (op == "kill") return Report(::kill(std::atoi(a1.c_str()), 0));
  if (op == "write") {
    FILE* f = std::fopen(a1.c_str(), "w");
    if (f == nullptr) return Report(-1);
    std::fputs("escaped\n", f);
    return Report(std::fclose(f) == 0 ? 0 : -1);
  }
  return Usage();
}
