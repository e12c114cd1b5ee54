#include "cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace codex::cli {

namespace {

std::atomic<core::CancelToken*> g_token{nullptr};
volatile sig_atomic_t g_interrupts = 0;

void OnSignal(int sig) {
  g_interrupts = g_interrupts + 1;
  if (g_interrupts > 1 || sig == SIGTERM) {
    constexpr char kMsg[] = "\ninterrupted\n";
    // terminal-safe: fixed text, from a signal handler.
    (void)!write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
    _exit(130);
  }
  if (core::CancelToken* token = g_token.load()) token->Cancel();
}

}  // namespace

void InstallInterruptHandler(core::CancelToken* token) {
  g_token.store(token);
  g_interrupts = 0;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: blocking calls wake up with EINTR
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

void RemoveInterruptHandler() {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  g_token.store(nullptr);
}

}  // namespace codex::cli
