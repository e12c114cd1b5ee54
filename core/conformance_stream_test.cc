// Conformance: every recorded Responses stream in
// tests/data/conformance/responses/*.sse goes through ResponseStream
// (whole, and fed in small pieces) and must give the documented items, usage
// and error.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/response_stream.h"
#include "testing/files.h"
#include "testing/test_data.h"

namespace codex::core {
namespace {

namespace fs = std::filesystem;

fs::path ConformanceDir() { return codex::testing::TestData("conformance/responses"); }

using codex::testing::ReadFile;

class Recorder : public StreamObserver {
 public:
  void OnTextDelta(std::string_view, std::string_view delta) override { text += delta; }
  void OnReasoningDelta(std::string_view, std::string_view delta) override { reasoning += delta; }
  Status OnOutputItemDone(const Item& item) override {
    done.push_back(item);
    return OkStatus();
  }
  void OnWarning(std::string_view message) override { warnings.emplace_back(message); }

  std::string text;
  std::string reasoning;
  std::vector<Item> done;
  std::vector<std::string> warnings;
};

struct Expected {
  std::string response_id;            // checked on success
  std::vector<ItemKind> kinds;        // items delivered to the observer
  std::optional<TokenUsage> usage;    // on success
  StatusCode code = StatusCode::kOk;  // error code, kOk for success
  std::string reason;                 // error reason
  long long retry_after_ms = 0;
  std::string text;  // concatenated text deltas
  bool has_reasoning_deltas = false;
};

const std::map<std::string, Expected>& Expectations() {
  static const auto* kMap = new std::map<std::string, Expected>{
      {"00_codex_minimal_cli_fixture.sse",
       {"resp1", {ItemKind::kMessage}, std::nullopt, StatusCode::kOk, "", 0, "", false}},
      {"01_reasoning_encrypted_function_call.gpt-5.1-codex-max.sse",
       {"resp_01830d662ab3856501693c321345c88190b0de00f3b9975691",
        {ItemKind::kReasoning, ItemKind::kFunctionCall},
        TokenUsage{134, 0, 28, 0, 162},
        StatusCode::kOk,
        "",
        0,
        "",
        true}},
      {"02_final_message_after_tool_loop.gpt-5.1-codex-max.sse",
       {"resp_01830d662ab3856501693c3217ba4c8190a3ddf6c839d4f12a",
        {ItemKind::kMessage},
        TokenUsage{299, 0, 12, 0, 311},
        StatusCode::kOk,
        "",
        0,
        "The final result is **570**.",
        false}},
      {"03_message_phases_cached_tokens.gpt-5.3-codex.sse",
       {"resp_0a63f40a2632b74300699f8818e5648196a8fa657ae8091421",
        {ItemKind::kMessage, ItemKind::kMessage},
        TokenUsage{7112, 3072, 463, 64, 7575},
        StatusCode::kOk,
        "",
        0,
        "",
        false}},
      {"04_reasoning_then_local_shell_call.gpt-5-codex.sse",
       {"resp_68da7fd5d24481949fc2cf1cc60377050faf5df54b42d9a6",
        {ItemKind::kReasoning, ItemKind::kLocalShellCall},
        TokenUsage{407, 0, 151, 128, 558},
        StatusCode::kOk,
        "",
        0,
        "",
        false}},
      {"05_custom_tool_call_streaming_input.gpt-5.2-codex.sse",
       {"resp_custom_tool_test_001",
        {ItemKind::kCustomToolCall},
        TokenUsage{50, 0, 20, 0, 70},
        StatusCode::kOk,
        "",
        0,
        "",
        false}},
      {"06_error_event_then_failed_insufficient_quota.sse",
       {"", {}, std::nullopt, StatusCode::kResourceExhausted, "insufficient_quota", 0, "", false}},
      {"07_failed_rate_limit_exceeded.codex-test.sse",
       {"",
        {},
        std::nullopt,
        StatusCode::kResourceExhausted,
        "rate_limit_exceeded",
        11054,
        "",
        false}},
      {"08_failed_context_length_exceeded.codex-test.sse",
       {"",
        {},
        std::nullopt,
        StatusCode::kResourceExhausted,
        "context_length_exceeded",
        0,
        "",
        false}},
      {"08b_failed_insufficient_quota.codex-test.sse",
       {"", {}, std::nullopt, StatusCode::kResourceExhausted, "insufficient_quota", 0, "", false}},
      {"09_incomplete_max_output_tokens.SYNTHETIC.sse",
       {"",
        {ItemKind::kMessage},
        std::nullopt,
        StatusCode::kFailedPrecondition,
        "incomplete",
        0,
        "Once upon a",
        false}},
      {"10_output_text_then_compaction_item.gpt-5.2.trimmed.sse",
       {"resp_0e2ed64344ac7f31016994b30480ac819785e6e4cd43a28c52",
        {ItemKind::kMessage, ItemKind::kCompaction},
        TokenUsage{51097, 49792, 2505, 0, 53602},
        StatusCode::kOk,
        "",
        0,
        "",
        false}},
  };
  return *kMap;
}

// Every "encrypted_content" string in the file's output_item.done items.
std::vector<std::string> EncryptedContents(const std::string& sse) {
  std::vector<std::string> out;
  std::istringstream in(sse);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("data:", 0) != 0) continue;
    auto j = nlohmann::json::parse(line.substr(5), nullptr, false);
    if (!j.is_object() || j.value("type", "") != "response.output_item.done") continue;
    const auto& item = j["item"];
    if (item.contains("encrypted_content") && item["encrypted_content"].is_string()) {
      out.push_back(item["encrypted_content"].get<std::string>());
    }
  }
  return out;
}

struct Outcome {
  Recorder recorder;
  Result<ModelResponse> result = Status(StatusCode::kInternal, "not run");
};

void RunStream(const std::string& sse, size_t piece, Outcome& out) {
  ResponseStream rs(out.recorder);
  Status fed;
  if (piece == 0) {
    fed = rs.Feed(sse);
  } else {
    for (size_t i = 0; i < sse.size() && fed.ok(); i += piece) {
      fed = rs.Feed(std::string_view(sse).substr(i, piece));
    }
  }
  out.result = fed.ok() ? rs.Finish() : Result<ModelResponse>(fed);
}

void CheckFile(const fs::path& path) {
  const std::string name = path.filename().string();
  INFO("file " << name);
  const std::string sse = ReadFile(path);
  REQUIRE(!sse.empty());

  Outcome whole;
  RunStream(sse, 0, whole);
  REQUIRE(whole.recorder.warnings.empty());

  // Feeding in odd-sized pieces must not change anything.
  Outcome pieces;
  RunStream(sse, 7, pieces);
  REQUIRE(pieces.result.ok() == whole.result.ok());
  REQUIRE(pieces.result.status().reason() == whole.result.status().reason());
  REQUIRE(pieces.recorder.done.size() == whole.recorder.done.size());
  for (size_t i = 0; i < whole.recorder.done.size(); ++i) {
    REQUIRE(pieces.recorder.done[i].body == whole.recorder.done[i].body);
  }
  REQUIRE(pieces.recorder.text == whole.recorder.text);

  // Encrypted reasoning/compaction content must survive byte for byte.
  for (const std::string& enc : EncryptedContents(sse)) {
    bool found = false;
    for (const Item& item : whole.recorder.done) {
      if (item.body.find(enc) != std::string::npos) found = true;
    }
    REQUIRE(found);
  }
  // Bodies never keep the server id or status (item.h), except local_shell_call's id.
  for (const Item& item : whole.recorder.done) {
    REQUIRE(item.body.find("\"status\"") == std::string::npos);
  }

  auto it = Expectations().find(name);
  if (it == Expectations().end()) {
    WARN("no expectations recorded for " << name << "; checked only that it parses cleanly");
    return;
  }
  const Expected& want = it->second;
  std::vector<ItemKind> kinds;
  for (const Item& item : whole.recorder.done) kinds.push_back(item.kind);
  REQUIRE(kinds == want.kinds);
  if (!want.text.empty()) REQUIRE(whole.recorder.text == want.text);
  REQUIRE(whole.recorder.reasoning.empty() == !want.has_reasoning_deltas);

  if (want.code == StatusCode::kOk) {
    REQUIRE(whole.result.ok());
    REQUIRE(whole.result->response_id == want.response_id);
    REQUIRE(whole.result->usage == want.usage);
    REQUIRE(whole.result->items.size() == want.kinds.size());
  } else {
    REQUIRE(!whole.result.ok());
    REQUIRE(whole.result.status().code() == want.code);
    REQUIRE(StatusReasonName(whole.result.status().reason()) == want.reason);
    REQUIRE(whole.result.status().retry_after_ms() == want.retry_after_ms);
    REQUIRE(!whole.result.status().message().empty());
  }
}

TEST_CASE("Conformance: every recorded Responses stream") {
  const fs::path dir = ConformanceDir();
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".sse") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  // Every file we have expectations for must still be there.
  for (const auto& [name, expected] : Expectations()) {
    INFO("expected file " << name);
    REQUIRE(fs::exists(dir / name));
  }
  for (const fs::path& path : files) CheckFile(path);
}

TEST_CASE("Conformance: the incomplete stream names its reason") {
  const fs::path path = ConformanceDir() / "09_incomplete_max_output_tokens.SYNTHETIC.sse";
  if (!fs::exists(path)) return;  // the test above already skipped
  Outcome out;
  RunStream(ReadFile(path), 0, out);
  REQUIRE(out.result.status().message() == "response incomplete: max_output_tokens");
}

TEST_CASE("Conformance: the minimal fixture's message text") {
  const fs::path path = ConformanceDir() / "00_codex_minimal_cli_fixture.sse";
  if (!fs::exists(path)) return;
  Outcome out;
  RunStream(ReadFile(path), 1, out);
  REQUIRE(out.result.ok());
  REQUIRE(MessageText(out.result->items[0]) == "fixture hello");
}

}  // namespace
}  // namespace codex::core
