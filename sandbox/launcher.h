// The namespace layer of the sandbox: bubblewrap and the helper it runs.
//
// A confined command is launched as
//   bwrap <namespaces and mounts> -- /proc/self/fd/<helper executable>
//         __codex-sandbox-exec <mode> <ruleset fd> <seccomp fd> <length> <report fd> -- argv...
// bubblewrap (Debian `bubblewrap`, as Codex and Flatpak use) creates fresh
// user, mount, PID, IPC and (network off) network namespaces, mounts a
// read-only view of / with the writable roots bound writable and their `.git`
// bound read-only again, a minimal /dev and a /proc of the new PID namespace.
// Inside, the helper runs: codex-sandbox-helper from beside the executable,
// or else the same executable again (RunHelper below, entered before main()
// through an ELF constructor, so every binary linking the sandbox library can
// act as its own helper). The
// helper is PID 1 of the namespace: it applies no_new_privs, Landlock, drops
// every capability, installs seccomp, then forks the command (in a new
// session unless `codex sandbox` runs it on a terminal) and waits for it.
// It forwards SIGTERM, SIGINT, SIGHUP and SIGQUIT to every process of the
// namespace. When the command exits the helper exits with its status (128+N
// for a signal), and the kernel kills whatever the command left behind
// (setsid and double-forked daemons included) before bubblewrap returns.
//
// Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace codex::sandbox {

inline constexpr const char* kHelperArg = "__codex-sandbox-exec";

// The small executable that runs the helper when it sits beside the running
// program (cli/ installs it beside `codex`): it starts in a fraction of the
// time the whole codex binary needs to load. Otherwise the running program
// itself is the helper.
inline constexpr const char* kHelperExecutable = "codex-sandbox-helper";

// The helper's main: `argv[1]` must be kHelperArg (see HelperArgv). Applies
// the layers, runs the command, never returns.
[[noreturn]] void RunHelper(int argc, char** argv);

// The program `name` beside this one when it is there and executable, else
// this program ("/proc/self/exe"): how codex finds its helper and its
// sandbox server.
std::string ExecutableBesideSelf(const std::string& name);

// The path of the file `name` beside this program, "" when there is none
// (codex's modules: cli/interactive/code_highlight_module.h).
std::string FileBesideSelf(const std::string& name);

// The executable to run as the helper: kHelperExecutable beside this
// program when present, else this program.
std::string HelperExecutablePath();

struct BwrapAvailability {
  bool usable = false;
  std::string path;    // the bwrap executable, when found
  std::string reason;  // why it is not usable (one line)
};

// The environment variable naming the bwrap executable to use instead of
// /usr/bin/bwrap or the first bwrap in PATH (e.g. a newer build). A path that
// is not an executable file means "no bubblewrap": the command then runs
// under Landlock + seccomp only (or is refused when Landlock is missing too).
inline constexpr const char* kBwrapEnv = "CODEX_SANDBOX_BWRAP";

// Whether bubblewrap is installed and can create the namespaces here. The
// first call runs bwrap once (a few milliseconds); the answer is cached.
BwrapAvailability ProbeBwrap();

// Pretends bwrap lives at `path` ("" = not installed); nullopt restores the
// real probe. For tests of the fallback and refusal paths.
void TEST_SetBwrapOverride(std::optional<std::string> path);

// How the helper treats the command.
enum class HelperMode {
  kCaptured,     // output captured by RunProcess: new session, all signals forwarded
  kInteractive,  // `codex sandbox` on a terminal: same session, terminal signals direct
};

// Applies every layer but the namespaces to the calling process: no dumping,
// no_new_privs, the Landlock ruleset (`ruleset_fd`, -1 = none; closed),
// every capability dropped, the seccomp program of `seccomp_length`
// instructions read from `seccomp_fd` (-1 = none; closed). Returns 0 or an
// errno value with `*what` naming the step. Used by the helper and the
// sandbox server (sandbox_server.h) inside bubblewrap.
int ApplyLayersFromFds(int ruleset_fd, int seccomp_fd, int seccomp_length, const char** what);

// The argv tail that runs the helper from inside bubblewrap.
std::vector<std::string> HelperArgv(int exe_fd, HelperMode mode, int ruleset_fd, int seccomp_fd,
                                    size_t seccomp_length, int report_fd,
                                    const std::vector<std::string>& argv);

}  // namespace codex::sandbox
