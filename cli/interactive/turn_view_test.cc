// The turn's view on a real pseudo-terminal (cli/interactive/turn_view.h):
// what the calls of a response print while a question is on the screen.
#include "cli/interactive/turn_view.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>

namespace codex::cli {
namespace {

// Reads what the terminal shows until `sentinel` has arrived (a pty hands the
// bytes over asynchronously, so "nothing yet" is only known past a marker).
std::string ReadUntil(int master, const std::string& sentinel) {
  std::string got;
  for (int i = 0; i < 200 && got.find(sentinel) == std::string::npos; ++i) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[4096];
    ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0) got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

// A turn's view drawing on a real pseudo-terminal; `master` reads what it drew.
struct PtyView {
  PtyView() {
    winsize size{};
    size.ws_row = 24;
    size.ws_col = 80;
    REQUIRE(::openpty(&master, &slave, nullptr, nullptr, &size) == 0);
    auto opened = Terminal::Open(slave, slave);
    REQUIRE(opened.ok());
    terminal = std::move(opened).value();
    view = std::make_unique<TurnView>(*terminal, style);
  }
  ~PtyView() {
    view.reset();
    terminal.reset();
    ::close(slave);
    ::close(master);
  }
  int master = -1, slave = -1;
  const Style style{Color::kDisabled};
  std::unique_ptr<Terminal> terminal;
  std::unique_ptr<TurnView> view;
};

core::ToolActivity ShellCall(std::string call_id, std::string command) {
  core::ToolActivity call;
  call.call_id = std::move(call_id);
  call.tool = "shell";
  call.command = std::move(command);
  return call;
}

TEST_CASE("lines a call prints while a question is on the screen wait for its answer") {
  // Two calls of one response: the first was denied and reports while the
  // second's question is drawn. Its lines must not land under that menu,
  // which is drawn again in place at each key and would erase them.
  PtyView pty;
  TurnView& view = *pty.view;
  view.BeginTurn("Working");
  view.PauseSpinner();
  pty.terminal->Write("QUESTION-1\r\n");
  ReadUntil(pty.master, "QUESTION-1");

  const core::ToolActivity call = ShellCall("c1", "touch one.txt");
  view.NoteDenied("c1");
  view.OnToolStarted(call);
  view.OnToolCompleted(call);
  pty.terminal->Write("QUESTION-2\r\n");  // the second question, drawn meanwhile
  const std::string during = ReadUntil(pty.master, "QUESTION-2");
  CHECK(during.find("QUESTION-2") != std::string::npos);
  CHECK(during.find("Denied") == std::string::npos);
  CHECK(during.find("denied by you") == std::string::npos);

  view.ResumeSpinner();  // answered
  const std::string after = ReadUntil(pty.master, "(not run)");
  const size_t header = after.find("• Denied touch one.txt");
  CHECK(header != std::string::npos);
  CHECK(after.find("✗ denied by you (not run)") > header);
  view.EndTurn();
}

TEST_CASE("a turn that ends during a question still prints what its calls said") {
  PtyView pty;
  TurnView& view = *pty.view;
  view.BeginTurn("Working");
  view.PauseSpinner();
  view.OnToolStarted(ShellCall("c2", "echo held"));
  view.EndTurn();  // Ctrl-C while the question is up
  CHECK(ReadUntil(pty.master, "• Running echo held").find("• Running echo held") !=
        std::string::npos);
}

}  // namespace
}  // namespace codex::cli
