// End-to-end tests of compaction: the real `codex` binary against an
// in-process ScriptedServer (issue 5). Local (summary) and remote
// (/responses/compact) compaction before a turn, mid-turn between tool calls,
// on context_length_exceeded (including a compaction request that overflows
// itself), `codex compact` and `codex compact undo`, fork and resume after a
// compaction, a 150-call loop under a 12k window, and the `--json` events.
//
// Sizes are derived from a probe run (the bytes every request carries whatever
// the conversation: instructions, tools, initial context), so the tests keep
// working when those change. The server rejects any request breaking the
// stateless wire rules, and every request is checked again here.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "compaction/local_compactor.h"
#include "compaction/rebuild_history.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::CheckWireRules;
using e2e::InputExtends;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::PairingProblem;
using e2e::Run;
using e2e::RunOk;
using e2e::SessionIdFromBanner;

// --- reading recorded requests ----------------------------------------------

// The text of a message item (all its content parts).
std::string Text(const Json& item) {
  std::string text;
  if (!item.is_object() || !item.contains("content") || !item["content"].is_array()) return text;
  for (const auto& part : item["content"]) {
    if (part.is_object() && part.contains("text") && part["text"].is_string()) {
      text += part["text"].get<std::string>();
    }
  }
  return text;
}

bool IsMessage(const Json& item, std::string_view role) {
  return item.value("type", "message") == "message" && item.value("role", "") == role;
}

bool IsUserText(const Json& item, std::string_view text) {
  return IsMessage(item, "user") && Text(item) == text;
}

// A summary message written by the local compactor.
bool IsSummaryItem(const Json& item) {
  return IsMessage(item, "user") && Text(item).rfind(compaction::kSummaryPrefix, 0) == 0;
}

// A local compaction's summary request: our prompt is the last input item.
bool IsSummaryRequest(const RecordedRequest& r) {
  const Json input = r.InputItems();
  return !input.empty() && IsUserText(input.back(), compaction::kCompactionPrompt);
}

Json Slice(const Json& array, size_t from, size_t to) {
  Json out = Json::array();
  for (size_t i = from; i < to && i < array.size(); ++i) out.push_back(array[i]);
  return out;
}

int64_t Tokens(size_t bytes) { return static_cast<int64_t>(bytes / 4); }

// The summary request's input without the prompt: the transcript it summarised.
Json SummarisedTranscript(const RecordedRequest& r) {
  const Json input = r.InputItems();
  return Slice(input, 0, input.size() - 1);
}

size_t CountType(const Json& input, std::string_view type) {
  size_t n = 0;
  for (const auto& item : input) n += item.value("type", "message") == type ? 1 : 0;
  return n;
}

// --- running codex ----------------------------------------------------------

// Runs codex from `env`'s CODEX_HOME against another server.
ProcessResult RunAgainst(CodexTestEnv& env, ScriptedServer& server, std::vector<std::string> args) {
  std::vector<std::string> all = {
      "-c", "model_providers.scripted.base_url=\"" + server.base_url() + "\""};
  for (auto& a : args) all.push_back(std::move(a));
  return e2e::RunChecked(env.CodexCommand(std::move(all)));
}

// The legacy endpoint form (POST /responses/compact), named explicitly: a
// provider that supports compaction is compacted inline by default.
const std::vector<std::string> kRemote = {"-c", "model_providers.scripted.supports_compact=true",
                                          "-c", "compaction=\"endpoint\""};
// `compaction = "auto"` for a provider that supports compaction: inline.
const std::vector<std::string> kInline = {"-c", "model_providers.scripted.supports_compact=true"};

std::vector<std::string> With(std::vector<std::string> prefix, std::vector<std::string> args) {
  for (auto& a : args) prefix.push_back(std::move(a));
  return prefix;
}

// `codex sessions show ID --json`.
Json ShowJson(CodexTestEnv& env, const std::string& id) {
  ProcessResult run = RunOk(env, {"sessions", "show", id, "--json"});
  Json j = Json::parse(run.out, nullptr, false);
  REQUIRE(j.is_object());
  return j;
}

// The checkpoint items of a `sessions show --json` history, oldest first.
std::vector<Json> Checkpoints(const Json& show) {
  std::vector<Json> out;
  for (const auto& item : show["items"]) {
    if (item.value("kind", "") == "compaction_checkpoint") out.push_back(item["body"]);
  }
  return out;
}

void CheckAllWireRules(CodexTestEnv& env, const std::string& session_id) {
  for (const auto& r : env.server().requests_to("/responses")) CheckWireRules(r, session_id);
}

// --- script pieces ----------------------------------------------------------

// A shell call printing `n` x's (sh, not a bash login shell: 150 of them
// should not spend their time reading profiles).
std::string BigOutputCall(size_t n) {
  return R"({"output": [{"shell": ["sh", "-c", "head -c )" + std::to_string(n) +
         R"( /dev/zero | tr '\\0' x"]}]})";
}
constexpr char kSmallCall[] = R"({"output": [{"shell": ["echo", "small"]}]})";

std::string Quoted(const std::string& s) { return Json(s).dump(); }

// --- the fixed part of every request ----------------------------------------

// What every request of a session carries besides the conversation, measured
// once with a probe run.
struct Footprint {
  Json context;              // the initial context items
  int64_t fixed_tokens = 0;  // body bytes / 4 of a request with the initial context only
  int64_t instruction_tokens = 0;
  int64_t context_tokens = 0;  // the initial context items' estimate
  size_t tools_bytes = 0;      // the `tools` array
};

// Measured with `extra_config` (the probe run's config).
Footprint MeasureWith(const std::string& extra_config) {
  Footprint f;
  auto env = MakeEnv(R"(["probe answer"])", extra_config);
  RunOk(*env, {"exec", "p"});
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  const RecordedRequest& r = requests[0];
  const Json input = r.InputItems();
  REQUIRE(input.size() >= 2);
  REQUIRE(IsUserText(input.back(), "p"));
  f.context = Slice(input, 0, input.size() - 1);
  f.fixed_tokens = Tokens(r.body_bytes - input.back().dump().size());
  f.instruction_tokens = Tokens(r.body.value("instructions", "").size() + 3);
  for (const auto& item : f.context) f.context_tokens += Tokens(item.dump().size() + 3);
  f.tools_bytes = r.body["tools"].dump().size();
  return f;
}

// The sub-agent tools off: for the cases whose window was sized for the
// fixed part without them (appended to their config, and measured so).
constexpr char kNoAgents[] = "[features]\nmulti_agent = false\n";

const Footprint& Measure(bool agents = true) {
  static const Footprint with_agents = MeasureWith("");
  if (agents) return with_agents;
  static const Footprint without_agents = MeasureWith(kNoAgents);
  return without_agents;
}

// An auto-compact limit whose half still holds the instructions, the tools,
// the initial context and `room` tokens (a summary and a few short messages), and at least
// `over_fixed` above the fixed part (so nothing triggers on a fresh session).
int64_t LimitFor(const Footprint& f, int64_t over_fixed, int64_t room = 400) {
  return std::max(f.fixed_tokens + over_fixed,
                  2 * (f.instruction_tokens + Tokens(f.tools_bytes + 3) + f.context_tokens + room));
}

std::string LimitConfig(int64_t limit) {
  return "model_auto_compact_token_limit = " + std::to_string(limit) + "\n";
}

// For `codex compact` on a short session: a limit and a first answer that
// put the session between half the limit (under it, compact refuses) and the
// limit (over it, the next turn would compact by itself).
struct ManualCompactSetup {
  int64_t limit = 0;
  std::string answer;
  std::string config;
};
ManualCompactSetup ForManualCompact(const Footprint& f) {
  ManualCompactSetup m;
  m.limit = 2 * (f.fixed_tokens + 600);
  m.answer = std::string(4'000, 'a');  // ~1,000 tokens above the fixed part
  m.config = LimitConfig(m.limit);
  return m;
}

}  // namespace

// ---------------------------------------------------------------------------
// 1. Local compaction before a turn.

TEST_CASE("local compaction before a turn: summary request, then the rebuilt history") {
  const Footprint& f = Measure();
  const int64_t limit = LimitFor(f, 700);
  // Run 1 stays under the limit (a small tool output); its long answer puts
  // the session over it, so resuming compacts before the next turn.
  const std::string answer(static_cast<size_t>((limit - f.fixed_tokens + 800) * 4), 'a');
  const std::string script =
      std::string(R"({"responses": [)") + kSmallCall + "," + Quoted(answer) + R"(,
    "SUMMARY-1: the user asked a first question; echo ran.",
    "second answer"]})";
  auto env = MakeEnv(script, LimitConfig(limit));

  auto run1 = RunOk(*env, {"exec", "first question"});
  const std::string id = SessionIdFromBanner(run1.err);
  REQUIRE(id.size() == 36);
  CHECK(env->server().requests_to("/responses").size() == 2);

  auto run2 = RunOk(*env, {"exec", "resume", id, "second question"});
  CHECK(run2.out == "second answer\n");
  CHECK_THAT(run2.err, Catch::Contains("compacted the conversation"));

  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CheckAllWireRules(*env, id);
  for (const auto& r : requests) CHECK(r.status == 200);
  CHECK(env->server().requests_to("/responses/compact").empty());

  // The summary request: the session's own request (same instructions, same
  // tools in the same order), our prompt last, the whole transcript before it.
  const RecordedRequest& summary = requests[2];
  REQUIRE(IsSummaryRequest(summary));
  CHECK(summary.body.value("store", true) == false);
  CHECK(summary.body["tools"] == requests[1].body["tools"]);
  CHECK(summary.body["instructions"] == requests[1].body["instructions"]);
  CHECK(summary.body["parallel_tool_calls"] == requests[1].body["parallel_tool_calls"]);
  const Json transcript = SummarisedTranscript(summary);
  CHECK(InputExtends(requests[1], summary));
  REQUIRE(transcript.size() == requests[1].InputItems().size() + 1);
  CHECK(IsMessage(transcript.back(), "assistant"));
  CHECK(Text(transcript.back()) == answer);

  // The turn: initial context + real user messages + summary + the new message.
  REQUIRE(requests[0].InputItems().size() == f.context.size() + 1);
  const Json expected = Slice(requests[0].InputItems(), 0, f.context.size());
  const Json input = requests[3].InputItems();
  INFO("turn input: " << input.dump().substr(0, 3000));
  REQUIRE(input.size() == expected.size() + 4);
  CHECK(Slice(input, 0, expected.size()) == expected);
  CHECK(IsUserText(input[expected.size()], "first question"));
  // The frontier: the first question was answered, echo ran.
  CHECK_THAT(Text(input[expected.size() + 1]), Catch::StartsWith("<working_state>") &&
                                                   Catch::Contains("- [answered] first question") &&
                                                   Catch::Contains("- [exit 0] echo"));
  CHECK(IsUserText(input[expected.size() + 2],
                   std::string(compaction::kSummaryPrefix) +
                       "SUMMARY-1: the user asked a first question; echo ran."));
  CHECK(IsUserText(input[expected.size() + 3], "second question"));
  CHECK(CountType(input, "function_call") == 0);

  // The store keeps both: the raw items and the compaction.
  auto show = RunOk(*env, {"sessions", "show", id});
  CHECK_THAT(show.out, Catch::Contains("first question"));
  CHECK_THAT(show.out, Catch::Contains("tool call shell"));
  CHECK_THAT(show.out, Catch::Contains("=== compaction"));
  CHECK_THAT(show.out, Catch::Contains("SUMMARY-1"));
  CHECK_THAT(show.out, Catch::Contains("second question"));
  CHECK(show.out.find("tool call shell") < show.out.find("=== compaction"));
  const Json details = ShowJson(*env, id);
  auto checkpoints = Checkpoints(details);
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("mode", "") == "local");
  CHECK(checkpoints[0].value("trigger", "") == "auto");
  CHECK(checkpoints[0].value("replacement_items", -1) == static_cast<int>(expected.size() + 3));
  CHECK(checkpoints[0].value("summary", "") ==
        "SUMMARY-1: the user asked a first question; echo ran.");
  bool event = false;
  for (const auto& e : details["events"]) event = event || e.value("type", "") == "compaction";
  CHECK(event);
}

TEST_CASE("local compaction before a turn: custom instructions count toward usage") {
  // A resumed session has no response usage yet, so its usage is an estimate;
  // the instructions sent with every request are part of it, whichever they are.
  const Footprint& f = Measure();
  const std::string instructions(8000, 'i');
  const int64_t extra = Tokens(instructions.size()) - f.instruction_tokens;
  REQUIRE(extra > 1000);
  const int64_t fixed = f.fixed_tokens + extra;
  const int64_t limit = std::max(
      fixed + 700,
      2 * (Tokens(instructions.size()) + Tokens(f.tools_bytes + 3) + f.context_tokens + 400));
  // Over the limit by 800 tokens counting these instructions; under it
  // counting the built-in ones.
  const std::string answer(static_cast<size_t>((limit - fixed + 800) * 4), 'a');
  const std::string script = std::string(R"({"responses": [)") + kSmallCall + "," + Quoted(answer) +
                             R"(, "SUMMARY-I", "second answer"]})";
  auto env = MakeEnv(script, LimitConfig(limit) + "instructions = '" + instructions + "'\n");
  auto run1 = RunOk(*env, {"exec", "first question"});
  const std::string id = SessionIdFromBanner(run1.err);
  auto run2 = RunOk(*env, {"exec", "resume", id, "second question"});
  CHECK(run2.out == "second answer\n");

  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CHECK(requests[0].body.value("instructions", "") == instructions);
  CHECK(IsSummaryRequest(requests[2]));
  CHECK(requests[2].body.value("instructions", "") == instructions);
  const Json input = requests[3].InputItems();
  REQUIRE(input.size() >= 2);
  CHECK(IsSummaryItem(input[input.size() - 2]));
  CHECK(IsUserText(input.back(), "second question"));
}

// ---------------------------------------------------------------------------
// 2. Remote compaction.

TEST_CASE("remote compaction: /responses/compact, its items resent byte-identical") {
  const Footprint& f = Measure();
  const int64_t limit = LimitFor(f, 700);
  const std::string answer(static_cast<size_t>((limit - f.fixed_tokens + 800) * 4), 'a');
  const std::string script = std::string(R"({"responses": [)") + kSmallCall + "," + Quoted(answer) +
                             R"(, "second answer", "third answer"],
    "compact": [{"output": [{"user": "Summary: remote digest"}, {"compaction": "digest 1"}]}]})";
  auto env = MakeEnv(script, LimitConfig(limit));

  auto run1 = RunOk(*env, With(kRemote, {"exec", "first question"}));
  const std::string id = SessionIdFromBanner(run1.err);
  auto run2 = RunOk(*env, With(kRemote, {"exec", "resume", id, "second question"}));
  CHECK(run2.out == "second answer\n");
  CHECK_THAT(run2.err, Catch::Contains("remote"));
  auto run3 = RunOk(*env, With(kRemote, {"exec", "resume", id, "third question"}));
  CHECK(run3.out == "third answer\n");

  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CheckAllWireRules(*env, id);
  for (const auto& r : requests) CHECK_FALSE(IsSummaryRequest(r));

  auto compacts = env->server().requests_to("/responses/compact");
  REQUIRE(compacts.size() == 1);
  const RecordedRequest& c = compacts[0];
  CHECK(c.status == 200);
  REQUIRE(c.body.is_object());
  std::vector<std::string> keys;
  for (const auto& [k, v] : c.body.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"model", "input", "instructions"});
  CHECK(c.body.value("model", "") == "gpt-test");
  CHECK(c.body["instructions"] == requests[0].body["instructions"]);
  // The whole transcript: run 1's last request input + its answer.
  const Json compact_input = c.InputItems();
  const Json last_run1 = requests[1].InputItems();
  REQUIRE(compact_input.size() == last_run1.size() + 1);
  CHECK(Slice(compact_input, 0, last_run1.size()) == last_run1);
  CHECK(Text(compact_input.back()) == answer);

  // Run 2: initial context + the returned items + the new message.
  const Json input2 = requests[2].InputItems();
  const size_t n = f.context.size();
  INFO("run 2 input: " << input2.dump().substr(0, 3000));
  REQUIRE(input2.size() == n + 4);
  CHECK(Slice(input2, 0, n) == Slice(requests[0].InputItems(), 0, n));
  CHECK(IsUserText(input2[n], "Summary: remote digest"));
  const Json& compaction_item = input2[n + 1];
  CHECK(compaction_item.value("type", "") == "compaction");
  CHECK_FALSE(compaction_item.contains("id"));
  const std::string encrypted = compaction_item.value("encrypted_content", "");
  CHECK(encrypted.rfind("gAAAAA", 0) == 0);
  CHECK_THAT(Text(input2[n + 2]), Catch::StartsWith("<working_state>"));
  CHECK(IsUserText(input2[n + 3], "second question"));

  // Run 3 only appends, and resends the compaction item byte for byte.
  CHECK(InputExtends(requests[2], requests[3]));
  const Json input3 = requests[3].InputItems();
  REQUIRE(input3.size() > n + 1);
  CHECK(input3[n + 1].dump() == compaction_item.dump());
  CHECK(input3[n + 1].value("encrypted_content", "") == encrypted);

  auto show = RunOk(*env, {"sessions", "show", id});
  CHECK_THAT(show.out, Catch::Contains("first question"));
  CHECK_THAT(show.out, Catch::Contains("=== compaction"));
  CHECK_THAT(show.out, Catch::Contains("(compaction: encrypted summary from the server)"));
  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("mode", "") == "remote");
  CHECK(checkpoints[0]["summary"].is_null());
}

TEST_CASE("remote compaction: a provider without /responses/compact (404) is compacted locally") {
  const ManualCompactSetup m = ForManualCompact(Measure());
  const std::string script = std::string(R"({"responses": [)") + kSmallCall + "," +
                             Quoted(m.answer) + R"(, "SUMMARY-404", "second answer"],
    "compact": [{"http_error": 404}]})";
  auto env = MakeEnv(script, m.config);
  auto run1 = RunOk(*env, With(kRemote, {"exec", "first question"}));
  const std::string id = SessionIdFromBanner(run1.err);
  auto compact = RunOk(*env, With(kRemote, {"compact", id}));
  CHECK_THAT(compact.out, Catch::Contains("compacted session " + id));

  auto compacts = env->server().requests_to("/responses/compact");
  REQUIRE(compacts.size() == 1);
  CHECK(compacts[0].status == 404);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(IsSummaryRequest(requests[2]));
  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("mode", "") == "local");
  CHECK(checkpoints[0].value("trigger", "") == "manual");

  auto run2 = RunOk(*env, With(kRemote, {"exec", "resume", id, "second question"}));
  CHECK(run2.out == "second answer\n");
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  const Json input = requests[3].InputItems();
  REQUIRE(input.size() >= 2);
  CHECK(
      IsUserText(input[input.size() - 2], std::string(compaction::kSummaryPrefix) + "SUMMARY-404"));
  CheckAllWireRules(*env, id);
}

// Codex's compact_prompt and experimental_compact_prompt_file (issue 25): the
// local compaction's summary request ends with that prompt instead of ours.
TEST_CASE("compact_prompt / experimental_compact_prompt_file replace the summary prompt") {
  const ManualCompactSetup m = ForManualCompact(Measure());
  for (const std::string& key :
       {std::string("compact_prompt"), std::string("experimental_compact_prompt_file")}) {
    INFO(key);
    const std::string script = std::string(R"({"responses": [)") + kSmallCall + "," +
                               Quoted(m.answer) + R"(, "SUMMARY-CUSTOM"]})";
    const std::string mine = "Summarise in three bullet points, in German.";
    std::string config = m.config + "compaction = \"local\"\n";
    if (key == "compact_prompt") {
      config += "compact_prompt = \"" + mine + "\"\n";
    } else {
      config += "experimental_compact_prompt_file = \"prompt.txt\"\n";
    }
    auto env = MakeEnv(script, config);
    std::ofstream(env->codex_home() / "prompt.txt") << mine;
    auto run1 = RunOk(*env, {"exec", "first question"});
    CHECK(run1.err.find(key) == std::string::npos);  // honoured, not warned
    const std::string id = SessionIdFromBanner(run1.err);
    RunOk(*env, {"compact", id});
    auto requests = env->server().requests_to("/responses");
    REQUIRE(requests.size() == 3);
    const Json input = requests[2].InputItems();
    REQUIRE_FALSE(input.empty());
    CHECK(IsUserText(input.back(), mine));
    CHECK_FALSE(IsSummaryRequest(requests[2]));  // not our built-in prompt
  }
}

// ---------------------------------------------------------------------------
// 3. Mid-turn compaction between tool calls.

// The environment of a mid-turn compaction: `codex exec "do work"` runs two calls whose
// outputs are each about 65% of the room above the fixed part (the first leaves usage under
// the limit, the second passes it); `then` lists the responses after them (JSON array
// elements: the summary's, then the turn's).
std::unique_ptr<CodexTestEnv> MidTurnEnv(const std::string& then) {
  const Footprint& f = Measure();
  const int64_t limit = LimitFor(f, 1700);
  const size_t out_bytes = static_cast<size_t>((limit - f.fixed_tokens) * 4 * 65 / 100);
  return MakeEnv(std::string(R"({"responses": [)") + BigOutputCall(out_bytes) + "," +
                     BigOutputCall(out_bytes) + "," + then + "]}",
                 LimitConfig(limit));
}

TEST_CASE("mid-turn: tool outputs push usage over the limit, the turn compacts and completes") {
  const Footprint& f = Measure();
  auto env = MidTurnEnv(R"("SUMMARY-MID: two commands printed x's.", "done after compaction")");

  auto run = RunOk(*env, {"exec", "do work"});
  const std::string id = SessionIdFromBanner(run.err);
  CHECK(run.out == "done after compaction\n");
  CHECK_THAT(run.err, Catch::Contains("compacted the conversation"));

  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CheckAllWireRules(*env, id);
  CHECK_FALSE(IsSummaryRequest(requests[1]));
  REQUIRE(IsSummaryRequest(requests[2]));
  // It summarised everything, the second output included.
  const Json transcript = SummarisedTranscript(requests[2]);
  CHECK(InputExtends(requests[1], requests[2]));
  CHECK(CountType(transcript, "function_call_output") == 2);
  CHECK(PairingProblem(transcript) == "");

  // The turn continued from: initial context + the current message + summary
  // (Codex's order: the messages before the summary).
  const Json input = requests[3].InputItems();
  const size_t n = f.context.size();
  INFO("input after compaction: " << input.dump().substr(0, 3000));
  REQUIRE(input.size() == n + 3);
  CHECK(Slice(input, 0, n) == Slice(requests[0].InputItems(), 0, n));
  CHECK(IsUserText(input[n], "do work"));
  CHECK_THAT(Text(input[n + 1]), Catch::StartsWith("<working_state>") &&
                                     Catch::Contains("- [in progress] do work\n") &&
                                     Catch::Contains(", 2 times] head -c"));
  CHECK(IsSummaryItem(input[n + 2]));
  CHECK_THAT(Text(input[n + 2]), Catch::Contains("SUMMARY-MID"));

  const Json details = ShowJson(*env, id);
  auto checkpoints = Checkpoints(details);
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("trigger", "") == "auto");
  REQUIRE(details["turns"].size() == 1);
  CHECK(details["turns"][0].value("status", "") == "completed");
}

// Waits (bounded) until the server has received `n` /responses requests.
void WaitForRequests(CodexTestEnv& env, size_t n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (env.server().requests_to("/responses").size() < n &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(env.server().requests_to("/responses").size() == n);
}

// `codex exec "do work"`, whose two big outputs cross the limit mid-turn, started and waited
// for until its summary request, which the server never answers; the script then answers the
// next summary request with `later_summary` and the turn after it with "resumed fine".
struct StalledCompaction {
  std::unique_ptr<CodexTestEnv> env;
  std::unique_ptr<ChildProcess> child;
};
StalledCompaction StartStalledCompaction(const std::string& later_summary) {
  StalledCompaction out;
  out.env = MidTurnEnv(R"({"message": "SUMMARY-NEVER", "delay_ms": 120000}, ")" + later_summary +
                       R"(", "resumed fine")");
  auto child = ChildProcess::Spawn(out.env->CodexCommand({"exec", "do work"}));
  REQUIRE(child.ok());
  out.child = std::move(*child);
  WaitForRequests(*out.env, 3);
  REQUIRE(IsSummaryRequest(out.env->server().requests_to("/responses")[2]));
  return out;
}

TEST_CASE("mid-turn: Ctrl-C during the compaction leaves the session as it was, resumable") {
  auto [env, child] = StartStalledCompaction("SUMMARY-AFTER-RESUME");
  REQUIRE(child->Signal(SIGINT).ok());
  auto done = child->Wait(std::chrono::seconds(60));
  REQUIRE(done.ok());
  INFO("stderr: " << done->err);
  CHECK_FALSE(done->timed_out);
  CHECK(done->exit_code == 130);
  CHECK(done->out.empty());
  const std::string id = SessionIdFromBanner(done->err);
  REQUIRE(id.size() == 36);

  Json details = ShowJson(*env, id);
  CHECK(Checkpoints(details).empty());
  REQUIRE(details["turns"].size() == 1);
  CHECK(details["turns"][0].value("status", "") == "interrupted");

  // Resuming compacts before the turn (still over the limit) and goes on.
  auto resumed = RunOk(*env, {"exec", "resume", id, "go on"});
  CHECK(resumed.out == "resumed fine\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 5);
  REQUIRE(IsSummaryRequest(requests[3]));
  // The interrupted transcript, both outputs included, was summarised.
  CHECK(CountType(SummarisedTranscript(requests[3]), "function_call_output") == 2);
  const Json input = requests[4].InputItems();
  REQUIRE(input.size() >= 4);
  CHECK(IsUserText(input[input.size() - 4], "do work"));
  // Compacted between turns: the interrupted task says so.
  CHECK_THAT(Text(input[input.size() - 3]), Catch::Contains("- [interrupted] do work\n"));
  CHECK(IsUserText(input[input.size() - 2],
                   std::string(compaction::kSummaryPrefix) + "SUMMARY-AFTER-RESUME"));
  CHECK(IsUserText(input.back(), "go on"));
  CheckAllWireRules(*env, id);
  details = ShowJson(*env, id);
  CHECK(Checkpoints(details).size() == 1);
}

TEST_CASE("mid-turn: SIGKILL during the compaction loses no output; resume compacts and goes on") {
  // The worst moment: both calls' outputs committed, the summary requested
  // and never answered, the process killed (no Ctrl-C handler runs).
  auto [env, child] = StartStalledCompaction("SUMMARY-AFTER-KILL");
  REQUIRE(child->Signal(SIGKILL).ok());
  auto done = child->Wait(std::chrono::seconds(60));
  REQUIRE(done.ok());
  REQUIRE(done->term_signal == SIGKILL);
  const std::string id = SessionIdFromBanner(done->err);
  REQUIRE(id.size() == 36);
  CHECK(Checkpoints(ShowJson(*env, id)).empty());  // no half compaction committed

  auto resumed = RunOk(*env, {"exec", "resume", id, "go on"});
  CHECK(resumed.out == "resumed fine\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 5);
  REQUIRE(IsSummaryRequest(requests[3]));
  // Everything committed before the kill was summarised: both calls, each
  // with its output.
  const Json transcript = SummarisedTranscript(requests[3]);
  CHECK(CountType(transcript, "function_call_output") == 2);
  CHECK(PairingProblem(transcript) == "");
  const Json input = requests[4].InputItems();
  CHECK(PairingProblem(input) == "");
  CHECK(IsUserText(input.back(), "go on"));
  CheckAllWireRules(*env, id);
  CHECK(Checkpoints(ShowJson(*env, id)).size() == 1);
}

TEST_CASE("mid-turn: SIGKILL after the compaction committed resumes from the compacted view") {
  auto env = MidTurnEnv(
      R"("SUMMARY-KEPT: two commands printed x's.", {"message": "never streamed", "delay_ms": 120000}, "resumed fine")");
  auto child = ChildProcess::Spawn(env->CodexCommand({"exec", "do work"}));
  REQUIRE(child.ok());
  // The turn goes on after its compaction: killed while it waits for the answer.
  WaitForRequests(*env, 4);
  REQUIRE((*child)->Signal(SIGKILL).ok());
  auto done = (*child)->Wait(std::chrono::seconds(60));
  REQUIRE(done.ok());
  REQUIRE(done->term_signal == SIGKILL);
  const std::string id = SessionIdFromBanner(done->err);
  REQUIRE(id.size() == 36);
  REQUIRE(Checkpoints(ShowJson(*env, id)).size() == 1);  // committed before the kill

  auto resumed = RunOk(*env, {"exec", "resume", id, "go on"});
  CHECK(resumed.out == "resumed fine\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 5);
  // No second summary: the resumed request starts from the compacted view
  // the killed turn committed, and every call in it has its output.
  CHECK_FALSE(IsSummaryRequest(requests[4]));
  const Json input = requests[4].InputItems();
  INFO("resumed input: " << input.dump().substr(0, 3000));
  CHECK(PairingProblem(input) == "");
  CHECK(CountType(input, "function_call_output") == 0);  // summarised away
  bool summary = false;
  for (const Json& item : input) summary = summary || IsSummaryItem(item);
  CHECK(summary);
  CHECK(IsUserText(input.back(), "go on"));
  CheckAllWireRules(*env, id);
}

// ---------------------------------------------------------------------------
// 4. context_length_exceeded: compact and retry once.

namespace {

// Run 1 of the overflow tests: three shell calls of `out_bytes` each, on the
// env's own server (no window). Returns the session id.
std::string ThreeCallSession(CodexTestEnv& env) {
  auto run = RunOk(env, {"exec", "first question"});
  CHECK(run.out == "first answer\n");
  auto requests = env.server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  return SessionIdFromBanner(run.err);
}

std::string ThreeCallScript(size_t out_bytes) {
  const std::string call = BigOutputCall(out_bytes);
  return R"({"responses": [)" + call + "," + call + "," + call + R"(, "first answer"]})";
}

// Bytes of the stored items a resume appends to run 1's last request: the
// assistant answer and the new user message (approximately, as stored).
size_t ResumeGrowth(const std::string& prompt) { return 180 + prompt.size(); }

}  // namespace

TEST_CASE("overflow: context_length_exceeded compacts and retries once, the turn succeeds") {
  const Footprint& f = Measure();
  // The one-shot shell harness (the script's calls are `shell` calls): the
  // window below is cut to the size of its tools array.
  auto env = MakeEnv(ThreeCallScript(2000), "[features]\nunified_exec = false\n");
  const std::string id = ThreeCallSession(*env);
  const size_t run1_last = env->server().requests_to("/responses").back().body_bytes;
  const size_t tools_bytes =
      env->server().requests_to("/responses").back().body["tools"].dump().size();

  // The summary request is the turn request plus the ask, so a window just
  // under the turn request rejects both; the compactor then drops the oldest
  // items from its request until it fits.
  const std::string prompt = "second question";
  const size_t turn_bytes = run1_last + ResumeGrowth(prompt);
  const size_t prompt_item = compaction::kCompactionPrompt.size() + 80;
  REQUIRE(tools_bytes > prompt_item + 800);
  const size_t gap = tools_bytes - prompt_item;
  const int64_t window = Tokens(turn_bytes - gap / 2);
  auto server = ScriptedServer::Start(R"({"max_input_tokens": )" + std::to_string(window) +
                                      R"(, "responses": ["SUMMARY-OVERFLOW", "second answer"]})");
  REQUIRE(server.ok());

  auto run2 = RunAgainst(*env, **server, {"exec", "resume", id, prompt});
  INFO("stderr: " << run2.err);
  CHECK(run2.exit_code == 0);
  CHECK(run2.out == "second answer\n");
  CHECK_THAT(run2.err, Catch::Contains("context window exceeded"));

  // The turn refused; the summary request refused as long as it overflows
  // (each round drops the oldest ~10% of the history: how many rounds depends
  // on the tools array's size), then answered; the turn retried once.
  auto requests = (*server)->requests_to("/responses");
  for (const auto& r : requests)
    UNSCOPED_INFO(r.outcome << (IsSummaryRequest(r) ? " summary" : ""));
  REQUIRE(requests.size() >= 4);
  const size_t last = requests.size() - 1;
  CHECK(requests[0].outcome == "failed:context_length_exceeded");
  CHECK_FALSE(IsSummaryRequest(requests[0]));
  REQUIRE(IsSummaryRequest(requests[1]));
  CHECK(InputExtends(requests[0], requests[1]));  // the same prefix, the ask appended
  for (size_t i = 1; i + 1 < last; ++i) {
    REQUIRE(IsSummaryRequest(requests[i]));
    CHECK(requests[i].outcome == "failed:context_length_exceeded");
    // Each round sends less than the one the server refused.
    CHECK(requests[i + 1].InputItems().size() < requests[i].InputItems().size());
  }
  REQUIRE(IsSummaryRequest(requests[last - 1]));
  CHECK(requests[last - 1].outcome == "completed");
  CHECK_FALSE(IsSummaryRequest(requests[last]));
  CHECK(requests[last].outcome == "completed");
  for (const auto& r : requests) CheckWireRules(r, id);
  CHECK_THAT(run2.err, Catch::Contains("oldest items to fit the context window"));

  // The retry: initial context + real user messages (the turn's last) + summary.
  const Json input = requests[last].InputItems();
  const size_t n = f.context.size();
  INFO("retry input: " << input.dump().substr(0, 3000));
  REQUIRE(input.size() == n + 4);
  CHECK(Slice(input, 0, n) == Slice(env->server().requests_to("/responses")[0].InputItems(), 0, n));
  CHECK(IsUserText(input[n], "first question"));
  CHECK(IsUserText(input[n + 1], prompt));
  CHECK_THAT(Text(input[n + 2]), Catch::StartsWith("<working_state>"));
  CHECK(IsUserText(input[n + 3], std::string(compaction::kSummaryPrefix) + "SUMMARY-OVERFLOW"));

  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("trigger", "") == "overflow");
  CHECK(checkpoints[0].value("dropped_items", -1) > 0);
}

TEST_CASE("overflow mid-turn with encrypted reasoning: items resent byte-identical, inline") {
  // The follow-up request after a reasoning item and a shell call is refused
  // as too long: the inline compaction request is that request plus the
  // trigger (reasoning and call bytes unchanged), and the retry carries the
  // server's compaction item byte for byte. The server rejects any
  // encrypted_content it did not issue byte for byte (unknown_encrypted_content).
  const std::string script = R"({"responses": [
    {"output": [{"reasoning": "looking at the log"},
                {"shell": ["sh", "-c", "head -c 6000 /dev/zero | tr '\\0' x"]}]},
    {"failed": "context_length_exceeded"},
    "done after compaction"]})";
  auto env = MakeEnv(script);
  auto run = RunOk(*env, With(kInline, {"exec", "read the log"}));
  CHECK(run.out == "done after compaction\n");
  CHECK_THAT(run.err, Catch::Contains("context window exceeded"));
  const std::string id = SessionIdFromBanner(run.err);

  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  for (const auto& r : requests) {
    INFO(r.outcome);
    CHECK(r.status == 200);
  }
  CHECK(requests[1].outcome == "failed:context_length_exceeded");
  const Json refused = requests[1].InputItems();
  Json reasoning;
  for (const auto& item : refused) {
    if (item.value("type", "") == "reasoning") reasoning = item;
  }
  REQUIRE(reasoning.is_object());
  REQUIRE_FALSE(reasoning.value("encrypted_content", "").empty());
  // The compaction request: the refused request's input, then the trigger.
  const Json trigger = requests[2].InputItems();
  REQUIRE(trigger.size() == refused.size() + 1);
  CHECK(trigger.back() == Json{{"type", "compaction_trigger"}});
  CHECK(InputExtends(requests[1], requests[2]));
  for (const auto& [key, value] : requests[1].body.items()) {
    if (key != "input") CHECK(requests[2].body[key] == value);
  }
  // The retry: no reasoning or call left, the task, then one compaction item, last.
  const Json retry = requests[3].InputItems();
  CHECK(CountType(retry, "reasoning") == 0);
  CHECK(CountType(retry, "function_call") == 0);
  CHECK(CountType(retry, "compaction") == 1);
  REQUIRE(retry.size() >= 3);
  CHECK(IsUserText(retry[retry.size() - 3], "read the log"));
  CHECK_THAT(Text(retry[retry.size() - 2]), Catch::StartsWith("<working_state>"));
  CHECK(retry.back().value("type", "") == "compaction");
  CheckAllWireRules(*env, id);

  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("trigger", "") == "overflow");
  CHECK(checkpoints[0].value("mode", "") == "inline");
  // The stored items before the checkpoint keep the reasoning as the server sent it.
  bool stored = false;
  const Json shown = ShowJson(*env, id);
  for (const auto& item : shown["items"]) {
    if (item.value("kind", "") == "reasoning") {
      stored =
          item["body"].value("encrypted_content", "") == reasoning.value("encrypted_content", "");
    }
  }
  CHECK(stored);
}

TEST_CASE("overflow: a compaction request that overflows drops the oldest items and says so") {
  const Footprint& f = Measure();
  const size_t out_bytes = std::max<size_t>(6000, f.tools_bytes + 3000);
  auto env = MakeEnv(ThreeCallScript(out_bytes));
  const std::string id = ThreeCallSession(*env);
  auto run1 = env->server().requests_to("/responses");
  const std::string first_call = run1[1].InputItems().back().value("call_id", "");
  const size_t run1_last = run1.back().body_bytes;

  // Too small for the full summary request (about the turn request minus the
  // tools), big enough once one call and its output are gone.
  const std::string prompt = "second question";
  const size_t turn_bytes = run1_last + ResumeGrowth(prompt);
  const size_t summary_bytes = turn_bytes - f.tools_bytes + compaction::kCompactionPrompt.size();
  const int64_t window = Tokens(summary_bytes - out_bytes / 2);
  auto server = ScriptedServer::Start(R"({"max_input_tokens": )" + std::to_string(window) +
                                      R"(, "responses": ["SUMMARY-DROPPED", "second answer"]})");
  REQUIRE(server.ok());

  auto run2 = RunAgainst(*env, **server, {"exec", "resume", id, prompt});
  INFO("stderr: " << run2.err);
  CHECK(run2.exit_code == 0);
  CHECK(run2.out == "second answer\n");

  auto requests = (*server)->requests_to("/responses");
  REQUIRE(requests.size() >= 4);
  CHECK(requests[0].outcome == "failed:context_length_exceeded");
  CHECK_FALSE(IsSummaryRequest(requests[0]));
  size_t summaries = 0;
  for (size_t i = 1; i + 1 < requests.size(); ++i) {
    CHECK(IsSummaryRequest(requests[i]));
    ++summaries;
  }
  CHECK(summaries >= 2);
  CHECK(requests[1].outcome == "failed:context_length_exceeded");
  const RecordedRequest& accepted = requests[requests.size() - 2];
  CHECK(accepted.outcome == "completed");
  CHECK(requests.back().outcome == "completed");
  for (const auto& r : requests) CheckWireRules(r, id);

  // The first call went with its output; the others stayed.
  const Json summarised = SummarisedTranscript(accepted);
  for (const auto& item : summarised) CHECK(item.value("call_id", "") != first_call);
  CHECK(CountType(summarised, "function_call") == CountType(summarised, "function_call_output"));
  CHECK(CountType(summarised, "function_call") >= 1);
  CHECK(IsUserText(summarised.back(), prompt));

  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  const int dropped = checkpoints[0].value("dropped_items", 0);
  CHECK(dropped >= 2);
  CHECK_THAT(run2.err, Catch::Contains("compaction dropped the " + std::to_string(dropped) +
                                       " oldest items"));

  // The retry still starts from the whole conversation's summary, after the message.
  const Json input = requests.back().InputItems();
  REQUIRE(input.size() >= f.context.size() + 3);
  CHECK(IsUserText(input[input.size() - 3], prompt));
  CHECK_THAT(Text(input[input.size() - 2]), Catch::StartsWith("<working_state>"));
  CHECK(IsSummaryItem(input.back()));
}

TEST_CASE("overflow: a remote compaction request that overflows drops the oldest items") {
  const Footprint& f = Measure();
  const size_t out_bytes = 6000;
  auto env = MakeEnv(ThreeCallScript(out_bytes));
  const std::string id = ThreeCallSession(*env);
  auto run1 = env->server().requests_to("/responses");
  const std::string first_call = run1[1].InputItems().back().value("call_id", "");

  // /responses/compact carries the input and instructions only: about the
  // turn request minus the tools and the other request fields.
  const std::string prompt = "second question";
  const size_t turn_bytes = run1.back().body_bytes + ResumeGrowth(prompt);
  const size_t compact_bytes = turn_bytes - f.tools_bytes - 250;
  const int64_t window = Tokens(compact_bytes - out_bytes / 2);
  auto server = ScriptedServer::Start(R"({"max_input_tokens": )" + std::to_string(window) +
                                      R"(, "responses": ["second answer"]})");
  REQUIRE(server.ok());

  auto run2 = RunAgainst(*env, **server, With(kRemote, {"exec", "resume", id, prompt}));
  INFO("stderr: " << run2.err);
  CHECK(run2.exit_code == 0);
  CHECK(run2.out == "second answer\n");

  auto requests = (*server)->requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].outcome == "failed:context_length_exceeded");
  CHECK(requests[1].outcome == "completed");
  for (const auto& r : requests) CheckWireRules(r, id);
  auto compacts = (*server)->requests_to("/responses/compact");
  REQUIRE(compacts.size() >= 2);
  CHECK(compacts.front().status == 400);
  CHECK(compacts.back().status == 200);
  const Json compacted = compacts.back().InputItems();
  for (const auto& item : compacted) CHECK(item.value("call_id", "") != first_call);
  CHECK(PairingProblem(compacted) == "");

  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("mode", "") == "remote");
  CHECK(checkpoints[0].value("trigger", "") == "overflow");
  const int dropped = checkpoints[0].value("dropped_items", 0);
  CHECK(dropped >= 2);
  CHECK_THAT(run2.err, Catch::Contains("compaction dropped the " + std::to_string(dropped) +
                                       " oldest items"));
  const Json input = requests[1].InputItems();
  REQUIRE(input.size() >= 3);
  CHECK(input[input.size() - 3].value("type", "") == "compaction");
  CHECK_THAT(Text(input[input.size() - 2]), Catch::StartsWith("<working_state>"));
  CHECK(IsUserText(input.back(), prompt));
}

TEST_CASE("overflow: retried once only; a retry that still overflows fails the turn clearly") {
  const Footprint& f = Measure();
  const size_t out_bytes = 6000;
  auto env = MakeEnv(ThreeCallScript(out_bytes));
  const std::string id = ThreeCallSession(*env);

  // The window rejects the turn request (and the summary request, until the
  // compactor drops its oldest items); the summary the model writes is
  // shorter than the history it replaces but so long that the retry
  // overflows as well.
  const std::string prompt = "second question";
  const size_t turn_bytes =
      env->server().requests_to("/responses").back().body_bytes + ResumeGrowth(prompt);
  const int64_t window = Tokens(turn_bytes - 1500);
  const std::string summary = "LONG SUMMARY " + std::string(3 * out_bytes - 300, 's');
  auto server = ScriptedServer::Start(R"({"max_input_tokens": )" + std::to_string(window) +
                                      R"(, "responses": [)" + Quoted(summary) +
                                      R"(, "never sent", "never sent either"]})");
  REQUIRE(server.ok());

  auto run2 = RunAgainst(*env, **server, {"exec", "resume", id, prompt});
  INFO("stderr: " << run2.err);
  CHECK(run2.exit_code != 0);
  CHECK(run2.out.empty());
  auto errors = e2e::ErrorLines(run2.err);
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0],
             Catch::Contains("still exceeds the model's context window after compacting"));
  CHECK_THAT(errors[0], Catch::Contains("codex fork " + id));

  auto requests = (*server)->requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CHECK(requests[0].outcome == "failed:context_length_exceeded");
  CHECK(IsSummaryRequest(requests[1]));
  CHECK(requests[1].outcome == "failed:context_length_exceeded");
  CHECK(IsSummaryRequest(requests[2]));
  CHECK(requests[2].outcome == "completed");
  CHECK(requests[3].outcome == "failed:context_length_exceeded");
  REQUIRE(requests[3].InputItems().size() > f.context.size() + 1);
  CHECK(IsSummaryItem(requests[3].InputItems().back()));

  // The compaction stays; the turn is recorded as failed; the session resumes.
  const Json details = ShowJson(*env, id);
  CHECK(Checkpoints(details).size() == 1);
  REQUIRE(details["turns"].size() == 2);
  CHECK(details["turns"][1].value("status", "") == "failed");
}

// ---------------------------------------------------------------------------
// 5. codex compact / codex compact undo.

TEST_CASE("compact undo restores the previous transcript exactly, and refuses after more turns") {
  const ManualCompactSetup m = ForManualCompact(Measure());
  const std::string script =
      std::string(R"({"responses": [)") + kSmallCall + "," + Quoted(m.answer) + R"(,
    "SUMMARY-U1", "second answer", "SUMMARY-U2", "third answer"]})";
  auto env = MakeEnv(script, m.config);
  auto run1 = RunOk(*env, {"exec", "first question"});
  const std::string id = SessionIdFromBanner(run1.err);

  auto compact = RunOk(*env, {"compact", id});
  CHECK_THAT(compact.out, Catch::Contains("compacted session " + id));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  REQUIRE(IsSummaryRequest(requests[2]));
  const Json before = SummarisedTranscript(requests[2]);
  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("trigger", "") == "manual");

  auto undo = RunOk(*env, {"compact", "undo", id});
  CHECK_THAT(undo.out, Catch::Contains("undid the last compaction"));
  // Nothing left to undo now.
  auto again = Run(*env, {"compact", "undo", id});
  CHECK(again.exit_code != 0);
  CHECK_THAT(again.err, Catch::Contains("no compaction to undo"));

  auto run2 = RunOk(*env, {"exec", "resume", id, "second question"});
  CHECK(run2.out == "second answer\n");
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  const Json input = requests[3].InputItems();
  INFO("input after undo: " << input.dump().substr(0, 3000));
  // Over half the limit: the turn tells the model its budget before the message.
  REQUIRE(input.size() == before.size() + 2);
  CHECK(Slice(input, 0, before.size()) == before);
  const std::string budget = Text(input[before.size()]);
  CHECK_THAT(budget,
             Catch::StartsWith("<context_budget>") &&
                 Catch::Contains("tokens of the conversation are in use") &&
                 Catch::Contains("At " + std::to_string(m.limit) + " tokens codex compacts"));
  CHECK(IsUserText(input.back(), "second question"));
  for (const auto& item : input) CHECK_FALSE(IsSummaryItem(item));
  CheckAllWireRules(*env, id);

  // Compact again, then a turn: the compaction is no longer the last thing.
  RunOk(*env, {"compact", id});
  RunOk(*env, {"exec", "resume", id, "third question"});
  auto refused = Run(*env, {"compact", "undo", id});
  CHECK(refused.exit_code != 0);
  CHECK_THAT(refused.err, Catch::Contains("cannot be undone"));
  CHECK(refused.out.empty());
  // Nothing moved: the session still ends with the third answer after the compaction.
  const Json details = ShowJson(*env, id);
  REQUIRE_FALSE(details["items"].empty());
  CHECK(Text(details["items"].back()["body"]) == "third answer");
  // The undone compaction is off the chain; the second one is on it.
  CHECK(Checkpoints(details).size() == 1);
}

TEST_CASE("compact: remote manual compaction and its undo; bad arguments are refused clearly") {
  const ManualCompactSetup m = ForManualCompact(Measure());
  const std::string script = std::string(R"({"responses": [)") + kSmallCall + "," +
                             Quoted(m.answer) + R"(, "second answer"]})";
  auto env = MakeEnv(script, m.config);
  auto run1 = RunOk(*env, {"exec", "first question"});
  const std::string id = SessionIdFromBanner(run1.err);
  const Json before = env->server().requests_to("/responses").back().InputItems();

  RunOk(*env, With(kRemote, {"compact", id}));
  REQUIRE(env->server().requests_to("/responses/compact").size() == 1);
  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("mode", "") == "remote");
  RunOk(*env, {"compact", "undo", id});

  auto run2 = RunOk(*env, With(kRemote, {"exec", "resume", id, "second question"}));
  CHECK(run2.out == "second answer\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  // Run 1's last input, its answer, the new message: no compaction item.
  const Json input = requests[2].InputItems();
  REQUIRE(input.size() == before.size() + 3);
  CHECK(Slice(input, 0, before.size()) == before);
  CHECK(CountType(input, "compaction") == 0);
  CHECK_THAT(Text(input[before.size() + 1]), Catch::StartsWith("<context_budget>"));
  CHECK(IsUserText(input.back(), "second question"));

  auto unknown = Run(*env, {"compact", "0000-no-such-session"});
  CHECK(unknown.exit_code != 0);
  CHECK(e2e::ErrorLines(unknown.err).size() == 1);
  CHECK_THAT(unknown.err, Catch::Contains("0000-no-such-session"));
  auto missing = Run(*env, {"compact"});
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("session id or --last"));
  auto undo_unknown = Run(*env, {"compact", "undo", "0000-no-such-session"});
  CHECK(undo_unknown.exit_code != 0);
  CHECK(e2e::ErrorLines(undo_unknown.err).size() == 1);
  // Nothing was sent for the refused commands.
  CHECK(env->server().requests().size() == 4);
}

// ---------------------------------------------------------------------------
// 6. Fork and resume after a compaction.

TEST_CASE("fork and resume after a compaction start from the compacted view") {
  const Footprint& f = Measure();
  const ManualCompactSetup m = ForManualCompact(f);
  const std::string script =
      std::string(R"({"responses": [)") + kSmallCall + "," + Quoted(m.answer) + R"(,
    "SUMMARY-F", "fork answer", "fork two answer", "main answer"]})";
  auto env = MakeEnv(script, m.config);
  auto run1 = RunOk(*env, {"exec", "first question"});
  const std::string id = SessionIdFromBanner(run1.err);
  auto compact = RunOk(*env, {"compact", "--last"});
  CHECK_THAT(compact.out, Catch::Contains("compacted session " + id));

  const size_t n = f.context.size();
  const Json context = Slice(env->server().requests_to("/responses")[0].InputItems(), 0, n);
  auto compacted_then = [&](const RecordedRequest& r, const std::string& prompt) {
    const Json input = r.InputItems();
    INFO("input: " << input.dump().substr(0, 3000));
    REQUIRE(input.size() == n + 4);
    CHECK(Slice(input, 0, n) == context);
    CHECK(IsUserText(input[n], "first question"));
    // The frontier survives the fork and the resume: the first question was answered.
    CHECK_THAT(Text(input[n + 1]), Catch::StartsWith("<working_state>") &&
                                       Catch::Contains("- [answered] first question\n"));
    CHECK(IsUserText(input[n + 2], std::string(compaction::kSummaryPrefix) + "SUMMARY-F"));
    CHECK(IsUserText(input[n + 3], prompt));
  };

  auto fork1 = RunOk(*env, {"exec", "fork", id, "branch one"});
  CHECK(fork1.out == "fork answer\n");
  const std::string fork1_id = SessionIdFromBanner(fork1.err);
  CHECK(fork1_id != id);

  auto fork2 = RunOk(*env, {"fork", id});
  std::string fork2_id = fork2.out;
  while (!fork2_id.empty() && fork2_id.back() == '\n') fork2_id.pop_back();
  REQUIRE(fork2_id.size() == 36);
  auto run_fork2 = RunOk(*env, {"exec", "resume", fork2_id, "branch two"});
  CHECK(run_fork2.out == "fork two answer\n");

  auto resumed = RunOk(*env, {"exec", "resume", id, "on main"});
  CHECK(resumed.out == "main answer\n");

  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 6);
  compacted_then(requests[3], "branch one");
  compacted_then(requests[4], "branch two");
  compacted_then(requests[5], "on main");
  // A fork keeps its parent's prompt_cache_key (codex exec fork and codex
  // fork alike): the prefix they share is served from the provider's cache.
  CheckWireRules(requests[3], id);
  CheckWireRules(requests[4], id);
  CheckWireRules(requests[5], id);
}

// ---------------------------------------------------------------------------
// 7. A long tool loop under a small window: real room, no loop.

namespace {

size_t Count(const Json& input, bool (*pred)(const Json&)) {
  size_t n = 0;
  for (const auto& item : input) n += pred(item) ? 1 : 0;
  return n;
}

// 150 shell calls printing 3,000 bytes each under a 12,000-token window
// (server and config). Local mode: every answer carries a call and a short
// message, so a summary request (which gets the next entry) finds its summary
// in the message and a turn request runs the call.
enum class LoopMode { kLocal, kEndpoint, kInlineTrigger };

bool IsInlineCompaction(const RecordedRequest& r) {
  const Json input = r.InputItems();
  return !input.empty() && input.back().value("type", "") == "compaction_trigger";
}

void LongLoop(LoopMode mode) {
  const bool remote = mode != LoopMode::kLocal;
  constexpr int64_t kWindow = 12'000;
  constexpr int64_t kLimit = kWindow * 90 / 100;
  constexpr int kEntries = 150;
  const std::string call = BigOutputCall(3000);
  const std::string entry =
      remote ? call : call.substr(0, call.size() - 1) + R"(, "message": "progress note {{n}}"})";
  const std::string script = R"({"max_input_tokens": 12000, "responses": [
    {"repeat": )" + std::to_string(kEntries) +
                             R"(, "entries": [)" + entry + R"(]}],
    "default": "all calls done"})";
  // Sized for the fixed part without the sub-agent tools.
  auto env = MakeEnv(script, std::string("model_context_window = 12000\n") + kNoAgents);
  std::vector<std::string> args = {"exec", "run the loop"};
  if (mode == LoopMode::kEndpoint) args = With(kRemote, args);
  if (mode == LoopMode::kInlineTrigger) args = With(kInline, args);
  auto run = env->RunCodex(args, std::nullopt, std::chrono::seconds(120));
  REQUIRE(run.ok());
  INFO("stderr: " << run->err.substr(run->err.size() > 3000 ? run->err.size() - 3000 : 0));
  REQUIRE_FALSE(run->timed_out);
  CHECK(run->exit_code == 0);
  CHECK(run->out == "all calls done\n");

  const std::string id = SessionIdFromBanner(run->err);
  size_t compactions = 0;
  bool compacted = false;  // a compaction happened before this request
  bool ever_compacted = false;
  std::string compaction_item;  // the newest compaction item as first resent
  for (const auto& r : env->server().requests()) {
    INFO("request " << r.path << " " << r.body_bytes << " bytes, " << r.outcome);
    CHECK(r.status == 200);
    CHECK(Tokens(r.body_bytes) <= kWindow);
    const bool compact_endpoint =
        r.path.size() >= 8 && r.path.compare(r.path.size() - 8, 8, "/compact") == 0;
    if (compact_endpoint || IsSummaryRequest(r) || IsInlineCompaction(r)) {
      CHECK(compact_endpoint == (mode == LoopMode::kEndpoint));
      CHECK(IsInlineCompaction(r) == (mode == LoopMode::kInlineTrigger));
      ++compactions;
      compacted = ever_compacted = true;
      continue;
    }
    CHECK(r.outcome == "completed");
    CheckWireRules(r, id);
    const Json input = r.InputItems();
    // The task stays in view exactly once; one summary at most.
    CHECK(Count(input, [](const Json& i) { return IsUserText(i, "run the loop"); }) == 1);
    if (!remote && ever_compacted) CHECK(Count(input, IsSummaryItem) == 1);
    // The compaction item is resent byte-identical on every request until the next compaction.
    if (remote && ever_compacted) {
      CHECK(CountType(input, "compaction") == 1);
      for (const auto& item : input) {
        if (item.value("type", "") != "compaction") continue;
        if (compacted) {
          CHECK(item.dump() != compaction_item);  // a new one
          compaction_item = item.dump();
        }
        CHECK(item.dump() == compaction_item);
      }
    }
    if (compacted) {
      // Right after a compaction: at most half the trigger; the summary (or
      // the compaction item) last, the task before it (the working state
      // between them), except that /responses/compact's output keeps the
      // server's order, the task after it.
      CHECK(Tokens(input.dump().size()) <= kLimit / 2);
      if (mode == LoopMode::kEndpoint) {
        CHECK(IsUserText(input.back(), "run the loop"));
      } else {
        CHECK((mode == LoopMode::kLocal ? IsSummaryItem(input.back())
                                        : input.back().value("type", "") == "compaction"));
        const auto task = std::find_if(input.begin(), input.end(),
                                       [](const Json& i) { return IsUserText(i, "run the loop"); });
        REQUIRE(task != input.end());
        CHECK(input.end() - task <= 3);
      }
      CHECK(CountType(input, "function_call") == 0);
      compacted = false;
    }
  }
  // Every entry was used once: by a turn request (a call ran) or a summary.
  const auto served = env->server().responses_served();
  CHECK(served == static_cast<uint64_t>(kEntries) + 1);
  CHECK(compactions >= 1);
  CHECK(compactions <= 15);
}

}  // namespace

TEST_CASE("150 calls under a 12,000-token window, endpoint: none over it, at most 15 compactions") {
  LongLoop(LoopMode::kEndpoint);
}

TEST_CASE("150 calls under a 12,000-token window, inline: none over it, at most 15 compactions") {
  LongLoop(LoopMode::kInlineTrigger);
}

TEST_CASE("150 calls under a 12,000-token window, local: none over it, at most 15 compactions") {
  LongLoop(LoopMode::kLocal);
}

// ---------------------------------------------------------------------------
// 8. --json events.

TEST_CASE("--json: a compaction event and context_left_percent on turn.completed") {
  const Footprint& f = Measure();
  const int64_t limit = LimitFor(f, 1700);
  const int64_t window = limit * 2;
  const size_t out_bytes = static_cast<size_t>((limit - f.fixed_tokens) * 4 * 65 / 100);
  const std::string script = std::string(R"({"responses": [)") + BigOutputCall(out_bytes) + "," +
                             BigOutputCall(out_bytes) + R"(, "json done"]})";
  auto env = MakeEnv(
      script, LimitConfig(limit) + "model_context_window = " + std::to_string(window) + "\n");
  auto run = RunOk(*env, With(kRemote, {"exec", "--json", "do work"}));
  auto events = JsonLines(run.out);
  REQUIRE_FALSE(events.empty());
  CHECK(events.front().value("type", "") == "thread.started");

  int compaction_at = -1, completed_at = -1;
  Json compaction_event, completed;
  for (size_t i = 0; i < events.size(); ++i) {
    REQUIRE(events[i].is_object());
    const std::string type = events[i].value("type", "");
    if (type == "compaction") {
      CHECK(compaction_at == -1);
      compaction_at = static_cast<int>(i);
      compaction_event = events[i];
    } else if (type == "turn.completed") {
      completed_at = static_cast<int>(i);
      completed = events[i];
    }
  }
  INFO("stdout: " << run.out);
  REQUIRE(compaction_at > 0);
  REQUIRE(completed_at > compaction_at);
  CHECK(compaction_event.value("mode", "") == "remote");
  CHECK(compaction_event.value("trigger", "") == "auto");
  CHECK(compaction_event.value("tokens_before", 0) > compaction_event.value("tokens_after", 0));
  CHECK(compaction_event.value("tokens_after", 0) > 0);
  CHECK(compaction_event.value("dropped_items", -1) == 0);
  CHECK(compaction_event.value("kept", "") == "1 task (1 in progress), last command `head -c " +
                                                  std::to_string(out_bytes) +
                                                  " /dev/zero | tr '\\0' x` exit 0");

  // context_left_percent: what the last request left of the window (its
  // input tokens as the server counted them, plus a few output tokens).
  REQUIRE(completed.contains("context_left_percent"));
  REQUIRE(completed["context_left_percent"].is_number_integer());
  const int percent = completed["context_left_percent"].get<int>();
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  REQUIRE(env->server().requests_to("/responses/compact").size() == 1);
  // Mid-turn remote compaction: initial context, the compaction item, the task last.
  const size_t n = f.context.size();
  const Json input = requests[2].InputItems();
  REQUIRE(input.size() == n + 3);
  CHECK(Slice(input, 0, n) == Slice(requests[0].InputItems(), 0, n));
  CHECK(input[n].value("type", "") == "compaction");
  CHECK_THAT(Text(input[n + 1]), Catch::StartsWith("<working_state>"));
  CHECK(IsUserText(input[n + 2], "do work"));
  const int64_t used = Tokens(requests.back().body_bytes);
  const int64_t expected = 100 - used * 100 / window;
  CHECK(percent <= expected);
  CHECK(percent >= expected - 2);
  CHECK(percent > 0);
  CHECK(percent < 100);
}

// ---------------------------------------------------------------------------
// 9. Resume-aware: the estimate of a new process starts from the server's count.

namespace {

// A reported total far above `limit` for a transcript whose bytes are far below it.
int64_t ReportedOver(int64_t limit) { return std::max<int64_t>(30'100, limit * 6); }

}  // namespace

TEST_CASE("resume: a turn the server counted over the limit is compacted before the next request") {
  const Footprint& f = Measure();
  const int64_t limit = std::max<int64_t>(5'000, LimitFor(f, 700));
  const int64_t reported = ReportedOver(limit);
  const std::string script = R"({"responses": [
    {"message": "first answer", "usage": {"input_tokens": )" +
                             std::to_string(reported - 100) + R"(, "output_tokens": 100}},
    "SUMMARY-RESUME", "second answer", "third answer"]})";
  auto env = MakeEnv(script, LimitConfig(limit));

  auto run1 = RunOk(*env, {"exec", "first question"});
  const std::string id = SessionIdFromBanner(run1.err);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  // By its bytes the session is far under the limit: only the stored count can trigger.
  REQUIRE(Tokens(requests[0].body_bytes) + 100 < limit);

  // A new process: `exec resume --last` compacts before its request.
  auto run2 = RunOk(*env, {"exec", "resume", "--last", "second question"});
  CHECK(run2.out == "second answer\n");
  CHECK_THAT(run2.err, Catch::Contains("compacted the conversation"));
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  REQUIRE(IsSummaryRequest(requests[1]));
  CHECK(InputExtends(requests[0], requests[1]));
  const Json input = requests[2].InputItems();
  REQUIRE(input.size() >= 2);
  CHECK(IsSummaryItem(input[input.size() - 2]));
  CHECK(IsUserText(input.back(), "second question"));
  CheckAllWireRules(*env, id);

  // The count stored before the compaction is not on the new view: the next
  // resume starts from the last (small) count and does not compact again.
  auto run3 = RunOk(*env, {"exec", "resume", "--last", "third question"});
  CHECK(run3.out == "third answer\n");
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CHECK_FALSE(IsSummaryRequest(requests[3]));
  CHECK(InputExtends(requests[2], requests[3]));
  CHECK(Checkpoints(ShowJson(*env, id)).size() == 1);
}

TEST_CASE("resume: files written through the shell tool survive the compaction") {
  const Footprint& f = Measure();
  const int64_t limit = std::max<int64_t>(5'000, LimitFor(f, 700));
  const std::string script = R"({"responses": [
    {"output": [{"shell": ["bash", "-lc", "echo hi > notes.txt && sed -i s/hi/ho/ notes.txt"]}]},
    {"output": [{"shell": ["mv", "notes.txt", "done.txt"]}]},
    {"message": "first answer", "usage": {"input_tokens": )" +
                             std::to_string(ReportedOver(limit)) + R"(, "output_tokens": 10}},
    "SUMMARY-SHELL", "second answer"]})";
  auto env = MakeEnv(script, LimitConfig(limit));
  auto run1 = RunOk(*env, {"exec", "--full-auto", "write the notes"});
  const std::string id = SessionIdFromBanner(run1.err);
  auto run2 = RunOk(*env, {"exec", "resume", "--last", "second question"});
  CHECK(run2.out == "second answer\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 5);
  REQUIRE(IsSummaryRequest(requests[3]));
  // After the compaction no call is left, but the working state names the files.
  const Json input = requests[4].InputItems();
  CHECK(CountType(input, "function_call") == 0);
  std::string state;
  for (const auto& item : input) {
    const std::string text = item.dump();
    if (text.find("<working_state>") != std::string::npos) state = text;
  }
  INFO(input.dump().substr(0, 3000));
  CHECK_THAT(state, Catch::Contains("notes.txt"));
  CHECK_THAT(state, Catch::Contains("done.txt"));
  CheckAllWireRules(*env, id);
}

TEST_CASE("sessions show: context fill starts from the server's stored count, not the bytes") {
  const Footprint& f = Measure();
  const int64_t limit = std::max<int64_t>(5'000, LimitFor(f, 700));
  const int64_t reported = ReportedOver(limit);
  const std::string script = R"({"responses": [
    {"message": "first answer", "usage": {"input_tokens": )" +
                             std::to_string(reported - 100) + R"(, "output_tokens": 100}},
    "SUMMARY-SHOW", "second answer"]})";
  auto env = MakeEnv(
      script, LimitConfig(limit) + "model_context_window = " + std::to_string(reported * 2) + "\n");
  auto run1 = RunOk(*env, {"exec", "first question"});
  const std::string id = SessionIdFromBanner(run1.err);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  REQUIRE(Tokens(requests[0].body_bytes) * 4 < reported);  // the bytes say far less

  // The server counted `reported` for the request and its answer: that is the fill.
  Json context = ShowJson(*env, id)["context"];
  INFO(context.dump());
  CHECK(context.value("from_reported_usage", false));
  CHECK(context.value("estimated_tokens", int64_t{0}) == reported);
  CHECK(context.value("context_window", int64_t{0}) == reported * 2);
  CHECK(context.value("context_left_percent", -1) == 50);
  auto plain = RunOk(*env, {"sessions", "show", id});
  CHECK_THAT(plain.out, Catch::Contains("~" + std::to_string(reported) + " tokens"));
  CHECK_THAT(plain.out, Catch::Contains("the server's last count"));

  // After the compaction the stored count is not on the new view: the fill
  // restarts from the count of the request that followed it, plus the answer.
  RunOk(*env, {"exec", "resume", "--last", "second question"});
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  context = ShowJson(*env, id)["context"];
  CHECK(context.value("estimated_tokens", int64_t{0}) < limit);
  CHECK(context.value("estimated_tokens", int64_t{0}) >= Tokens(requests[2].body_bytes) / 2);
}

TEST_CASE("resume: inline compaction from a new process, then the history only grows") {
  const Footprint& f = Measure();
  const int64_t limit = std::max<int64_t>(5'000, LimitFor(f, 700));
  const std::string script = R"({"responses": [
    {"message": "first answer", "usage": {"input_tokens": )" +
                             std::to_string(ReportedOver(limit)) + R"(, "output_tokens": 10}},
    "second answer", "third answer"]})";
  auto env = MakeEnv(script, LimitConfig(limit));
  auto run1 = RunOk(*env, With(kInline, {"exec", "first question"}));
  const std::string id = SessionIdFromBanner(run1.err);
  auto run2 = RunOk(*env, With(kInline, {"exec", "resume", "--last", "second question"}));
  CHECK(run2.out == "second answer\n");
  auto run3 = RunOk(*env, With(kInline, {"exec", "resume", "--last", "third question"}));
  CHECK(run3.out == "third answer\n");

  CHECK(env->server().requests_to("/responses/compact").empty());
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  CheckAllWireRules(*env, id);
  // The compaction request is the session's request with the trigger appended:
  // every other field equal, the input extended by exactly the trigger.
  const RecordedRequest& compaction = requests[1];
  const Json trigger_input = compaction.InputItems();
  REQUIRE_FALSE(trigger_input.empty());
  CHECK(trigger_input.back() == Json{{"type", "compaction_trigger"}});
  for (const auto& [key, value] : requests[0].body.items()) {
    if (key != "input") CHECK(compaction.body[key] == value);
  }
  CHECK(InputExtends(requests[0], compaction));
  CHECK(trigger_input.size() == requests[0].InputItems().size() + 2);  // + answer + trigger

  // After it: initial context, the real user message, the compaction item
  // (without its id), the new message; then the next request extends it.
  const size_t n = f.context.size();
  const Json input2 = requests[2].InputItems();
  INFO("after compaction: " << input2.dump().substr(0, 3000));
  REQUIRE(input2.size() == n + 4);
  CHECK(Slice(input2, 0, n) == Slice(requests[0].InputItems(), 0, n));
  CHECK(IsUserText(input2[n], "first question"));
  CHECK_THAT(Text(input2[n + 1]), Catch::StartsWith("<working_state>") &&
                                      Catch::Contains("- [answered] first question\n"));
  CHECK(input2[n + 2].value("type", "") == "compaction");
  CHECK_FALSE(input2[n + 2].contains("id"));
  CHECK(IsUserText(input2[n + 3], "second question"));
  CHECK(InputExtends(requests[2], requests[3]));
  CHECK(requests[3].InputItems()[n + 2].dump() == input2[n + 2].dump());

  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("mode", "") == "inline");
}

TEST_CASE("inline compaction refused by the server: the legacy endpoint compacts instead") {
  const Footprint& f = Measure();
  const int64_t limit = std::max<int64_t>(5'000, LimitFor(f, 700));
  const std::string script = R"({"inline_compaction": false, "responses": [
    {"message": "first answer", "usage": {"input_tokens": )" +
                             std::to_string(ReportedOver(limit)) + R"(, "output_tokens": 10}},
    "second answer"]})";
  auto env = MakeEnv(script, LimitConfig(limit));
  auto run1 = RunOk(*env, With(kInline, {"exec", "first question"}));
  const std::string id = SessionIdFromBanner(run1.err);
  auto run2 = RunOk(*env, With(kInline, {"exec", "resume", id, "second question"}));
  CHECK(run2.out == "second answer\n");

  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(requests[1].status == 400);  // the trigger, refused
  CHECK(requests[1].InputItems().back() == Json{{"type", "compaction_trigger"}});
  CHECK(requests[2].status == 200);
  auto compacts = env->server().requests_to("/responses/compact");
  REQUIRE(compacts.size() == 1);
  CHECK(compacts[0].status == 200);
  const Json input = requests[2].InputItems();
  REQUIRE(input.size() >= 3);
  CHECK(input[input.size() - 3].value("type", "") == "compaction");
  CHECK_THAT(Text(input[input.size() - 2]), Catch::StartsWith("<working_state>"));
  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0].value("mode", "") == "remote");
}

TEST_CASE("resume: an imported Codex rollout's token_count seeds the estimate") {
  const Footprint& f = Measure();
  const int64_t limit = std::max<int64_t>(5'000, LimitFor(f, 700));
  const int64_t reported = ReportedOver(limit);
  auto env = MakeEnv(R"(["SUMMARY-IMPORT", "answer after import"])", LimitConfig(limit));
  const std::string id = "01a1fca2-b9b2-7d01-a05c-8304d3c1a78c";
  const std::string usage = R"({"input_tokens":)" + std::to_string(reported - 100) +
                            R"(,"cached_input_tokens":0,"output_tokens":100,)"
                            R"("reasoning_output_tokens":0,"total_tokens":)" +
                            std::to_string(reported) + "}";
  const std::string rollout =
      R"({"timestamp":"2026-11-21T05:44:43.610Z","type":"session_meta","payload":{"id":")" + id +
      R"(","timestamp":"2026-11-21T05:44:43.571Z","cwd":"/home/user/project","originator":"codex_exec","cli_version":"0.169.0","source":"exec","model_provider":"scripted"}})"
      "\n"
      R"({"timestamp":"2026-11-21T05:44:44.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"imported question"}]}})"
      "\n"
      R"({"timestamp":"2026-11-21T05:44:45.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"imported answer"}]}})"
      "\n"
      R"({"timestamp":"2026-11-21T05:44:45.416Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":)" +
      usage + R"(,"last_token_usage":)" + usage + R"(,"model_context_window":38000}}})" + "\n";
  const std::filesystem::path file = env->codex_home().parent_path() / "rollout-import.jsonl";
  {
    std::ofstream out(file);
    out << rollout;
  }
  RunOk(*env, {"sessions", "import", file.string()});
  auto run = RunOk(*env, {"exec", "resume", id, "next question"});
  CHECK(run.out == "answer after import\n");
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  REQUIRE(IsSummaryRequest(requests[0]));
  CHECK(Tokens(requests[0].body_bytes) < limit);  // its bytes alone would not have triggered
  const Json input = requests[1].InputItems();
  REQUIRE(input.size() >= 3);
  CHECK(IsUserText(input.back(), "next question"));
  CHECK(IsSummaryItem(input[input.size() - 2]));
  bool kept = false;
  for (const auto& item : input) kept = kept || IsUserText(item, "imported question");
  CHECK(kept);
}

TEST_CASE("fork at an earlier turn: the estimate comes from that turn's count, not the head's") {
  // Turn 2 is counted far over the limit; turn 3 runs under a raised limit,
  // so nothing is compacted and the head's newest count (turn 3's) is small.
  // A fork at turn 2 starts from turn 2's count: a new process compacts
  // before the fork's first request. The main session, resumed from its
  // head, does not compact.
  const Footprint& f = Measure();
  const int64_t limit = std::max<int64_t>(5'000, LimitFor(f, 700));
  const int64_t reported = ReportedOver(limit);
  const std::string script = R"({"responses": [
    "first answer",
    {"message": "second answer", "usage": {"input_tokens": )" +
                             std::to_string(reported - 100) + R"(, "output_tokens": 100}},
    "third answer", "SUMMARY-FORK", "fork answer", "main answer"]})";
  auto env = MakeEnv(script, LimitConfig(limit));
  auto run1 = RunOk(*env, {"exec", "first question"});
  const std::string id = SessionIdFromBanner(run1.err);
  RunOk(*env, {"exec", "resume", id, "second question"});
  const std::vector<std::string> raised = {
      "-c", "model_auto_compact_token_limit=" + std::to_string(reported * 2), "-c",
      "model_context_window=" + std::to_string(reported * 4)};
  RunOk(*env, With(raised, {"exec", "resume", id, "third question"}));
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  for (const auto& r : requests) REQUIRE_FALSE(IsSummaryRequest(r));

  auto fork = RunOk(*env, {"exec", "fork", id, "--at-turn", "2", "fork question"});
  CHECK(fork.out == "fork answer\n");
  CHECK_THAT(fork.err, Catch::Contains("compacted the conversation"));
  const std::string fork_id = SessionIdFromBanner(fork.err);
  CHECK(fork_id != id);
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 5);
  REQUIRE(IsSummaryRequest(requests[3]));
  // The summary request holds the fork's view: turns 1 and 2, not turn 3.
  const std::string summarised = requests[3].InputItems().dump();
  CHECK(summarised.find("second answer") != std::string::npos);
  CHECK(summarised.find("third question") == std::string::npos);
  const Json input = requests[4].InputItems();
  REQUIRE(input.size() >= 2);
  CHECK(IsSummaryItem(input[input.size() - 2]));
  CHECK(IsUserText(input.back(), "fork question"));
  CheckWireRules(requests[3], id);  // a fork keeps its parent's prompt_cache_key
  CheckWireRules(requests[4], id);

  auto main = RunOk(*env, {"exec", "resume", id, "main question"});
  CHECK(main.out == "main answer\n");
  CHECK_THAT(main.err, !Catch::Contains("compacted the conversation"));
  requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 6);
  CHECK_FALSE(IsSummaryRequest(requests[5]));
  CHECK(InputExtends(requests[2], requests[5]));
  CHECK(Checkpoints(ShowJson(*env, id)).empty());
}

// ---------------------------------------------------------------------------
// 10. Nothing grows, nothing needless.

TEST_CASE("compact: a session under half the limit says so and changes nothing") {
  auto env = MakeEnv(R"(["first answer"])");
  auto run1 = RunOk(*env, {"exec", "first question"});
  const std::string id = SessionIdFromBanner(run1.err);
  const Json before = ShowJson(*env, id);
  auto compact = RunOk(*env, {"compact", id});
  CHECK_THAT(compact.out, Catch::Contains("not compacted"));
  CHECK_THAT(compact.err, Catch::Contains("under half the auto-compact limit"));
  CHECK(env->server().requests_to("/responses").size() == 1);
  CHECK(env->server().requests_to("/responses/compact").empty());
  const Json after = ShowJson(*env, id);
  CHECK(after["items"] == before["items"]);
  CHECK(Checkpoints(after).empty());
}

TEST_CASE("compact twice in a row: the second finds nothing to do, no summary of a summary") {
  const ManualCompactSetup m = ForManualCompact(Measure());
  const std::string script = std::string(R"({"responses": [)") + kSmallCall + "," +
                             Quoted(m.answer) + R"(, "SUMMARY-ONCE", "never sent"]})";
  auto env = MakeEnv(script, m.config);
  auto run1 = RunOk(*env, {"exec", "first question"});
  const std::string id = SessionIdFromBanner(run1.err);
  auto first = RunOk(*env, {"compact", id});
  CHECK_THAT(first.out, Catch::Contains("compacted session " + id));
  const Json after_first = ShowJson(*env, id);
  REQUIRE(Checkpoints(after_first).size() == 1);

  auto second = RunOk(*env, {"compact", id});
  CHECK_THAT(second.out, Catch::Contains("not compacted"));
  CHECK_THAT(second.err, Catch::Contains("under half the auto-compact limit"));
  CHECK(env->server().requests_to("/responses").size() == 3);  // no second summary request
  const Json after_second = ShowJson(*env, id);
  CHECK(after_second["items"] == after_first["items"]);
}

TEST_CASE(
    "resume: a server count far above the bytes compacts, and the report never shows growth") {
  // The stored count (30k+) says the session is over the limit although its
  // items are a few hundred bytes; the summary is longer than those items.
  // Before and after are reported as the trigger compared them.
  const Footprint& f = Measure();
  const int64_t limit = std::max<int64_t>(5'000, LimitFor(f, 700));
  const int64_t reported = ReportedOver(limit);
  const std::string summary = "SUMMARY-LONGER " + std::string(1'500, 's');
  const std::string script = R"({"responses": [
    {"message": "ok", "usage": {"input_tokens": )" +
                             std::to_string(reported - 100) + R"(, "output_tokens": 100}},
    )" + Quoted(summary) + R"(, "second answer"]})";
  auto env = MakeEnv(script, LimitConfig(limit));
  auto run1 = RunOk(*env, {"exec", "hi"});
  const std::string id = SessionIdFromBanner(run1.err);
  auto run2 = RunOk(*env, {"exec", "--json", "resume", "--last", "second question"});
  CHECK(run2.out.find("second answer") != std::string::npos);
  auto checkpoints = Checkpoints(ShowJson(*env, id));
  REQUIRE(checkpoints.size() == 1);
  INFO(checkpoints[0].dump());
  const int64_t before = checkpoints[0].value("tokens_before", int64_t{0});
  const int64_t after = checkpoints[0].value("tokens_after", int64_t{0});
  CHECK(before >= reported);
  CHECK(after > 0);
  CHECK(after < before);
  // The --json compaction event says the same.
  bool event = false;
  for (const auto& line : e2e::JsonLines(run2.out)) {
    if (line.dump().find("tokens_before") == std::string::npos) continue;
    event = true;
    CHECK(line.dump().find(std::to_string(before)) != std::string::npos);
  }
  CHECK(event);
}

TEST_CASE("overflow on a tiny session: a compaction that would grow it is not committed") {
  // The server refuses the first request as too long although the session is
  // tiny: the summary history would be bigger than what it replaces.
  auto env = MakeEnv(R"({"responses": [{"failed": "context_length_exceeded"},
    "SUMMARY-TINY: the user said hi and nothing else happened yet, in many words.",
    "answer after retry"]})");
  auto run = RunOk(*env, {"exec", "hi"});
  CHECK(run.out == "answer after retry\n");
  CHECK_THAT(run.err, Catch::Contains("would not shrink"));
  const std::string id = SessionIdFromBanner(run.err);
  CHECK(Checkpoints(ShowJson(*env, id)).empty());
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(requests[2].InputItems() == requests[0].InputItems());  // retried as it was
}

TEST_CASE("overflow on a tiny session, inline and endpoint: a bigger compaction item is refused") {
  // The server's compaction item (3 KB) is larger than the tiny session it
  // would replace: the rebuilt history would grow, so nothing is committed
  // and the request is retried as it was.
  const std::string big = std::string(3'000, 'E');
  const std::string script = R"({"responses": [{"failed": "context_length_exceeded"},
    "answer after retry"], "compact": [{"output": [{"compaction": "big", "encrypted_content": ")" +
                             big + R"("}]}]})";
  for (const auto& mode : {kInline, kRemote}) {
    auto env = MakeEnv(script);
    auto run = RunOk(*env, With(mode, {"exec", "hi"}));
    CHECK(run.out == "answer after retry\n");
    CHECK_THAT(run.err, Catch::Contains("would not shrink"));
    const std::string id = SessionIdFromBanner(run.err);
    CHECK(Checkpoints(ShowJson(*env, id)).empty());
    auto requests = env->server().requests_to("/responses");
    REQUIRE(requests.size() >= 2);
    CHECK(requests.back().InputItems() == requests.front().InputItems());
    CHECK(ShowJson(*env, id).dump().find(big) == std::string::npos);
  }
}

TEST_CASE("config: an unknown compaction mode is refused with one clear line") {
  auto env = MakeEnv(R"(["never used"])");
  auto run = Run(*env, {"-c", "compaction=\"sometimes\"", "exec", "hi"});
  CHECK(run.exit_code != 0);
  CHECK_THAT(run.err, Catch::StartsWith("error: "));
  CHECK_THAT(run.err, Catch::Contains("compaction 'sometimes'"));
  CHECK_THAT(run.err, Catch::Contains("auto, inline, endpoint, local"));
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
  CHECK(env->server().requests().empty());
}

// ---------------------------------------------------------------------------
// 9. The execution frontier (issue 30): what a compaction must never lose,
// written by codex from the stored items, in every mode.

namespace {

// The working-state message (the frontier) of a request's input, "" if none.
std::string FrontierOf(const Json& input) {
  for (const auto& item : input) {
    if (IsMessage(item, "user") && Text(item).rfind("<working_state>", 0) == 0) return Text(item);
  }
  return "";
}

// The /responses requests that are neither a summary request nor an inline
// compaction: what the model was asked to work on.
std::vector<RecordedRequest> TaskRequests(ScriptedServer& server) {
  std::vector<RecordedRequest> out;
  for (const auto& r : server.requests_to("/responses")) {
    if (!IsSummaryRequest(r) && !IsInlineCompaction(r)) out.push_back(r);
  }
  return out;
}

std::string PlanCall(const std::string& a, const std::string& b, const std::string& c = "") {
  std::string plan = R"([{"step":"read the log","status":")" + a +
                     R"("},{"step":"fix the bug","status":")" + b + R"("})";
  if (!c.empty()) plan += R"(,{"step":"test the fix","status":")" + c + R"("})";
  return R"({"output": [{"function_call": "update_plan", "arguments": {"plan": )" + plan + "]}}]}";
}

enum class FrontierMode { kInlineForm, kEndpointForm, kLocalForm };

std::vector<std::string> ModeFlags(FrontierMode mode) {
  if (mode == FrontierMode::kInlineForm) return kInline;
  if (mode == FrontierMode::kEndpointForm) return kRemote;
  return {};
}

// Issue 30's scenario: turn 1 finishes task X ("X-ALPHA done"); turn 2 sets
// a plan, writes a file, runs a failing command and then two commands whose
// outputs force a compaction mid-turn. The first request after the
// compaction must say that X is answered (and how), that Y runs, the plan,
// the file with its last action, the last commands with their exit codes;
// the AGENTS.md rules stay in the initial context.
void FrontierScenario(FrontierMode mode) {
  const Footprint& f = Measure();
  const int64_t limit = LimitFor(f, 2400, 900);
  const size_t out_bytes = static_cast<size_t>((limit - f.fixed_tokens) * 4 * 55 / 100);
  std::string script = R"({"responses": [
    "X-ALPHA done: the parser handles empty input now.",
    )" + PlanCall("in_progress", "pending") +
                       R"(,
    {"output": [{"shell": ["sh", "-c", "echo hi > notes.txt"]}]},
    {"output": [{"shell": ["sh", "-c", "exit 3"]}]},
    )" + BigOutputCall(out_bytes) +
                       "," + BigOutputCall(out_bytes) + ",";
  if (mode == FrontierMode::kLocalForm) script += R"("SUMMARY-FRONTIER: read the log.",)";
  script += R"("Y done", "Z done"]})";
  auto env = MakeEnv(script, LimitConfig(limit));
  {
    std::ofstream agents(env->workdir() / "AGENTS.md");
    agents << "RULE-FRONTIER-42: always run the tests.\n";
  }
  auto run1 = RunOk(*env, With(ModeFlags(mode), {"exec", "--full-auto", "do task X"}));
  const std::string id = SessionIdFromBanner(run1.err);
  auto run2 =
      RunOk(*env, With(ModeFlags(mode), {"exec", "--full-auto", "resume", "--last", "do task Y"}));
  CHECK(run2.out == "Y done\n");
  CHECK_THAT(run2.err, Catch::Contains("compacted the conversation"));
  CHECK_THAT(run2.err, Catch::Contains("kept: 2 tasks (1 answered, 1 in progress), plan 0/2 "
                                       "completed, 1 file, last command `head -c"));

  const auto tasks = TaskRequests(env->server());
  const auto after = std::find_if(tasks.begin(), tasks.end(), [](const RecordedRequest& r) {
    return !FrontierOf(r.InputItems()).empty();
  });
  REQUIRE(after != tasks.end());
  CHECK(after - tasks.begin() == 6);  // turn 1, then the 5 requests of turn 2's loop
  const Json input = after->InputItems();
  INFO("first request after the compaction: " << input.dump().substr(0, 6000));
  // The initial context (permissions, AGENTS.md, environment) as the session began.
  const Json first_input = tasks[0].InputItems();
  const size_t n = first_input.size() - 1;
  CHECK(Slice(input, 0, n) == Slice(first_input, 0, n));
  CHECK(Slice(input, 0, n).dump().find("RULE-FRONTIER-42") != std::string::npos);
  // Both user messages, the summary or the server's compaction item.
  CHECK(Count(input, [](const Json& i) { return IsUserText(i, "do task X"); }) == 1);
  CHECK(Count(input, [](const Json& i) { return IsUserText(i, "do task Y"); }) == 1);
  if (mode == FrontierMode::kLocalForm) {
    CHECK(Count(input, IsSummaryItem) == 1);
  } else {
    CHECK(CountType(input, "compaction") == 1);
  }
  CHECK(CountType(input, "function_call") == 0);
  // The frontier.
  const std::string frontier = FrontierOf(input);
  CHECK_THAT(frontier, Catch::Contains("- [answered] do task X\n  answer: X-ALPHA done: the parser "
                                       "handles empty input now.\n"));
  CHECK_THAT(frontier, Catch::Contains("- [in progress] do task Y\n"));
  CHECK_THAT(frontier, Catch::Contains("Current plan:\n- [in_progress] read the log\n- [pending] "
                                       "fix the bug\n"));
  CHECK_THAT(frontier, Catch::Contains("notes.txt\n"));
  CHECK_THAT(frontier, Catch::Contains("- [written by a command] "));
  CHECK_THAT(frontier, Catch::Contains("- [exit 0] echo hi > notes.txt\n"));
  CHECK_THAT(frontier, Catch::Contains("- [exit 3] exit 3\n"));
  CHECK_THAT(frontier, Catch::Contains("- [exit 0, 2 times] head -c " + std::to_string(out_bytes)));
  CHECK_THAT(frontier, !Catch::Contains("Open processes"));  // none without unified exec
  CheckAllWireRules(*env, id);

  // Shown to the user: `sessions show` (text and --json) and the event.
  auto show = RunOk(*env, {"sessions", "show", id});
  CHECK_THAT(show.out, Catch::Contains("frontier kept by the last compaction"));
  CHECK_THAT(show.out, Catch::Contains("  - [answered] do task X\n"));
  const Json details = ShowJson(*env, id);
  CHECK(details.value("frontier", "") == frontier);
  bool event_seen = false;
  for (const auto& e : details["events"]) {
    if (e.value("type", "") != "compaction") continue;
    event_seen = true;
    CHECK_THAT(e["payload"].value("kept", ""), Catch::Contains("1 answered, 1 in progress"));
  }
  CHECK(event_seen);

  // A resumed session carries the same frontier, byte for byte; the new task
  // comes after it.
  auto run3 = RunOk(*env, With(ModeFlags(mode), {"exec", "resume", "--last", "do task Z"}));
  CHECK(run3.out == "Z done\n");
  const auto all = TaskRequests(env->server());
  CHECK(FrontierOf(all.back().InputItems()) == frontier);
}

// The statuses of a frontier's plan, by step.
std::map<std::string, std::string> PlanStatuses(const std::string& frontier) {
  std::map<std::string, std::string> out;
  const size_t plan = frontier.find("Current plan:\n");
  if (plan == std::string::npos) return out;
  size_t pos = plan + 14;
  while (frontier.compare(pos, 3, "- [") == 0) {
    const size_t close = frontier.find("] ", pos);
    const size_t end = frontier.find('\n', pos);
    out[frontier.substr(close + 2, end - close - 2)] = frontier.substr(pos + 3, close - pos - 3);
    pos = end + 1;
  }
  return out;
}

int StatusRank(const std::string& status) {
  return status == "completed" ? 2 : status == "in_progress" ? 1 : 0;
}

}  // namespace

TEST_CASE(
    "frontier, inline: after a mid-turn compaction X is answered, Y runs, plan, files, "
    "commands") {
  FrontierScenario(FrontierMode::kInlineForm);
}

TEST_CASE(
    "frontier, endpoint: after a mid-turn compaction X is answered, Y runs, plan, files, "
    "commands") {
  FrontierScenario(FrontierMode::kEndpointForm);
}

TEST_CASE(
    "frontier, local: after a mid-turn compaction X is answered, Y runs, plan, files, "
    "commands") {
  FrontierScenario(FrontierMode::kLocalForm);
}

TEST_CASE(
    "frontier: three compactions in one task; finished stays finished, the plan never "
    "goes back") {
  const Footprint& f = Measure();
  const int64_t limit = LimitFor(f, 2400, 900);
  const size_t out_bytes = static_cast<size_t>((limit - f.fixed_tokens) * 4 * 55 / 100);
  const std::string big = BigOutputCall(out_bytes);
  const std::string script =
      R"({"responses": [
    "X-ALPHA done.",
    )" +
      PlanCall("in_progress", "pending", "pending") + "," + big + "," + big + "," + big + "," +
      PlanCall("completed", "in_progress", "pending") + "," + big + "," + big + "," + big + "," +
      PlanCall("completed", "completed", "in_progress") + "," + big + "," + big + "," + big + "," +
      big + "," + PlanCall("completed", "completed", "completed") + R"(,
    "Y done"]})";
  auto env = MakeEnv(script, LimitConfig(limit));
  auto run1 = RunOk(*env, With(kInline, {"exec", "do task X"}));
  const std::string id = SessionIdFromBanner(run1.err);
  auto run2 = RunOk(*env, With(kInline, {"exec", "--json", "resume", "--last", "do task Y"}));
  CHECK_THAT(run2.out, Catch::Contains("Y done"));

  int compactions = 0;
  std::string previous;
  std::map<std::string, std::string> previous_plan;
  for (const auto& r : TaskRequests(env->server())) {
    const std::string frontier = FrontierOf(r.InputItems());
    if (frontier.empty() || frontier == previous) continue;
    ++compactions;
    INFO("frontier after compaction " << compactions << ":\n" << frontier);
    // X stays answered, with its answer; Y runs until the end of the turn.
    CHECK_THAT(frontier, Catch::Contains("- [answered] do task X\n  answer: X-ALPHA done.\n"));
    CHECK_THAT(frontier, Catch::Contains("- [in progress] do task Y\n"));
    CHECK(Count(r.InputItems(), [](const Json& i) { return IsUserText(i, "do task X"); }) == 1);
    const auto plan = PlanStatuses(frontier);
    CHECK(plan.size() == 3);
    for (const auto& [step, status] : previous_plan) {
      REQUIRE(plan.count(step) == 1);
      CHECK(StatusRank(plan.at(step)) >= StatusRank(status));
    }
    previous_plan = plan;
    previous = frontier;
  }
  CHECK(compactions >= 3);
  // The plan moved forward across them.
  CHECK(previous_plan["read the log"] == "completed");
  // --json: every compaction event says what was kept.
  int events = 0;
  for (const auto& e : JsonLines(run2.out)) {
    if (e.value("type", "") != "compaction") continue;
    ++events;
    CHECK_THAT(e.value("kept", ""), Catch::Contains("2 tasks (1 answered, 1 in progress)"));
  }
  CHECK(events == compactions);
  CheckAllWireRules(*env, id);
}

TEST_CASE("boundaries: above the soft limit compaction waits for a completed plan step") {
  const Footprint& f = Measure(/*agents=*/false);
  const int64_t limit = LimitFor(f, 2400, 900);
  const int64_t soft = limit - 1400;
  // One output takes usage between the soft limit and the limit.
  const size_t out_bytes = static_cast<size_t>((limit - 700 - f.fixed_tokens - 150) * 4);
  const std::string script = R"({"responses": [
    )" + PlanCall("in_progress", "pending") +
                             "," + BigOutputCall(out_bytes) + "," + kSmallCall + "," +
                             PlanCall("completed", "in_progress") + R"(,
    "done"]})";
  auto env = MakeEnv(script, LimitConfig(limit) + "model_auto_compact_soft_token_limit = " +
                                 std::to_string(soft) + "\n" + kNoAgents);
  auto run = RunOk(*env, With(kInline, {"exec", "do the work"}));
  CHECK(run.out == "done\n");
  const auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 6);
  // plan, big output, small call, plan step completed: only then the compaction.
  for (size_t i = 0; i < 4; ++i) CHECK_FALSE(IsInlineCompaction(requests[i]));
  CHECK(Tokens(requests[3].body_bytes) >= soft);  // above the soft limit ...
  CHECK(Tokens(requests[3].body_bytes) < limit);  // ... under the limit: it waited
  CHECK(IsInlineCompaction(requests[4]));
  CHECK(!FrontierOf(requests[5].InputItems()).empty());
  CHECK(Checkpoints(ShowJson(*env, SessionIdFromBanner(run.err))).size() == 1);
}

TEST_CASE("config: a soft compaction limit that is not a positive number is refused clearly") {
  auto env = MakeEnv(R"(["never"])", "model_auto_compact_soft_token_limit = 0\n");
  auto run = Run(*env, {"exec", "hi"});
  CHECK(run.exit_code != 0);
  CHECK_THAT(run.err, Catch::Contains("model_auto_compact_soft_token_limit must be positive"));
  CHECK(env->server().requests_to("/responses").empty());
}

}  // namespace codex::testing
