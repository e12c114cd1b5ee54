// spawn_measured CWD PROGRAM [ARGS...]: runs PROGRAM in CWD with this
// environment and stdio on /dev/null, waits for it, and prints one line:
// "<wall ms> <user+system ms> <peak RSS KiB> <exit code>".
//
// exec_bench measures codex through it because of how Linux counts peak RSS:
// at exec, the kernel folds the peak RSS of the image being replaced into the
// new program's (exec_mmap), and a spawned child's image before exec is its
// parent's. Spawned from the bench itself, which grows as it keeps every
// scripted request, a short codex run would report the bench's size. This
// program stays tiny (plain libc, nothing allocated), so what it reports is
// the command's own.
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace {

double NowMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1000.0 + static_cast<double>(ts.tv_nsec) / 1e6;
}

double TvMs(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) * 1000.0 + static_cast<double>(tv.tv_usec) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "error: usage: spawn_measured CWD PROGRAM [ARGS...]\n");
    return 2;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&actions, argv[1]);
  const double start = NowMs();
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[2], &actions, nullptr, argv + 2, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    std::fprintf(stderr, "error: cannot run %s: %s\n", argv[2], std::strerror(rc));
    return 1;
  }
  int status = 0;
  struct rusage usage {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  const double wall = NowMs() - start;
  std::printf("%.3f %.3f %ld %d\n", wall, TvMs(usage.ru_utime) + TvMs(usage.ru_stime),
              usage.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
