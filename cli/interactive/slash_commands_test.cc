#include "cli/interactive/slash_commands.h"

#include <catch2/catch.hpp>

namespace codex::cli {
namespace {

SlashCommand Parse(std::string_view line) {
  auto r = ParseSlashCommand(line);
  REQUIRE(r.has_value());
  INFO(r->status().message());
  REQUIRE(r->ok());
  return **r;
}

std::string Error(std::string_view line) {
  auto r = ParseSlashCommand(line);
  REQUIRE(r.has_value());
  REQUIRE(!r->ok());
  return r->status().message();
}

TEST_CASE("lines that are not commands") {
  CHECK(!ParseSlashCommand("hello").has_value());
  CHECK(!ParseSlashCommand(" /status").has_value());  // a leading space sends it as a message
  CHECK(!ParseSlashCommand("").has_value());
}

TEST_CASE("commands and their arguments") {
  CHECK(Parse("/help").kind == SlashKind::kHelp);
  CHECK(Parse("/status  ").kind == SlashKind::kStatus);
  CHECK(Parse("/exit").kind == SlashKind::kQuit);
  CHECK(Parse("/quit").kind == SlashKind::kQuit);
  SlashCommand fork = Parse("/fork 3");
  CHECK(fork.kind == SlashKind::kFork);
  CHECK(fork.turn == 3);
  CHECK(!Parse("/fork").turn.has_value());
  CHECK(Parse("/resume 0193abcd").arg == "0193abcd");
  CHECK(Parse("/resume").arg.empty());
  CHECK(Parse("/model   gpt-5").arg == "gpt-5");
  CHECK(Parse("/approvals on-request").arg == "on-request");
}

TEST_CASE("bad commands get a one-line error naming the problem") {
  CHECK(Error("/frobnicate") ==
        "unknown command '/frobnicate'; /help lists the commands (start the line with a space to "
        "send it as a message)");
  CHECK(Error("/fork zero") == "TURN must be a positive number, not 'zero'; usage: /fork [TURN]");
  CHECK(Error("/fork 0").find("positive") != std::string::npos);
  CHECK(Error("/status now") == "/status takes no argument; usage: /status");
  CHECK(Error("/model a b") ==
        "the reasoning effort is one of minimal, low, medium, high, not 'b'; usage: /model "
        "[NAME [EFFORT]]");
  CHECK(Error("/model a high x") ==
        "/model takes a model and a reasoning effort; usage: /model [NAME [EFFORT]]");
  CHECK(Error("/rename") == "/rename needs NAME; usage: /rename NAME");
}

TEST_CASE("completions list every command") {
  auto words = SlashCompletions();
  for (const auto& c : SlashCommands()) {
    CHECK(std::find(words.begin(), words.end(), std::string(c.name)) != words.end());
  }
}

}  // namespace
}  // namespace codex::cli
