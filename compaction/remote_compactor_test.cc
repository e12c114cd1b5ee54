#include "compaction/remote_compactor.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compaction/compactor_factory.h"
#include "compaction/working_state.h"
#include "core/request_builder.h"
#include "testing/compaction_inputs.h"
#include "testing/items.h"
#include "testing/scripted_model_client.h"

using namespace codex;
using namespace codex::compaction;
using codex::testing::AssistantReply;
using codex::testing::CompactionInputOf;
using codex::testing::CompactorOptionsFor;
using codex::testing::ContextOverflow;
using codex::testing::Decoded;
using codex::testing::MinimalInitialContext;
using codex::testing::ScriptedModelClient;
using Json = nlohmann::ordered_json;

namespace {

const std::string kEncrypted =
    "gAAAAABpPq_3JftC-4iamvUbONdOwuGLwJra5mTkhnqi72H_QmCznkKcEkYfqS5ect8j";

// A CompactResource as the server sends it: it echoes the context and the
// user messages it keeps, then the compaction item.
std::string CompactResource(const std::vector<std::string>& user_texts,
                            const std::string& encrypted = kEncrypted) {
  Json output = Json::array();
  output.push_back(
      {{"type", "message"},
       {"id", "msg_dev"},
       {"role", "developer"},
       {"content",
        Json::array({{{"type", "input_text"},
                      {"text", "<permissions instructions>never</permissions instructions>"}}})}});
  output.push_back(
      {{"type", "message"},
       {"role", "user"},
       {"content",
        Json::array(
            {{{"type", "input_text"},
              {"text", "<environment_context>\n  <cwd>/p</cwd>\n</environment_context>"}}})}});
  for (const auto& text : user_texts) {
    output.push_back({{"type", "message"},
                      {"role", "user"},
                      {"content", Json::array({{{"type", "input_text"}, {"text", text}}})}});
  }
  output.push_back({{"type", "compaction"}, {"id", "cmp_1"}, {"encrypted_content", encrypted}});
  Json resource = {
      {"id", "resp_cmp"},
      {"object", "response.compaction"},
      {"output", output},
      {"created_at", 1771352836},
      {"usage", {{"input_tokens", 100}, {"output_tokens", 10}, {"total_tokens", 110}}}};
  return resource.dump();
}

}  // namespace

TEST_CASE("Remote compaction: request shape and the rebuilt history") {
  ScriptedModelClient client;
  client.on_compact = [](const std::string&) -> Result<std::string> {
    return CompactResource({"first question"});
  };
  RemoteCompactor compactor(client, CompactorOptionsFor());
  core::Item u1 = core::UserMessage("first question");
  auto reasoning = Decoded(
      R"({"type":"reasoning","id":"rs_0","summary":[],"content":null,"encrypted_content":"ENC-R-0"})");
  auto input = CompactionInputOf({u1, reasoning, core::AssistantMessage("Done 0.")});
  core::CancelToken cancel;

  auto out = compactor.Compact(input, cancel);
  REQUIRE(out.ok());
  CHECK(client.stream_bodies.empty());
  REQUIRE(client.compact_bodies.size() == 1);
  const std::string& body = client.compact_bodies[0];
  CHECK(body ==
        core::BuildCompactRequest("gpt-test", "You are a coding agent.", input.transcript, false));
  Json j = Json::parse(body);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"model", "input", "instructions"});
  CHECK(body.find(R"("encrypted_content":"ENC-R-0")") != std::string::npos);

  CHECK(out->mode == "remote");
  CHECK(out->summary.empty());
  CHECK(out->dropped_items == 0);
  REQUIRE(out->new_history.size() == 5);
  CHECK(out->new_history[0].body == input.initial_context[0].body);
  CHECK(out->new_history[1].body == input.initial_context[1].body);
  CHECK(out->new_history[2].body == u1.body);
  CHECK(out->new_history[3].kind == core::ItemKind::kCompaction);
  CHECK(out->new_history[3].body ==
        R"({"type":"compaction","encrypted_content":")" + kEncrypted + R"("})");
  CHECK(out->new_history[3].server_id == "cmp_1");
  // The frontier after the server's items: what follows it is new to it.
  CHECK(IsWorkingStateMessage(out->new_history[4]));
  CHECK_FALSE(out->kept.empty());
  CHECK(out->tokens_before == EstimateTokens(input.transcript));
  CHECK(out->tokens_after == EstimateTokens(out->new_history));
}

TEST_CASE("RemoteHistory keeps messages and compaction items, current message last") {
  const auto initial = MinimalInitialContext();
  core::Item current = core::UserMessage("current");
  std::vector<core::Item> output = {
      core::DeveloperMessage("server copy of rules"),
      core::UserMessage("older"),
      current,
      Decoded(R"({"type":"reasoning","summary":[],"encrypted_content":"R"})"),
      Decoded(R"({"type":"function_call","name":"shell","arguments":"{}","call_id":"c1"})"),
      core::AssistantMessage("noted"),
      Decoded(R"({"type":"compaction","encrypted_content":"C"})"),
  };
  auto history = RemoteHistory(output, initial, current);
  REQUIRE(history.size() == 6);
  CHECK(core::MessageText(history[2]) == "older");
  CHECK(core::MessageText(history[3]) == "noted");
  CHECK(history[4].kind == core::ItemKind::kCompaction);
  CHECK(history[5].body == current.body);
}

TEST_CASE("Remote compaction: overflowing request drops oldest items") {
  ScriptedModelClient client;
  const size_t max_body = 8'000;
  client.on_compact = [&](const std::string& body) -> Result<std::string> {
    if (body.size() > max_body) return ContextOverflow();
    return CompactResource({"latest"});
  };
  RemoteCompactor compactor(client, CompactorOptionsFor());
  std::vector<core::Item> items;
  for (int i = 0; i < 10; ++i) {
    const std::string id = "c" + std::to_string(i);
    items.push_back(Decoded(
        R"({"type":"function_call","name":"shell","arguments":"{}","call_id":")" + id + R"("})"));
    items.push_back(core::FunctionCallOutput(id, std::string(1'500, 'x')));
  }
  items.push_back(core::UserMessage("latest"));
  auto input = CompactionInputOf(items);
  core::CancelToken cancel;
  auto out = compactor.Compact(input, cancel);
  REQUIRE(out.ok());
  CHECK(out->mode == "remote");
  CHECK(out->dropped_items > 0);
  CHECK(out->dropped_items % 2 == 0);  // calls and outputs leave together
  CHECK(client.compact_bodies.back().size() <= max_body);
  CHECK(client.compact_bodies.back().find("<permissions instructions>") != std::string::npos);
  CHECK(client.compact_bodies.back().find(R"("text":"latest")") != std::string::npos);
}

TEST_CASE("Remote compaction enforces the half-limit rule") {
  ScriptedModelClient client;
  const int64_t limit = 4'000;
  core::CancelToken cancel;

  SECTION("oldest kept messages are shed") {
    std::vector<std::string> texts;
    for (int i = 0; i < 10; ++i)
      texts.push_back("msg " + std::to_string(i) + std::string(800, 'm'));
    client.on_compact = [&](const std::string&) -> Result<std::string> {
      return CompactResource(texts);
    };
    RemoteCompactor compactor(client, CompactorOptionsFor(limit));
    auto out = compactor.Compact(CompactionInputOf({core::UserMessage("q")}), cancel);
    REQUIRE(out.ok());
    CHECK(out->mode == "remote");
    CHECK(out->tokens_after <= limit / 2);
    CHECK(EstimateTokens(out->new_history) == out->tokens_after);
    REQUIRE(IsWorkingStateMessage(out->new_history.back()));
    CHECK(out->new_history[out->new_history.size() - 2].kind == core::ItemKind::kCompaction);
    CHECK(core::MessageText(out->new_history[out->new_history.size() - 3]).rfind("msg 9", 0) == 0);
    CHECK(client.stream_bodies.empty());
  }
  SECTION("a compaction item too big on its own: redone locally") {
    client.on_compact = [&](const std::string&) -> Result<std::string> {
      return CompactResource({}, std::string(12'000, 'E'));
    };
    client.on_stream = [](const std::string&) { return AssistantReply("local summary"); };
    RemoteCompactor compactor(client, CompactorOptionsFor(limit));
    auto out = compactor.Compact(CompactionInputOf({core::UserMessage("q")}), cancel);
    REQUIRE(out.ok());
    CHECK(out->mode == "local");
    CHECK(out->summary == "local summary");
    CHECK(out->tokens_after <= limit / 2);
    CHECK(client.stream_bodies.size() == 1);
  }
}

TEST_CASE("Remote compaction: 404 falls back to local, other failures are errors") {
  ScriptedModelClient client;
  RemoteCompactor compactor(client, CompactorOptionsFor());
  auto input = CompactionInputOf({core::UserMessage("q")});
  core::CancelToken cancel;

  client.on_compact = [](const std::string&) -> Result<std::string> {
    return NotFoundError("404 Not Found");
  };
  client.on_stream = [](const std::string&) { return AssistantReply("S"); };
  auto fallback = compactor.Compact(input, cancel);
  REQUIRE(fallback.ok());
  CHECK(fallback->mode == "local");

  // How ResponsesClient reports it: "other 4xx" is kInvalidArgument.
  client.on_compact = [](const std::string&) -> Result<std::string> {
    return InvalidArgumentError("the server rejected the request (HTTP 404): Not found");
  };
  auto http_404 = compactor.Compact(input, cancel);
  REQUIRE(http_404.ok());
  CHECK(http_404->mode == "local");

  client.on_compact = [](const std::string&) -> Result<std::string> {
    return InvalidArgumentError("the server rejected the request (HTTP 400): bad model");
  };
  auto http_400 = compactor.Compact(input, cancel);
  REQUIRE_FALSE(http_400.ok());
  CHECK(http_400.status().code() == StatusCode::kInvalidArgument);

  client.on_compact = [](const std::string&) -> Result<std::string> {
    return UnavailableError("server_error");
  };
  auto unavailable = compactor.Compact(input, cancel);
  REQUIRE_FALSE(unavailable.ok());
  CHECK(unavailable.status().code() == StatusCode::kUnavailable);

  for (std::string bad : {"not json", "[]", R"({"output":{}})", R"({"output":[{"no":"type"}]})"}) {
    client.on_compact = [bad](const std::string&) -> Result<std::string> { return bad; };
    auto out = compactor.Compact(input, cancel);
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == StatusCode::kInvalidArgument);
    CHECK(out.status().message().find("supports_compact = false") != std::string::npos);
  }
}

TEST_CASE("MakeCompactor picks remote or local from the provider and reads the limits") {
  ScriptedModelClient client;
  client.on_compact = [](const std::string&) -> Result<std::string> { return CompactResource({}); };
  client.on_stream = [](const std::string&) { return AssistantReply("S"); };
  core::CancelToken cancel;
  core::Config config;
  config.model = "gpt-5-codex";
  config.model_context_window = 20'000;

  config.provider.supports_compact = true;
  auto remote = MakeCompactor(config, client);
  REQUIRE(remote.ok());
  CHECK((*remote)->context_window() == 20'000);
  CHECK((*remote)->auto_compact_limit() == 18'000);
  auto remote_out = (*remote)->Compact(CompactionInputOf({core::UserMessage("q")}), cancel);
  REQUIRE(remote_out.ok());
  CHECK(remote_out->mode == "remote");

  auto forced_local = MakeCompactor(config, client, CompactionMode::kLocal);
  REQUIRE(forced_local.ok());
  CHECK((*forced_local)->Compact(CompactionInputOf({core::UserMessage("q")}), cancel)->mode ==
        "local");

  config.provider.supports_compact = false;
  config.model_context_window.reset();
  config.model_auto_compact_token_limit = 50'000;
  auto local = MakeCompactor(config, client);
  REQUIRE(local.ok());
  CHECK((*local)->context_window() == 272'000);
  CHECK((*local)->auto_compact_limit() == 50'000);
  CHECK((*local)->Compact(CompactionInputOf({core::UserMessage("q")}), cancel)->mode == "local");

  config.model_auto_compact_token_limit = 0;
  auto bad = MakeCompactor(config, client);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
}
