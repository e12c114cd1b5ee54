#include "core/request_builder.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <vector>

using namespace codex::core;

TEST_CASE("The request carries the stateless invariants") {
  RequestOptions opts;
  opts.model = "gpt-test";
  opts.instructions = "be brief";
  opts.prompt_cache_key = "sess-1";
  std::vector<Item> items = {UserMessage("hello")};
  auto body = nlohmann::json::parse(BuildResponsesRequest(opts, items));
  CHECK(body["store"] == false);
  CHECK(body["stream"] == true);
  CHECK(body["include"] == nlohmann::json::array({"reasoning.encrypted_content"}));
  CHECK(body["prompt_cache_key"] == "sess-1");
  CHECK_FALSE(body.contains("previous_response_id"));
  CHECK(body["input"].size() == 1);
  CHECK(body["input"][0]["content"][0]["text"] == "hello");
  CHECK(body["tool_choice"] == "auto");
}

TEST_CASE("Input is the concatenation of stored bodies and grows as a byte prefix") {
  auto reasoning = DecodeItem(
      R"({"type":"reasoning","id":"rs_0","summary":[],"encrypted_content":"ENC\u00e9=="})");
  REQUIRE(reasoning.ok());
  std::vector<Item> items = {UserMessage("a"), *reasoning};
  std::string first = BuildInputArray(items, false);
  CHECK(first == "[" + items[0].body + "," + items[1].body + "]");
  items.push_back(FunctionCallOutput("c", "out"));
  std::string second = BuildInputArray(items, false);
  CHECK(second.compare(0, first.size() - 1, first, 0, first.size() - 1) == 0);
}

TEST_CASE("A grown transcript's request starts with the previous request minus its \"]}\"") {
  RequestOptions opts;
  opts.model = "gpt-test";
  opts.instructions = "be brief";
  opts.tools_json = R"([{"type":"function","name":"shell"}])";
  opts.reasoning_effort = "high";
  opts.prompt_cache_key = "sess-1";
  std::vector<Item> items = {UserMessage("a")};
  const std::string first = BuildResponsesRequest(opts, items);
  items.push_back(AssistantMessage("b"));
  const std::string second = BuildResponsesRequest(opts, items);
  REQUIRE(first.size() > 2);
  CHECK(first.substr(first.size() - 2) == "]}");
  CHECK(second.compare(0, first.size() - 2, first, 0, first.size() - 2) == 0);
  CHECK(second.substr(first.size() - 2) == "," + items[1].body + "]}");
}

TEST_CASE("Checkpoints are never sent and ids are spliced only when asked") {
  Item checkpoint;
  checkpoint.kind = ItemKind::kCompactionCheckpoint;
  checkpoint.body = R"({"type":"compaction_checkpoint"})";
  auto msg = DecodeItem(R"({"type":"message","id":"msg_9","role":"assistant","content":[]})");
  REQUIRE(msg.ok());
  std::vector<Item> items = {checkpoint, *msg};
  CHECK(BuildInputArray(items, false) == "[" + msg->body + "]");
  CHECK(BuildInputArray(items, true) ==
        R"([{"id":"msg_9","type":"message","role":"assistant","content":[]}])");
}

TEST_CASE("Compact request body") {
  std::vector<Item> items = {UserMessage("x")};
  auto body = nlohmann::json::parse(BuildCompactRequest("m", "inst", items, false));
  CHECK(body["model"] == "m");
  CHECK(body["instructions"] == "inst");
  CHECK(body["input"].size() == 1);
}
