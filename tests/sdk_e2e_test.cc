// OpenAI's TypeScript SDK (npm @openai/codex-sdk, pinned in
// scripts/install-mcp-test-servers.sh) drives our `codex` binary
// (codexPathOverride) against the scripted server, as a program built on the
// SDK would: a run, a tool call, resume by id, streamed events, an output
// schema, an image, and an error turn. tests/sdk/sdk_driver.mjs makes the SDK
// calls and prints what the SDK returned; this test checks that and what
// reached the server. Without node or the SDK it skips (exit 4) with the
// reason, except under CI=true, where a missing tool fails the test.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/catch_run.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::RunChecked;

bool HaveNode() { return std::system("node --version >/dev/null 2>&1") == 0; }

std::filesystem::path SdkDir() { return std::filesystem::path(CODEX_COMPAT_DIR) / "sdk"; }

bool HaveSdk() {
  return std::filesystem::exists(SdkDir() / "node_modules/@openai/codex-sdk/dist/index.js");
}

// The text of every user message part and the images of the last user message.
struct LastUser {
  std::string text;
  std::vector<std::string> image_urls;
};
LastUser LastUserOf(const RecordedRequest& r) {
  LastUser last;
  for (const auto& item : r.InputItems()) {
    if (item.value("type", "message") != "message" || item.value("role", "") != "user") continue;
    last = {};
    for (const auto& part : item["content"]) {
      if (part.value("type", "") == "input_image") {
        last.image_urls.push_back(part.value("image_url", ""));
      } else {
        last.text += part.value("text", "");
      }
    }
  }
  return last;
}

TEST_CASE("the TypeScript SDK drives codex: run, tool call, resume, stream, schema, image, error") {
  // One entry per model request, in the order the driver makes them.
  auto env = MakeEnv(R"({"responses": [
    "Hello from the SDK run",
    {"output": [{"shell": ["bash", "-c", "echo sdk-tool-output"], "call_id": "call_sdk"}]},
    "The tool said sdk-tool-output",
    "Resumed answer",
    {"output": [{"reasoning": "thinking"}], "message": "Streamed answer"},
    "{\"answer\":\"forty-two\"}",
    "I see a picture",
    {"http_error": {"status": 400, "code": "invalid_request_error", "message": "scripted refusal for the SDK"}}
  ]})");
  // A 1x1 PNG.
  const std::string png(
      "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\rIDATx"
      "\x9c\x63\xf8\x0f\x04\0\x09\xfb\x03\xfd\xe3U\xf2\x9c\0\0\0\0IEND\xae\x42\x60\x82",
      67);
  const auto image = env->workdir() / "pixel.png";
  std::ofstream(image, std::ios::binary) << png;

  ProcessOptions node;
  node.argv = {"node",
               std::string(SDK_DRIVER),
               SdkDir().string(),
               env->codex_binary(),
               env->workdir().string(),
               image.string()};
  node.env = env->Env();
  node.cwd = env->workdir();
  node.timeout = std::chrono::seconds(120);
  auto run = RunChecked(node);
  INFO("driver stdout: " << run.out << "\ndriver stderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  std::map<std::string, Json> steps;
  for (const Json& line : JsonLines(run.out)) {
    if (line.is_object() && line.contains("step")) steps[line["step"]] = line;
  }
  REQUIRE(steps.size() == 7);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 8);

  // 1. run: the final answer, an agent_message item, usage, a thread id.
  const Json& first = steps["run"];
  CHECK(first["final"] == "Hello from the SDK run");
  const std::string thread_id = first["thread_id"];
  CHECK(thread_id.size() >= 32);
  REQUIRE(first["items"].size() >= 1);
  CHECK(first["items"].back()["type"] == "agent_message");
  CHECK(first["usage"]["input_tokens"].get<int>() > 0);
  CHECK(LastUserOf(requests[0]).text.find("say hi") != std::string::npos);
  // The SDK names itself in the originator header, as with Codex.
  CHECK(requests[0].headers.at("originator") == "codex_sdk_ts");
  CHECK(requests[0].headers.at("x-client-request-id") == thread_id);

  // 2. the tool call ran in our sandbox and came back as a command_execution item.
  const Json& tool = steps["tool"];
  CHECK(tool["thread_id"] == thread_id);  // same thread: `exec resume ID`
  CHECK(tool["final"] == "The tool said sdk-tool-output");
  bool saw_command = false;
  for (const Json& item : tool["items"]) {
    if (item.value("type", "") != "command_execution") continue;
    saw_command = true;
    CHECK(item["aggregated_output"].get<std::string>().find("sdk-tool-output") !=
          std::string::npos);
    CHECK(item["exit_code"] == 0);
    CHECK(item["status"] == "completed");
  }
  CHECK(saw_command);
  // The second turn's request carries the first turn (it resumed the thread).
  CHECK(requests[1].InputItems().dump().find("Hello from the SDK run") != std::string::npos);

  // 3. resumeThread(id): same id, and the model saw the whole history.
  CHECK(steps["resume"]["thread_id"] == thread_id);
  CHECK(steps["resume"]["final"] == "Resumed answer");
  const std::string resumed_input = requests[3].InputItems().dump();
  CHECK(resumed_input.find("say hi") != std::string::npos);
  CHECK(resumed_input.find("sdk-tool-output") != std::string::npos);

  // 4. streamed events, in the SDK's vocabulary and order.
  const Json& types = steps["stream"]["types"];
  REQUIRE(types.size() >= 4);
  CHECK(types.front() == "thread.started");
  CHECK(types[1] == "turn.started");
  CHECK(types.back() == "turn.completed");
  CHECK(std::find(types.begin(), types.end(), "item.completed") != types.end());
  CHECK(steps["stream"]["thread_id"] != thread_id);  // a new thread

  // 5. output schema: sent as text.format, the structured answer returned.
  CHECK(steps["schema"]["final"] == "{\"answer\":\"forty-two\"}");
  const Json& format = requests[5].body["text"]["format"];
  CHECK(format["type"] == "json_schema");
  CHECK(format["schema"]["required"] == Json::array({"answer"}));

  // 6. image: the local file arrived as an input_image data URL beside the text.
  CHECK(steps["image"]["final"] == "I see a picture");
  const LastUser with_image = LastUserOf(requests[6]);
  CHECK(with_image.text.find("describe this") != std::string::npos);
  REQUIRE(with_image.image_urls.size() == 1);
  CHECK(with_image.image_urls[0].rfind("data:image/png;base64,", 0) == 0);

  // 7. an error turn: run() rejects, with the server's message.
  CHECK(steps["error"]["threw"] == true);
  CHECK(steps["error"]["message"].get<std::string>().find("scripted refusal for the SDK") !=
        std::string::npos);
}

}  // namespace
}  // namespace codex::testing

int main(int argc, char** argv) {
  const char* ci = std::getenv("CI");
  const bool must_run = ci != nullptr && std::string(ci) == "true";
  std::string missing;
  if (!codex::testing::HaveNode()) {
    missing = "node is not installed (scripts/install-deps.sh installs it)";
  } else if (!codex::testing::HaveSdk()) {
    missing = "@openai/codex-sdk is not in " + codex::testing::SdkDir().string() +
              "; run scripts/install-mcp-test-servers.sh";
  }
  if (!missing.empty()) {
    std::printf("%s: %s\n", must_run ? "FAILED (CI=true)" : "skipped", missing.c_str());
    return must_run ? 1 : 4;
  }
  return codex::testing::RunCatch(argc, argv);
}
