#include "compaction/local_compactor.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compaction/working_state.h"
#include "core/model_client.h"
#include "core/request_builder.h"
#include "testing/compaction_inputs.h"
#include "testing/items.h"
#include "testing/scripted_model_client.h"

using namespace codex;
using namespace codex::compaction;
using codex::testing::AssistantReply;
using codex::testing::CallsPairedInOrder;
using codex::testing::CompactionInputOf;
using codex::testing::CompactorOptionsFor;
using codex::testing::ContextOverflow;
using codex::testing::Decoded;
using codex::testing::MinimalInitialContext;
using codex::testing::ScriptedModelClient;
using Json = nlohmann::ordered_json;

namespace {

core::Item EmptyShellCall(const std::string& call_id) {
  return Decoded(R"({"type":"function_call","name":"shell","arguments":"{}","call_id":")" +
                 call_id + R"("})");
}

// The input items of a recorded request, re-decoded.
std::vector<core::Item> RequestInput(const std::string& body) {
  Json j = Json::parse(body);
  std::vector<core::Item> items;
  for (const auto& e : j["input"]) items.push_back(Decoded(e.dump()));
  return items;
}

}  // namespace

TEST_CASE("Local summary request: the session's exact request + our prompt last, stateless") {
  ScriptedModelClient client;
  client.on_stream = [](const std::string&) { return AssistantReply("We fixed the parser."); };
  LocalCompactor compactor(client, CompactorOptionsFor());
  core::Item u1 = core::UserMessage("first question");
  auto reasoning =
      Decoded(R"({"type":"reasoning","summary":[],"content":null,"encrypted_content":"ENC-R-0"})");
  auto input = CompactionInputOf({u1, reasoning, core::AssistantMessage("Done 0.")});
  input.request.tools_json = R"([{"type":"function","name":"shell"},{"type":"custom","name":"b"}])";
  input.request.reasoning_effort = "high";
  core::CancelToken cancel;

  auto out = compactor.Compact(input, cancel);
  REQUIRE(out.ok());
  REQUIRE(client.stream_bodies.size() == 1);
  CHECK(client.compact_bodies.empty());
  const std::string& body = client.stream_bodies[0];
  Json j = Json::parse(body);
  CHECK(j["model"] == "gpt-test");
  CHECK(j["instructions"] == "You are a coding agent.");
  // The same tools in the same order as every request of the session.
  CHECK(j["tools"] == Json::parse(input.request.tools_json));
  CHECK(j["reasoning"]["effort"] == "high");
  CHECK(j["tool_choice"] == "auto");
  // Byte for byte, the request the turn loop would send is a prefix up to the
  // end of its input (the last field): the provider serves all of it from its
  // prompt cache.
  const std::string regular = core::BuildResponsesRequest(input.request, input.transcript);
  const size_t input_end = regular.size() - 2;  // all but the closing "]}"
  CHECK(body.compare(0, input_end, regular, 0, input_end) == 0);
  CHECK(j["parallel_tool_calls"] == false);
  CHECK(j["store"] == false);
  CHECK(j["stream"] == true);
  CHECK(j["include"] == Json::array({"reasoning.encrypted_content"}));
  CHECK(j["prompt_cache_key"] == input.request.prompt_cache_key);
  CHECK_FALSE(j.contains("previous_response_id"));
  // The transcript goes first, byte for byte (encrypted reasoning included) ...
  std::vector<core::Item> sent_prefix(input.transcript.begin(), input.transcript.end());
  const std::string prefix = core::BuildInputArray(sent_prefix, false);
  CHECK(body.find(prefix.substr(0, prefix.size() - 1)) != std::string::npos);
  // ... then our prompt as the last user message.
  const Json& last = j["input"].back();
  CHECK(last["role"] == "user");
  CHECK(last["content"][0]["text"] == std::string(kCompactionPrompt));
  CHECK(j["input"].size() == input.transcript.size() + 1);

  CHECK(out->mode == "local");
  CHECK(out->summary == "We fixed the parser.");
  CHECK(out->dropped_items == 0);
  REQUIRE(out->new_history.size() == 5);
  CHECK(out->new_history[0].body == input.initial_context[0].body);
  CHECK(out->new_history[1].body == input.initial_context[1].body);
  CHECK(out->new_history[2].body == u1.body);
  CHECK(IsWorkingStateMessage(out->new_history[3]));
  CHECK(out->new_history[4].body == SummaryMessage("We fixed the parser.").body);
  CHECK_FALSE(out->kept.empty());
  CHECK(out->tokens_before == EstimateTokens(input.transcript));
  CHECK(out->tokens_after == EstimateTokens(out->new_history));
}

TEST_CASE("Local compaction mid-turn keeps the current message, before the summary") {
  ScriptedModelClient client;
  client.on_stream = [](const std::string&) { return AssistantReply("S"); };
  LocalCompactor compactor(client, CompactorOptionsFor());
  core::Item current = core::UserMessage("do the thing");
  auto input = CompactionInputOf({core::UserMessage("before"), current, EmptyShellCall("c1"),
                                  core::FunctionCallOutput("c1", "partial")});
  input.current_user_message = current;
  core::CancelToken cancel;
  auto out = compactor.Compact(input, cancel);
  REQUIRE(out.ok());
  REQUIRE(out->new_history.size() == 6);
  CHECK(core::MessageText(out->new_history[2]) == "before");
  CHECK(out->new_history[3].body == current.body);
  CHECK(IsWorkingStateMessage(out->new_history[4]));
  CHECK(IsSummaryMessage(out->new_history[5]));
  // "before" had no answer and a newer task began: interrupted; the current one runs.
  CHECK(out->kept == "2 tasks (1 in progress, 1 interrupted)");
}

TEST_CASE("Local compaction: the summary request overflowing drops the oldest items") {
  ScriptedModelClient client;
  const size_t max_body = 12'000;
  client.on_stream = [&](const std::string& body) -> Result<core::ModelResponse> {
    if (body.size() > max_body) return ContextOverflow();
    return AssistantReply("summary after drops");
  };
  LocalCompactor compactor(client, CompactorOptionsFor());
  std::vector<core::Item> items;
  for (int i = 0; i < 12; ++i) {
    const std::string id = "c" + std::to_string(i);
    items.push_back(core::UserMessage("step " + std::to_string(i)));
    items.push_back(EmptyShellCall(id));
    items.push_back(core::FunctionCallOutput(id, std::string(2'000, 'x')));
  }
  auto input = CompactionInputOf(items);
  core::CancelToken cancel;
  auto out = compactor.Compact(input, cancel);
  REQUIRE(out.ok());
  CHECK(out->dropped_items > 0);
  REQUIRE(client.stream_bodies.size() >= 2);
  CHECK(client.stream_bodies.back().size() <= max_body);
  for (const auto& body : client.stream_bodies) {
    auto sent = RequestInput(body);
    REQUIRE(sent.size() >= 3);
    CHECK(sent[0].body == input.initial_context[0].body);  // never dropped
    CHECK(sent[1].body == input.initial_context[1].body);
    CHECK(CallsPairedInOrder(sent));
  }
  const auto last = RequestInput(client.stream_bodies.back());
  CHECK(static_cast<int>(input.transcript.size() + 1 - last.size()) == out->dropped_items);
  // The newest step survived the drops.
  CHECK(core::MessageText(last[last.size() - 4]) == "step 11");
  CHECK(out->summary == "summary after drops");
}

TEST_CASE("Local compaction: overflow with nothing left to drop is an error") {
  ScriptedModelClient client;
  client.on_stream = [](const std::string&) -> Result<core::ModelResponse> {
    return ContextOverflow();
  };
  LocalCompactor compactor(client, CompactorOptionsFor());
  auto input = CompactionInputOf({core::UserMessage("q"), core::AssistantMessage("a")});
  core::CancelToken cancel;
  auto out = compactor.Compact(input, cancel);
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == StatusCode::kResourceExhausted);
  CHECK(out.status().reason() == core::reason::kContextLengthExceeded);
  CHECK(client.stream_bodies.size() == 3);  // full, then without q, then without a
}

TEST_CASE("Local compaction: other errors, empty summaries and cancellation") {
  ScriptedModelClient client;
  LocalCompactor compactor(client, CompactorOptionsFor());
  auto input = CompactionInputOf({core::UserMessage("q")});
  core::CancelToken cancel;

  client.on_stream = [](const std::string&) -> Result<core::ModelResponse> {
    return UnavailableError("server_error");
  };
  auto failed = compactor.Compact(input, cancel);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().code() == StatusCode::kUnavailable);
  CHECK(client.stream_bodies.size() == 1);

  client.on_stream = [](const std::string&) { return AssistantReply(""); };
  auto empty = compactor.Compact(input, cancel);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message().find("codex compact " + input.request.prompt_cache_key) !=
        std::string::npos);

  cancel.Cancel();
  const size_t before = client.stream_bodies.size();
  auto cancelled = compactor.Compact(input, cancel);
  REQUIRE_FALSE(cancelled.ok());
  CHECK(cancelled.status().code() == StatusCode::kCancelled);
  CHECK(client.stream_bodies.size() == before);
}

TEST_CASE("Local compaction leaves at most half the auto-compact limit") {
  ScriptedModelClient client;
  const std::string long_summary(40'000, 's');
  client.on_stream = [&](const std::string&) { return AssistantReply(long_summary); };
  const int64_t limit = 4'000;
  LocalCompactor compactor(client, CompactorOptionsFor(limit));
  std::vector<core::Item> items;
  for (int i = 0; i < 20; ++i) {
    items.push_back(core::UserMessage("request " + std::to_string(i) + std::string(600, 'r')));
    items.push_back(core::AssistantMessage("ok"));
  }
  auto input = CompactionInputOf(items);
  core::CancelToken cancel;
  auto out = compactor.Compact(input, cancel);
  REQUIRE(out.ok());
  CHECK(out->tokens_after <= limit / 2);
  CHECK(EstimateTokens(out->new_history) <= limit / 2);
  CHECK(out->summary.size() < long_summary.size());  // cut to fit
  CHECK(IsSummaryMessage(out->new_history.back()));

  // With a short summary the user messages share the room instead.
  client.on_stream = [](const std::string&) { return AssistantReply("short"); };
  auto roomy = compactor.Compact(input, cancel);
  REQUIRE(roomy.ok());
  CHECK(roomy->tokens_after <= limit / 2);
  CHECK(roomy->summary == "short");
  CHECK(roomy->new_history.size() > input.initial_context.size() + 2);
  CHECK(
      core::MessageText(roomy->new_history[roomy->new_history.size() - 3]).rfind("request 19", 0) ==
      0);
}

TEST_CASE("The half-limit ceiling leaves room for the instructions") {
  CompactorOptions options = CompactorOptionsFor(4'000);
  auto plain = HistoryCeiling(options, "");
  REQUIRE(plain.ok());
  CHECK(*plain == 2'000);
  auto with_instructions = HistoryCeiling(options, std::string(2'000, 'i'));
  REQUIRE(with_instructions.ok());
  CHECK(*with_instructions == 1'500);
  auto too_long = HistoryCeiling(options, std::string(8'000, 'i'));
  REQUIRE_FALSE(too_long.ok());
  CHECK(too_long.status().code() == StatusCode::kResourceExhausted);
  CHECK(too_long.status().message().find("model_auto_compact_token_limit") != std::string::npos);

  ScriptedModelClient client;
  client.on_stream = [](const std::string&) { return AssistantReply(std::string(20'000, 's')); };
  LocalCompactor compactor(client, options);
  auto input = CompactionInputOf({core::UserMessage("q"), core::AssistantMessage("a")});
  input.request.instructions = std::string(2'000, 'i');
  core::CancelToken cancel;
  auto out = compactor.Compact(input, cancel);
  REQUIRE(out.ok());
  CHECK(out->tokens_after <= 1'500);
  input.request.instructions = std::string(8'000, 'i');
  CHECK_FALSE(compactor.Compact(input, cancel).ok());
}

TEST_CASE("A second local compaction summarises the previous summary") {
  ScriptedModelClient client;
  int calls = 0;
  client.on_stream = [&](const std::string&) {
    return AssistantReply(++calls == 1 ? "FIRST-SUMMARY" : "SECOND-SUMMARY");
  };
  LocalCompactor compactor(client, CompactorOptionsFor());
  core::CancelToken cancel;
  auto first = compactor.Compact(
      CompactionInputOf({core::UserMessage("one"), core::AssistantMessage("done one")}), cancel);
  REQUIRE(first.ok());

  core::CompactionInput second_input = CompactionInputOf({});
  second_input.transcript = first->new_history;
  for (auto item : {core::UserMessage("two"), EmptyShellCall("c1"),
                    core::FunctionCallOutput("c1", "r"), core::AssistantMessage("done two")}) {
    second_input.transcript.push_back(item);
  }
  auto second = compactor.Compact(second_input, cancel);
  REQUIRE(second.ok());
  REQUIRE(client.stream_bodies.size() == 2);
  CHECK(client.stream_bodies[1].find("FIRST-SUMMARY") != std::string::npos);
  CHECK(client.stream_bodies[1].find("done two") != std::string::npos);
  int summaries = 0;
  for (const auto& item : second->new_history) summaries += IsSummaryMessage(item) ? 1 : 0;
  CHECK(summaries == 1);
  CHECK(second->summary == "SECOND-SUMMARY");
  CHECK(core::MessageText(second->new_history[2]) == "one");
  CHECK(core::MessageText(second->new_history[3]) == "two");
}

TEST_CASE("Checkpoint items in the transcript are neither sent nor counted") {
  ScriptedModelClient client;
  client.on_stream = [](const std::string&) { return AssistantReply("S"); };
  LocalCompactor compactor(client, CompactorOptionsFor());
  core::Item checkpoint;
  checkpoint.kind = core::ItemKind::kCompactionCheckpoint;
  checkpoint.body = R"({"type":"compaction_checkpoint"})";
  auto input = CompactionInputOf({checkpoint, core::UserMessage("q")});
  core::CancelToken cancel;
  auto out = compactor.Compact(input, cancel);
  REQUIRE(out.ok());
  CHECK(client.stream_bodies[0].find("compaction_checkpoint") == std::string::npos);
}
