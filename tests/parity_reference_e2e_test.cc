// Codex parity against tests/data/reference/codex-0.169 (issue 13): exported
// rollouts have the line shapes and session_meta fields of the rollouts the
// real Codex 0.169 wrote (so it lists and resumes them), and `exec --json`
// events have the shapes its README records.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/files.h"
#include "testing/test_data.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::RunOk;

fs::path ReferenceDir() { return codex::testing::TestData("reference/codex-0.169"); }

// Every line of every reference rollout.
std::vector<Json> ReferenceLines() {
  std::vector<Json> lines;
  for (const auto& e : fs::directory_iterator(ReferenceDir() / "rollouts")) {
    if (e.path().extension() != ".jsonl") continue;
    for (auto& j : JsonLines(ReadFile(e.path()))) lines.push_back(std::move(j));
  }
  REQUIRE_FALSE(lines.empty());
  return lines;
}

std::set<std::string> Keys(const Json& j) {
  std::set<std::string> out;
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) out.insert(k);
  }
  return out;
}

// The keys every reference line of `type` has in its payload.
std::set<std::string> CommonPayloadKeys(const std::vector<Json>& reference,
                                        const std::string& type) {
  std::optional<std::set<std::string>> common;
  for (const auto& line : reference) {
    if (line.value("type", "") != type) continue;
    std::set<std::string> keys = Keys(line["payload"]);
    if (!common) {
      common = keys;
    } else {
      std::set<std::string> both;
      for (const auto& k : *common) {
        if (keys.count(k)) both.insert(k);
      }
      common = both;
    }
  }
  REQUIRE(common.has_value());
  return *common;
}

bool Has(const std::set<std::string>& keys, const std::string& key) { return keys.count(key) > 0; }

// Checks an exported rollout against the reference's line shapes; returns its lines.
std::vector<Json> CheckRollout(const std::string& text, const std::string& session_id) {
  const auto reference = ReferenceLines();
  const auto lines = JsonLines(text);
  REQUIRE(lines.size() >= 3);
  const std::regex timestamp(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  const std::set<std::string> line_keys =
      Keys(reference.front());  // timestamp, ordinal, type, payload
  REQUIRE(line_keys == std::set<std::string>{"timestamp", "ordinal", "type", "payload"});
  std::set<std::string> reference_item_types;
  for (const auto& l : reference) {
    if (l.value("type", "") == "response_item") reference_item_types.insert(l["payload"]["type"]);
  }
  // Wire item kinds a session can hold beyond the ones this reference happened to record.
  for (const char* t : {"function_call_output", "custom_tool_call", "custom_tool_call_output",
                        "local_shell_call", "compaction"}) {
    reference_item_types.insert(t);
  }

  // session_meta: the first line, with every field Codex requires (each of
  // which its own files carry).
  const Json& meta = lines.front();
  CHECK(meta["type"] == "session_meta");
  const std::set<std::string> ref_meta = CommonPayloadKeys(reference, "session_meta");
  for (const char* key : {"id", "session_id", "timestamp", "cwd", "originator", "cli_version",
                          "source", "model_provider", "base_instructions", "git"}) {
    INFO("session_meta." << key);
    CHECK(Has(ref_meta, key));
    CHECK(Has(Keys(meta["payload"]), key));
  }
  const Json& p = meta["payload"];
  CHECK(p["id"] == session_id);
  CHECK(p["session_id"] == session_id);
  CHECK(std::regex_match(p["timestamp"].get<std::string>(), timestamp));
  CHECK(p["cli_version"].is_string());
  CHECK_FALSE(p["cli_version"].get<std::string>().empty());
  CHECK(p["base_instructions"]["text"].is_string());
  CHECK_FALSE(p["base_instructions"]["text"].get<std::string>().empty());
  CHECK(p["git"].is_object());
  CHECK((p["source"] == "exec" || p["source"] == "cli"));
  CHECK(fs::path(p["cwd"].get<std::string>()).is_absolute());

  const std::set<std::string> ref_context = CommonPayloadKeys(reference, "turn_context");
  const std::set<std::string> ref_compacted = CommonPayloadKeys(reference, "compacted");
  std::set<std::string> calls, outputs;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Json& line = lines[i];
    INFO("line " << i << ": " << line.dump().substr(0, 300));
    REQUIRE(line.is_object());
    CHECK(Keys(line) == line_keys);
    CHECK(line["ordinal"] == i);
    CHECK(std::regex_match(line["timestamp"].get<std::string>(), timestamp));
    const std::string type = line["type"];
    if (i > 0) CHECK(type != "session_meta");
    const Json& payload = line["payload"];
    REQUIRE(payload.is_object());
    if (type == "response_item") {
      const std::string item = payload.value("type", "");
      CHECK(Has(reference_item_types, item));
      if (item == "message") {
        CHECK(payload["role"].is_string());
        CHECK(payload["content"].is_array());
      }
      if (payload.contains("call_id")) {
        (item.find("output") != std::string::npos ? outputs : calls).insert(payload["call_id"]);
      }
    } else if (type == "turn_context") {
      for (const char* key :
           {"turn_id", "cwd", "approval_policy", "sandbox_policy", "model", "summary"}) {
        INFO("turn_context." << key);
        CHECK(Has(ref_context, key));
        CHECK(Has(Keys(payload), key));
      }
    } else if (type == "compacted") {
      CHECK(Has(ref_compacted, "message"));
      CHECK(Has(ref_compacted, "replacement_history"));
      CHECK(payload["message"].is_string());
      REQUIRE(payload["replacement_history"].is_array());
      for (const auto& item : payload["replacement_history"]) {
        CHECK(Has(reference_item_types, item.value("type", "")));
      }
    }
  }
  CHECK(calls == outputs);  // every call has its output, as Codex needs to resend them
  return lines;
}

std::string NewSession(CodexTestEnv& env, std::vector<std::string> args) {
  args.insert(args.begin(), {"exec", "--json"});
  auto run = RunOk(env, args);
  return JsonLines(run.out).front()["thread_id"];
}

std::string Export(CodexTestEnv& env, const std::string& id) {
  return RunOk(env, {"sessions", "export", id, "--format", "jsonl"}).out;
}

size_t CountType(const std::vector<Json>& lines, const std::string& type) {
  size_t n = 0;
  for (const auto& l : lines) n += l.value("type", "") == type ? 1 : 0;
  return n;
}

const char* kAddFile = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n";

TEST_CASE("exports of plain, tool-call, compacted and forked sessions have Codex's rollout shape") {
  auto env = MakeEnv(std::string(R"({"responses": [
    {"output": [{"reasoning": "plan"}], "message": "Hello."},
    {"output": [{"reasoning": "look"}, {"shell": ["bash", "-lc", "echo hi"]}]},
    {"output": [{"custom_tool_call": "apply_patch", "input": )") +
                         Json(kAddFile).dump() + R"(}]},
    "Patched.",
    "after compaction",
    "on the branch"]})",
                     // The one-shot shell harness: the compaction limit below
                     // is cut to its tools array.
                     "[features]\nunified_exec = false\n");

  const std::string plain = NewSession(*env, {"hi"});
  auto lines = CheckRollout(Export(*env, plain), plain);
  CHECK(CountType(lines, "response_item") >= 3);

  // A long prompt, so the session is over half the limit `codex compact` gets below.
  const std::string tools =
      NewSession(*env, {"-s", "danger-full-access", "patch it " + std::string(2000, 'x')});
  lines = CheckRollout(Export(*env, tools), tools);
  std::set<std::string> kinds;
  for (const auto& l : lines) {
    if (l["type"] == "response_item") kinds.insert(l["payload"].value("type", ""));
  }
  CHECK(kinds.count("function_call") == 1);
  CHECK(kinds.count("function_call_output") == 1);
  CHECK(kinds.count("custom_tool_call") == 1);
  CHECK(kinds.count("custom_tool_call_output") == 1);
  CHECK(kinds.count("reasoning") == 1);

  // (Without the sub-agent tools, whose definitions alone would take half that limit.)
  auto compacted = RunOk(
      *env, {"-c", "model_providers.scripted.supports_compact=true", "-c",
             "model_auto_compact_token_limit=4500", "--disable", "multi_agent", "compact", tools});
  INFO(compacted.err);
  REQUIRE(compacted.exit_code == 0);
  RunOk(*env, {"exec", "resume", tools, "go on"});
  lines = CheckRollout(Export(*env, tools), tools);
  CHECK(CountType(lines, "compacted") == 1);

  auto fork = RunOk(*env, {"exec", "--json", "fork", plain, "branch"});
  const std::string forked = JsonLines(fork.out).front()["thread_id"];
  REQUIRE(forked != plain);
  lines = CheckRollout(Export(*env, forked), forked);
  CHECK(lines.front()["payload"]["forked_from_id"] == plain);
}

TEST_CASE("an exported rollout imports back into a fresh store with the same transcript") {
  auto env = MakeEnv(R"(["first answer", "second answer"])");
  const std::string id = NewSession(*env, {"hi"});
  RunOk(*env, {"exec", "resume", id, "more"});
  const std::string exported = Export(*env, id);
  CheckRollout(exported, id);

  auto other = MakeEnv(R"(["unused"])");
  const fs::path file = other->root() / "rollout.jsonl";
  std::ofstream(file) << exported;
  RunOk(*other, {"sessions", "import", file.string()});
  CHECK(Export(*other, id) == exported);
}

TEST_CASE("Codex's own rollouts, imported, export again in the shape Codex wrote them") {
  auto env = MakeEnv(R"(["unused"])");
  for (const auto& e : fs::directory_iterator(ReferenceDir() / "rollouts")) {
    if (e.path().extension() != ".jsonl") continue;
    INFO(e.path().filename().string());
    const std::string id = JsonLines(ReadFile(e.path())).front()["payload"]["id"];
    RunOk(*env, {"sessions", "import", e.path().string()});
    const auto lines = CheckRollout(Export(*env, id), id);
    // As many response items as Codex wrote (the importer keeps every one).
    size_t theirs = 0, ours = 0;
    for (const auto& l : JsonLines(ReadFile(e.path()))) {
      theirs += l.value("type", "") == "response_item" ? 1 : 0;
    }
    ours = CountType(lines, "response_item");
    CHECK(ours == theirs);
  }
}

// The example events of the reference README: `{"type":...}` spans.
std::vector<Json> ReferenceEvents() {
  const std::string readme = ReadFile(ReferenceDir() / "README.md");
  std::vector<Json> out;
  size_t pos = 0;
  while ((pos = readme.find("`{\"type\":", pos)) != std::string::npos) {
    const size_t end = readme.find('`', pos + 1);
    if (end == std::string::npos) break;
    Json j = Json::parse(readme.substr(pos + 1, end - pos - 1), nullptr, false);
    if (!j.is_discarded()) out.push_back(j);
    pos = end + 1;
  }
  REQUIRE(out.size() >= 4);
  return out;
}

// Ours has every key of `ref`, with a value of the same JSON kind (null in
// the reference matches null), recursively.
void CheckShape(const Json& ours, const Json& ref, const std::string& where) {
  INFO(where << ": ours " << ours.dump() << " reference " << ref.dump());
  if (ref.is_object()) {
    REQUIRE(ours.is_object());
    for (const auto& [k, v] : ref.items()) {
      REQUIRE(ours.contains(k));
      CheckShape(ours[k], v, where + "." + k);
    }
    return;
  }
  if (ref.is_number()) {
    CHECK(ours.is_number());
  } else {
    CHECK(ours.type() == ref.type());
  }
}

std::string EventKey(const Json& e) {
  std::string key = e.value("type", "");
  if (e.contains("item"))
    key += "/" + e["item"].value("type", "") + "/" + e["item"].value("status", "");
  return key;
}

TEST_CASE("exec --json events have the shapes of Codex 0.169's (golden)") {
  auto env = MakeEnv(R"([{"output": [{"shell": ["bash", "-lc", "echo hi"]}]}, "All done."])");
  auto run = RunOk(*env, {"exec", "--json", "-s", "danger-full-access", "go"});
  const auto ours = JsonLines(run.out);
  for (const Json& ref : ReferenceEvents()) {
    const std::string key = EventKey(ref);
    const Json* match = nullptr;
    for (const auto& e : ours) {
      if (EventKey(e) == key) match = &e;
    }
    INFO("reference event " << ref.dump());
    REQUIRE(match != nullptr);
    CheckShape(*match, ref, key);
  }
  // The usage fields Codex 0.169 records (its token usage in the rollouts).
  const Json usage = ours.back()["usage"];
  for (const auto& line : ReferenceLines()) {
    if (line["payload"].value("type", "") != "token_count") continue;
    for (const auto& [k, v] : line["payload"]["info"]["last_token_usage"].items()) {
      if (k == "total_tokens") continue;  // exec's turn.completed leaves the total out
      INFO(k);
      CHECK(usage.contains(k));
    }
    break;
  }
}

}  // namespace
}  // namespace codex::testing
