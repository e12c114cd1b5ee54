// scripted-responses-server: the ScriptedServer as a standalone process, for
// the demo and for scripts. Prints "listening on 127.0.0.1:PORT" as its first
// stdout line, serves until SIGTERM or SIGINT, then exits 0.
#include <signal.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <string_view>

#include "tests/scripted_server/scripted_server.h"

namespace {

constexpr int kUsageError = 2;

constexpr char kUsage[] =
    "usage: scripted-responses-server --script FILE [--port N] [--record FILE] [--verbose]\n"
    "  --script FILE   JSON script of answers (see tests/scripted_server/README.md)\n"
    "  --port N        port on 127.0.0.1 (default 0: any free port; the port is printed)\n"
    "  --record FILE   append every request as one JSON line to FILE\n"
    "  --verbose       log one line per request on stderr\n";

int UsageError(const std::string& message) {
  std::cerr << "error: " << message << "\n" << kUsage;
  return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  std::string script_path;
  std::string port_text = "0";
  codex::testing::ServerOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (arg == "--script" || arg == "--port" || arg == "--record") {
      const char* v = value();
      if (v == nullptr) return UsageError(std::string(arg) + " needs a value");
      if (arg == "--script") script_path = v;
      if (arg == "--port") port_text = v;
      if (arg == "--record") options.record_path = v;
    } else if (arg == "--verbose") {
      options.log_requests = true;
    } else {
      return UsageError("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (script_path.empty()) return UsageError("--script FILE is required");
  char* end = nullptr;
  long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port < 0 || port > 65535) {
    return UsageError("--port must be a number in 0..65535, got '" + port_text + "'");
  }
  options.port = static_cast<int>(port);

  auto script = codex::testing::Script::LoadFile(script_path);
  if (!script.ok()) {
    std::cerr << "error: " << script.status().message() << "\n";
    return 1;
  }

  // Block the stop signals in every thread (the server's threads inherit the
  // mask) and wait for them here, so no handler runs in an arbitrary thread.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto server = codex::testing::ScriptedServer::Start(std::move(*script), options);
  if (!server.ok()) {
    std::cerr << "error: " << server.status().message() << "\n";
    return 1;
  }
  std::cout << "listening on 127.0.0.1:" << (*server)->port() << std::endl;

  int received = 0;
  sigwait(&stop_signals, &received);
  (*server)->Stop();
  std::cerr << "scripted-responses-server: stopped after " << (*server)->requests().size()
            << " requests\n";
  return 0;
}
