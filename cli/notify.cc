#include "cli/notify.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/json.h"
#include "sandbox/host_path.h"

namespace codex::cli {

std::string NotificationJson(const TurnCompleteNotification& n) {
  nlohmann::ordered_json j = {{"type", "agent-turn-complete"},
                              {"thread-id", n.thread_id},
                              {"turn-id", n.turn_id},
                              {"cwd", n.cwd},
                              {"input-messages", n.input_messages},
                              {"last-assistant-message", n.last_assistant_message}};
  return Dump(j);
}

void RunNotify(const std::vector<std::string>& program_and_args, const std::string& json,
               const std::vector<std::string>& writable) {
  if (program_and_args.empty()) return;
  // Everything the children need is built before fork: no allocation after it.
  std::vector<std::string> args = program_and_args;
  args.push_back(json);
  const std::string& name = program_and_args[0];
  const std::string program = name.find('/') != std::string::npos
                                  ? name
                                  : sandbox::FindHostProgram(name, std::getenv("PATH"), writable);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string failed = "warning: the notify program '" + program_and_args[0] +
                             "' could not be started; check `notify` in config.toml\n";
  const pid_t child = program.empty() ? -1 : fork();
  if (child < 0) {
    // terminal-safe: fixed text and a program the user configured.
    ssize_t w = write(STDERR_FILENO, failed.data(), failed.size());
    (void)w;
    return;
  }
  if (child == 0) {
    // The intermediate child: start the program in a grandchild and exit, so
    // the program is reparented and never left as our zombie.
    setsid();
    const pid_t grandchild = fork();
    if (grandchild != 0) _exit(0);
    const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) {
      dup2(null_fd, STDIN_FILENO);
      dup2(null_fd, STDOUT_FILENO);
    }
    execv(program.c_str(), argv.data());
    // terminal-safe: fixed text and a program the user configured.
    ssize_t w = write(STDERR_FILENO, failed.data(), failed.size());
    (void)w;
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace codex::cli
