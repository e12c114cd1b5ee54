#include "core/transcript.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace codex::core;

namespace {

Item Decoded(const std::string& json) {
  auto item = DecodeItem(json);
  REQUIRE(item.ok());
  return *item;
}

Item Call(const std::string& id) {
  return Decoded(R"({"type":"function_call","name":"shell","arguments":"{}","call_id":")" + id +
                 R"("})");
}

}  // namespace

TEST_CASE("transcript: injected context is never a real user message") {
  const std::vector<Item> context = {
      UserMessage("<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"),
      UserMessage("# AGENTS.md instructions for /p\n\n<INSTRUCTIONS>\nrun tests\n</INSTRUCTIONS>"),
      UserMessage("<user_instructions>\nbe brief\n</user_instructions>"),
      UserMessage("<permissions instructions>\nsandbox: read-only\n</permissions instructions>"),
      UserMessage("<working_state>\nfiles: a.cc\n</working_state>"),
      // Codex rollouts put whitespace before the marker.
      UserMessage("\n  <environment_context><cwd>/p</cwd></environment_context>"),
      UserMessage("\t# AGENTS.md instructions for /p"),
      DeveloperMessage("rules"),
      DeveloperMessage("not a marker at all: developer text is always context"),
      Decoded(R"({"type":"message","role":"system","content":"sys"})"),
  };
  for (const Item& item : context) {
    INFO(item.body);
    CHECK(IsContextItem(item));
    CHECK_FALSE(IsRealUserMessage(item));
    CHECK_FALSE(IsTypedUserMessage(item));
    CHECK_FALSE(IsSummaryMessage(item));
  }
}

TEST_CASE("transcript: a marker is reserved, but only at the start and only exactly") {
  // A person who starts a message with the marker is read as context: the
  // markers are the protocol's, as in Codex. Documented, pinned here.
  CHECK(IsContextItem(UserMessage("<environment_context> is missing the shell, why?")));
  CHECK_FALSE(IsRealUserMessage(UserMessage("<environment_context> is missing the shell, why?")));
  // Elsewhere in the text, or a near miss, it is the person's message.
  for (const char* text : {"why is <environment_context> missing the shell?",
                           "# AGENTS.md\nplease update it", "# AGENTS.md is out of date",
                           "<user_instruction>typo</user_instruction>", "<Environment_Context>"}) {
    INFO(text);
    CHECK_FALSE(IsContextItem(UserMessage(text)));
    CHECK(IsRealUserMessage(UserMessage(text)));
    CHECK(IsTypedUserMessage(UserMessage(text)));
  }
  // Markers only classify user-role text: an assistant quoting one is not context.
  CHECK_FALSE(IsContextItem(AssistantMessage("<environment_context>")));
  CHECK_FALSE(IsRealUserMessage(AssistantMessage("fix the bug")));
}

TEST_CASE("transcript: summaries, ours and Codex's, are neither context nor user input") {
  const Item ours = UserMessage(std::string(kSummaryPrefix) + "did X");
  const Item codex = UserMessage(std::string(kCodexSummaryPrefix) + " It did X.");
  for (const Item& item : {ours, codex}) {
    CHECK(IsSummaryMessage(item));
    CHECK_FALSE(IsContextItem(item));
    CHECK_FALSE(IsRealUserMessage(item));
  }
  CHECK_FALSE(IsSummaryMessage(UserMessage("please summarise this")));
  CHECK_FALSE(IsSummaryMessage(AssistantMessage(std::string(kSummaryPrefix) + "x")));
}

TEST_CASE("transcript: blank and image-only user messages") {
  CHECK_FALSE(IsRealUserMessage(UserMessage("")));
  CHECK_FALSE(IsRealUserMessage(UserMessage(" \n\t ")));
  CHECK_FALSE(IsRealUserMessage(Decoded(R"({"type":"message","role":"user","content":[]})")));
  // An image with no text is input the person gave.
  const std::vector<std::string> urls = {"data:image/png;base64,iVBORw0KGgo="};
  const Item image_only = UserMessage("", urls);
  CHECK(HasImage(image_only));
  CHECK(IsRealUserMessage(image_only));
  CHECK(IsTypedUserMessage(image_only));
  CHECK(IsRealUserMessage(UserMessage("what is this?", urls)));
  // "input_image" as text is not an image.
  CHECK_FALSE(HasImage(UserMessage("input_image")));
  CHECK_FALSE(HasImage(AssistantMessage("input_image")));
  // A body that is not JSON classifies as nothing.
  Item broken;
  broken.kind = ItemKind::kMessage;
  broken.role = "user";
  broken.body = "{\"content\":[{\"type\":\"input_image\"";
  CHECK_FALSE(HasImage(broken));
  CHECK_FALSE(IsRealUserMessage(broken));
  CHECK_FALSE(IsContextItem(broken));
}

TEST_CASE("transcript: a shell record is the person's input but not a typed prompt") {
  const Item record = UserMessage(
      "<user_shell_command>\n<command>\nls\n</command>\n<result>\nExit code: 0\n</result>\n"
      "</user_shell_command>");
  CHECK(IsUserShellRecord(record));
  CHECK(IsRealUserMessage(record));
  CHECK_FALSE(IsTypedUserMessage(record));
  CHECK_FALSE(IsContextItem(record));
  CHECK_FALSE(IsUserShellRecord(UserMessage("run <user_shell_command> for me")));
}

TEST_CASE("transcript: calls pair with their outputs by call_id") {
  std::vector<Item> items = {Call("a"), Call("b"), FunctionCallOutput("a", "ok"),
                             Decoded(R"({"type":"local_shell_call","call_id":"c","status":)"
                                     R"("completed","action":{"type":"exec","command":["ls"]}})"),
                             CustomToolCallOutput("b", "done")};
  CHECK(Answers(items[2], items[0]));
  CHECK_FALSE(Answers(items[2], items[1]));
  CHECK_FALSE(Answers(items[0], items[2]));  // direction matters
  CHECK(UnansweredCalls(items) == std::vector<size_t>{3});
  CHECK(UnansweredCalls(items, 4).empty());
  CHECK(OutputsAnswering(items, 0) == std::vector<size_t>{2});
  CHECK(OutputsAnswering(items, 1) == std::vector<size_t>{4});
  CHECK(OutputsAnswering(items, 2).empty());   // not a call
  CHECK(OutputsAnswering(items, 99).empty());  // out of range
  items.push_back(CallOutputFor(ItemKind::kLocalShellCall, "c", "x"));
  CHECK(UnansweredCalls(items).empty());
  // An output before its call still answers it (order-free, as the loop needs).
  std::vector<Item> reversed = {FunctionCallOutput("z", "early"), Call("z")};
  CHECK(UnansweredCalls(reversed).empty());
}
