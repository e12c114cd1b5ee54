#include "cli/sessions_serve.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "cli/store_open.h"
#include "cli/terminal_text.h"
#include "cli/viewer/viewer_api.h"
#include "cli/viewer/viewer_server.h"
#include "core/sandboxed_runner.h"
#include "sandbox/host_path.h"

extern char** environ;

namespace codex::cli {

namespace {

struct ServeArgs {
  int port = 0;
  bool open = false;
};

// xdg-open found in the PATH entries no sandboxed command of a session here
// can write (sandbox/host_path.h), or "".
std::string FindXdgOpen() {
  std::error_code ec;
  const std::string here = std::filesystem::current_path(ec).string();
  return sandbox::FindHostProgram("xdg-open", std::getenv("PATH"),
                                  core::ModelWritableRootsFor(core::SandboxPolicy{}, here));
}

// Starts xdg-open URL with its output discarded; its pid, or -1.
pid_t OpenInBrowser(const std::string& url) {
  const std::string program = FindXdgOpen();
  if (program.empty()) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::string arg0 = "xdg-open";
  std::string arg1 = url;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

Status RunServe(const GlobalOptions& global, const ServeArgs& args) {
  ASSIGN_OR_RETURN(auto store, OpenConfiguredStore(global, /*read_only=*/true));
  viewer::ViewerApi api(*store);
  ASSIGN_OR_RETURN(std::string token, viewer::NewViewerToken());
  ASSIGN_OR_RETURN(auto server, viewer::ViewerServer::Bind(api, args.port, std::move(token)));

  // SIGINT and SIGTERM are taken by one waiting thread, which stops the
  // server: blocked here, before the server's threads start, so none of
  // them is interrupted instead.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
  // Shown once the stop signals are blocked (a Ctrl-C right after the URL
  // stops the viewer cleanly). The URL carries the access token: a viewer
  // nobody can be told about (stdout closed or full) is not started.
  PrintF(stdout, "codex sessions viewer: %s\n", server->url().c_str());
  if (Status shown = StdoutWritten(); !shown.ok()) {
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return Status(shown.code(), shown.message() + "; the viewer's URL could not be shown, so " +
                                    "nothing was served");
  }
  std::atomic<bool> served{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    // A signal that comes before Run has started listening would be lost on
    // httplib's stop(), a no-op until then: ask until Run has returned.
    while (!served.load()) {
      server->Stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });

  PrintF(stderr, "serving the sessions of %s read-only; press Ctrl-C to stop\n",
         store->location().c_str());
  pid_t opener = -1;
  if (args.open) {
    opener = OpenInBrowser(server->url());
    if (opener < 0) {
      PrintText(stderr, "xdg-open is not installed; open the URL above in a browser\n");
    }
  }
  const Status status = server->Run();
  served.store(true);
  // Run also returns without a signal when listening fails: wake the waiter.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  if (opener > 0) ::waitpid(opener, nullptr, WNOHANG);
  // A signal still pending (the one the waiter sent itself, or a second
  // Ctrl-C) is taken before the mask is restored.
  sigset_t pending;
  sigpending(&pending);
  for (int sig : {SIGINT, SIGTERM}) {
    if (sigismember(&pending, sig)) {
      int taken = 0;
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      sigwait(&one, &taken);
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  PrintText(stderr, "viewer stopped\n");
  return status;
}

}  // namespace

void AddSessionsServeCommand(CLI::App* sessions, const GlobalOptions& global,
                             CommandOutcome& result) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* serve = sessions->add_subcommand(
      "serve",
      "Browse sessions in a web page on 127.0.0.1 (read-only; the printed URL carries the "
      "access token): list, search, transcripts, fork trees, usage per turn");
  serve->add_option("--port", args->port, "Port on 127.0.0.1 (default: any free port)")
      ->check(CLI::Range(0, 65535));
  serve->add_flag("--open", args->open, "Open the page with xdg-open (else just print the URL)");
  serve->callback([&global, args, &result] { result.Set(RunServe(global, *args)); });
}

}  // namespace codex::cli
