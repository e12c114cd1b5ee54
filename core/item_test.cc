#include "core/item.h"

#include <catch2/catch.hpp>

using namespace codex::core;

TEST_CASE("DecodeItem strips the server id and keeps field order") {
  auto item = DecodeItem(
      R"({"type":"reasoning","id":"rs_1","summary":[],"content":null,"encrypted_content":"ENC"})");
  REQUIRE(item.ok());
  CHECK(item->kind == ItemKind::kReasoning);
  CHECK(item->server_id == "rs_1");
  CHECK(item->body ==
        R"({"type":"reasoning","summary":[],"content":null,"encrypted_content":"ENC"})");
}

TEST_CASE("DecodeItem classifies calls and requires call_id") {
  auto call = DecodeItem(
      R"({"type":"function_call","id":"fc_1","name":"shell","arguments":"{}","call_id":"c1","status":"completed"})");
  REQUIRE(call.ok());
  CHECK(call->kind == ItemKind::kFunctionCall);
  CHECK(call->call_id == "c1");
  CHECK(call->body == R"({"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"})");
  CHECK_FALSE(DecodeItem(R"({"type":"function_call","name":"x"})").ok());
  CHECK_FALSE(DecodeItem("[1]").ok());
  CHECK_FALSE(DecodeItem("not json").ok());
}

TEST_CASE("WireBody splices the id back only when asked") {
  auto item = DecodeItem(R"({"type":"message","id":"msg_1","role":"assistant","content":[]})");
  REQUIRE(item.ok());
  CHECK(WireBody(*item, false) == item->body);
  CHECK(WireBody(*item, true) ==
        R"({"id":"msg_1","type":"message","role":"assistant","content":[]})");
}

TEST_CASE("Authored messages and outputs") {
  CHECK(UserMessage("hi").body ==
        R"({"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]})");
  CHECK(MessageText(AssistantMessage("done")) == "done");
  auto out = FunctionCallOutput("c1", "ok");
  CHECK(out.kind == ItemKind::kFunctionCallOutput);
  CHECK(out.body == R"({"type":"function_call_output","call_id":"c1","output":"ok"})");
}
