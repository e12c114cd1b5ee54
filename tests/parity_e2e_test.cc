// Codex parity end to end (issue 13): the flags, config keys, `exec --json`
// error events and request headers a Codex user's scripts rely on, each run
// through the real codex binary against the scripted server.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/files.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

namespace fs = std::filesystem;
using e2e::ErrorLines;
using e2e::JsonLines;
using e2e::MakeEnv;
using e2e::Run;

// The last user message of a request (its whole content array).
Json LastUserContent(const RecordedRequest& r) {
  Json content;
  for (const auto& item : r.InputItems()) {
    if (item.value("type", "message") == "message" && item.value("role", "") == "user") {
      content = item["content"];
    }
  }
  return content;
}

std::string LastUserText(const RecordedRequest& r) {
  std::string text;
  for (const auto& part : LastUserContent(r)) text += part.value("text", "");
  return text;
}

// A one-line "error: ..." failure with exit code 2 that sent nothing (the
// server saw `requests_before` requests in all).
void CheckUsageError(CodexTestEnv& env, const ProcessResult& run,
                     const std::vector<std::string>& words, size_t requests_before = 0) {
  INFO("stderr: " << run.err);
  CHECK(run.exit_code == 2);
  auto lines = ErrorLines(run.err);
  REQUIRE(lines.size() == 1);
  for (const auto& w : words) CHECK_THAT(lines[0], Catch::Contains(w));
  CHECK(env.server().requests_to("/responses").size() == requests_before);
}

size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = 0; (pos = text.find(needle, pos)) != std::string::npos; pos += needle.size()) {
    ++n;
  }
  return n;
}

// ---------------------------------------------------------------------------
// Flags.

TEST_CASE("--version and -V print the version, in any position, without a server") {
  auto env = MakeEnv(R"(["unused"])");
  for (auto args : std::vector<std::vector<std::string>>{
           {"--version"}, {"-V"}, {"exec", "-V"}, {"exec", "resume", "--version"}}) {
    auto run = Run(*env, args);
    INFO(args[0]);
    CHECK(run.exit_code == 0);
    CHECK(run.out == "codex " CODEX_PROJECT_VERSION "\n");  // core/version.h = CMake's version
  }
  CHECK(env->server().requests_to("/responses").empty());
}

TEST_CASE("-c works before exec, after exec, after the prompt, and in exec resume") {
  auto env = MakeEnv(R"(["one", "two", "three"])");
  auto run = Run(*env, {"exec", "-c", "model=\"after-exec\"", "hi"});
  REQUIRE(run.exit_code == 0);
  run = Run(*env, {"exec", "hi", "--config=model=\"after-prompt\""});
  REQUIRE(run.exit_code == 0);
  run = Run(*env, {"exec", "resume", "--last", "-c", "model=\"in-resume\"", "more"});
  REQUIRE(run.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].body["model"] == "after-exec");
  CHECK(requests[1].body["model"] == "after-prompt");
  CHECK(requests[2].body["model"] == "in-resume");
}

TEST_CASE("exec -o writes the last message to a file, also with --json") {
  auto env = MakeEnv(R"([{"output": [{"message": "first"}], "message": "the final word"},
                         "json final", "unwritable"])");
  const fs::path out = env->root() / "last.txt";
  auto run = Run(*env, {"exec", "-o", out.string(), "go"});
  REQUIRE(run.exit_code == 0);
  CHECK(ReadFile(out) == "the final word");
  CHECK(run.out == "the final word\n");
  run = Run(*env, {"exec", "--json", "hi", "--output-last-message", out.string()});
  REQUIRE(run.exit_code == 0);
  CHECK(ReadFile(out) == "json final");

  auto bad = Run(*env, {"exec", "-o", (env->root() / "no" / "dir.txt").string(), "x"});
  CHECK(bad.exit_code == 1);
  REQUIRE(ErrorLines(bad.err).size() == 1);
  CHECK_THAT(ErrorLines(bad.err)[0], Catch::Contains("-o "));
  CHECK(env->server().requests_to("/responses").back().status == 200);
}

TEST_CASE("--output-schema sends text.format json_schema; the final message is the JSON") {
  auto env = MakeEnv(R"(["{\"answer\":42}"])");
  const fs::path schema = env->root() / "schema.json";
  std::ofstream(schema) << R"({"type":"object","properties":{"answer":{"type":"integer"}},
                              "required":["answer"],"additionalProperties":false})";
  auto run = Run(*env, {"exec", "--output-schema", schema.string(), "answer"});
  REQUIRE(run.exit_code == 0);
  CHECK(Json::parse(run.out) == Json{{"answer", 42}});
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  const Json& format = requests[0].body["text"]["format"];
  CHECK(format["type"] == "json_schema");
  CHECK(format["strict"] == true);
  CHECK(format["name"].is_string());
  CHECK(format["schema"] == Json::parse(ReadFile(schema)));

  std::ofstream(env->root() / "bad.json") << "[not json";
  auto bad = Run(*env, {"exec", "--output-schema", (env->root() / "bad.json").string(), "x"});
  CheckUsageError(*env, bad, {"--output-schema", "JSON"}, 1);
  // Without the flag no text.format is sent.
  auto env2 = MakeEnv(R"(["plain"])");
  REQUIRE(Run(*env2, {"exec", "x"}).exit_code == 0);
  CHECK_FALSE(env2->server().requests_to("/responses")[0].body.contains("text"));
}

TEST_CASE("-p applies [profiles.NAME]; -c still wins; an unknown profile is an error") {
  auto env = MakeEnv(R"(["a", "b", "c"])", R"(profile = "default-profile"
[profiles.fast]
model = "fast-model"
model_reasoning_effort = "low"
[profiles.default-profile]
model = "profile-by-key"
)");
  REQUIRE(Run(*env, {"exec", "-p", "fast", "hi"}).exit_code == 0);
  REQUIRE(Run(*env, {"exec", "hi", "--profile", "fast", "-c", "model=\"dash-c\""}).exit_code == 0);
  REQUIRE(Run(*env, {"exec", "hi"}).exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].body["model"] == "fast-model");
  CHECK(requests[0].body["reasoning"]["effort"] == "low");
  CHECK(requests[1].body["model"] == "dash-c");
  CHECK(requests[2].body["model"] == "profile-by-key");
  auto bad = Run(*env, {"exec", "-p", "nope", "hi"});
  CheckUsageError(*env, bad, {"profile 'nope'", "[profiles.nope]"}, 3);
}

TEST_CASE("-p also layers $CODEX_HOME/NAME.config.toml, as Codex 0.169 does") {
  auto env = MakeEnv(R"(["a"])");
  std::ofstream(env->codex_home() / "work.config.toml") << "model = \"layered\"\n";
  REQUIRE(Run(*env, {"-p", "work", "exec", "hi"}).exit_code == 0);
  CHECK(env->server().requests_to("/responses")[0].body["model"] == "layered");
}

// A minimal valid PNG header is enough: the MIME type comes from the bytes.
const std::string kPng("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
const std::string kJpeg("\xff\xd8\xff\xe0\0\x10JFIF", 10);

TEST_CASE("-i attaches images as input_image data URLs with the right MIME type") {
  auto env = MakeEnv(R"(["seen"])");
  std::ofstream(env->workdir() / "a.png", std::ios::binary) << kPng;
  std::ofstream(env->workdir() / "b.jpg", std::ios::binary) << kJpeg;
  std::ofstream(env->workdir() / "c.dat", std::ios::binary) << kPng;
  auto run = Run(*env, {"exec", "-i", "a.png", "--image", "b.jpg,c.dat", "--", "describe"});
  REQUIRE(run.exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  const Json content = LastUserContent(requests[0]);
  REQUIRE(content.size() == 4);
  std::vector<std::string> prefixes;
  for (size_t i = 0; i < 3; ++i) {
    CHECK(content[i]["type"] == "input_image");
    const std::string url = content[i]["image_url"];
    prefixes.push_back(url.substr(0, url.find(',') + 1));
  }
  CHECK(prefixes == std::vector<std::string>{"data:image/png;base64,", "data:image/jpeg;base64,",
                                             "data:image/png;base64,"});
  CHECK(content[0]["image_url"] == "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==");
  CHECK(content[3] == Json{{"type", "input_text"}, {"text", "describe"}});
}

TEST_CASE("-i with a missing or non-image file fails before anything is sent or saved") {
  auto env = MakeEnv(R"(["never"])");
  std::ofstream(env->workdir() / "notes.png") << "plain text, not a picture";
  auto missing = Run(*env, {"exec", "-i", "absent.png", "hi"});
  CheckUsageError(*env, missing, {"absent.png", "no such file"});
  auto text = Run(*env, {"exec", "-i", "notes.png", "hi"});
  CheckUsageError(*env, text, {"notes.png", "not a PNG, JPEG, GIF or WebP image"});
  CHECK_FALSE(fs::exists(env->codex_home() / "sessions.db"));
}

TEST_CASE("--color always colours stderr, never and auto (a pipe) do not; bad values fail") {
  auto env = MakeEnv(R"([{"output": [{"shell": ["bash", "-lc", "true"]}]}, "done",
                         {"output": [{"shell": ["bash", "-lc", "true"]}]}, "done"])");
  auto always = Run(*env, {"exec", "-s", "danger-full-access", "--color", "always", "go"});
  REQUIRE(always.exit_code == 0);
  CHECK(always.err.find("\x1b[") != std::string::npos);
  CHECK(always.out.find("\x1b[") == std::string::npos);  // the answer stays plain
  auto never = Run(*env, {"exec", "-s", "danger-full-access", "--color=never", "go"});
  REQUIRE(never.exit_code == 0);
  CHECK(never.err.find("\x1b[") == std::string::npos);
  auto bad = Run(*env, {"exec", "--color", "sometimes", "go"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("always, never, auto"));
}

TEST_CASE("--ephemeral runs the turn and saves nothing") {
  auto env = MakeEnv(R"(["not kept", "kept"])");
  // The store lives under $CODEX_HOME/ephemeral (out of every writable root,
  // issue 23), never in $TMPDIR; both are empty afterwards.
  const fs::path tmp = env->root() / "tmp";
  fs::create_directories(tmp);
  ProcessOptions options = env->CodexCommand({"exec", "--ephemeral", "--json", "hi"});
  options.env["TMPDIR"] = tmp.string();
  auto run = RunProcess(options);
  REQUIRE(run.ok());
  REQUIRE(run->exit_code == 0);
  CHECK(env->server().requests_to("/responses").size() == 1);
  CHECK(JsonLines(run->out).back()["type"] == "turn.completed");
  CHECK(fs::is_empty(tmp));
  CHECK(fs::is_empty(env->codex_home() / "ephemeral"));
  auto list = Run(*env, {"sessions", "list", "--all", "--json"});
  CHECK(list.out.find("\"id\"") == std::string::npos);
  // A saved run afterwards is the only session.
  REQUIRE(Run(*env, {"exec", "again"}).exit_code == 0);
  list = Run(*env, {"sessions", "list", "--all", "--json"});
  CHECK(CountOf(list.out, "\"id\"") == 1);
  auto resume = Run(*env, {"exec", "resume", "--last", "--ephemeral", "x"});
  CHECK(resume.exit_code == 2);
  CHECK_THAT(resume.err, Catch::Contains("--ephemeral"));
}

TEST_CASE("--skip-git-repo-check is accepted outside a git repository") {
  auto env = MakeEnv(R"(["fine"])");
  auto run = Run(*env, {"exec", "--skip-git-repo-check", "hi"});
  CHECK(run.exit_code == 0);
  CHECK(run.out == "fine\n");
}

TEST_CASE("piped stdin with a prompt is appended as a <stdin> block; '-' reads the prompt") {
  auto env = MakeEnv(R"(["a", "b", "c"])");
  REQUIRE(Run(*env, {"exec", "summarize this"}, "line 1\nline 2\n").exit_code == 0);
  REQUIRE(Run(*env, {"exec", "-"}, "the whole prompt\n").exit_code == 0);
  REQUIRE(Run(*env, {"exec", "no stdin"}, "").exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(LastUserText(requests[0]) == "summarize this\n\n<stdin>\nline 1\nline 2\n</stdin>");
  CHECK(LastUserText(requests[1]) == "the whole prompt\n");
  CHECK(LastUserText(requests[2]) == "no stdin");
}

TEST_CASE("Codex subcommands this codex lacks exit 2 and send nothing") {
  auto env = MakeEnv(R"(["never"])");
  for (std::string word : {"apply", "login", "logout", "cloud", "doctor"}) {
    auto run = Run(*env, {word});
    INFO(word);
    CheckUsageError(*env, run, {"'codex " + word + "'", "does not have"});
  }
  auto after_c = Run(*env, {"-c", "model=\"x\"", "login", "--with-api-key"});
  CheckUsageError(*env, after_c, {"'codex login'"});
  CHECK_FALSE(fs::exists(env->codex_home() / "sessions.db"));
  // As a prompt word of exec it is just text.
  auto env2 = MakeEnv(R"(["applied"])");
  CHECK(Run(*env2, {"exec", "apply"}).exit_code == 0);
}

// ---------------------------------------------------------------------------
// Config keys.

TEST_CASE("unsupported config keys are warned about once each; --strict-config rejects them") {
  auto env = MakeEnv(R"(["ok", "ok"])", R"(file_opener = "vscode"
show_raw_agent_reasoning = false
speculative_key = 1
[tools]
web_search = true
[history]
persistence = "save-all"
max_bytes = 1000
not_a_codex_key = 1
)");
  auto run = Run(*env, {"exec", "-c", "disable_response_storage=true", "hi"});
  REQUIRE(run.exit_code == 0);
  // ([tools] web_search and history.max_bytes are honoured.)
  CHECK(run.err.find("max_bytes") == std::string::npos);
  // (file_opener and show_raw_agent_reasoning are honoured.)
  CHECK(run.err.find("file_opener") == std::string::npos);
  CHECK(run.err.find("show_raw_agent_reasoning") == std::string::npos);
  for (std::string key :
       {"speculative_key", "history.not_a_codex_key", "disable_response_storage"}) {
    INFO(key);
    CHECK(CountOf(run.err, "warning: config key '" + key + "' is not supported; it is ignored\n") ==
          1);
  }
  CHECK(run.err.find("'history'") == std::string::npos);
  CHECK(run.err.find("history.persistence") == std::string::npos);

  auto strict = Run(*env, {"exec", "--strict-config", "hi"});
  CHECK(strict.exit_code == 2);
  CHECK_THAT(strict.err, Catch::Contains("is not supported (--strict-config)"));
  CHECK(strict.err.find("file_opener") == std::string::npos);
  CHECK(env->server().requests_to("/responses").size() == 1);

  // Keys other engineers own are known, never warned about.
  REQUIRE(env->WriteConfig("retention_days = 30\n").ok());
  auto known = Run(*env, {"exec", "--strict-config", "hi"});
  CHECK(known.exit_code == 0);
  CHECK(known.err.find("warning:") == std::string::npos);
}

TEST_CASE("enum values are validated with the allowed values named") {
  auto env = MakeEnv(R"(["never"])");
  auto summary = Run(*env, {"exec", "-c", "model_reasoning_summary=\"loud\"", "hi"});
  CheckUsageError(*env, summary,
                  {"model_reasoning_summary", "'loud'", "auto, concise, detailed, none"});
  auto verbosity = Run(*env, {"exec", "-c", "model_verbosity=\"chatty\"", "hi"});
  CheckUsageError(*env, verbosity, {"model_verbosity", "'chatty'", "low, medium, high"});
  auto effort = Run(*env, {"exec", "-c", "model_reasoning_effort=\"max\"", "hi"});
  CheckUsageError(*env, effort, {"model_reasoning_effort", "minimal"});
  auto persistence = Run(*env, {"exec", "-c", "history.persistence=\"some\"", "hi"});
  CheckUsageError(*env, persistence, {"history.persistence", "save-all, none"});
}

TEST_CASE("model_verbosity and parallel_tool_calls reach the request; defaults as Codex sends") {
  auto env = MakeEnv(R"(["a", "b"])");
  REQUIRE(Run(*env, {"exec", "hi"}).exit_code == 0);
  REQUIRE(Run(*env, {"exec", "-c", "model_verbosity=\"low\"", "-c", "parallel_tool_calls=false",
                     "-c", "model_reasoning_summary=\"detailed\"", "hi"})
              .exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  // Codex 0.169 (the requests captured beside tests/data/reference/codex-0.169): parallel tool
  // calls on, reasoning.summary "auto", no text.verbosity unless configured.
  CHECK(requests[0].body["parallel_tool_calls"] == true);
  CHECK(requests[0].body["reasoning"] == Json{{"summary", "auto"}});
  CHECK_FALSE(requests[0].body.contains("text"));
  CHECK(requests[1].body["parallel_tool_calls"] == false);
  CHECK(requests[1].body["text"] == Json{{"verbosity", "low"}});
  CHECK(requests[1].body["reasoning"]["summary"] == "detailed");
}

TEST_CASE("notify runs the program with the turn-complete JSON as its last argument") {
  auto env = MakeEnv(R"(["all done", "second"])");
  const fs::path out = env->root() / "notified.json";
  const fs::path script = env->root() / "notify.sh";
  std::ofstream(script) << "#!/bin/sh\nprintf '%s' \"$2\" > '" << out.string() << ".tmp'\nmv '"
                        << out.string() << ".tmp' '" << out.string() << "'\n";
  fs::permissions(script, fs::perms::owner_all);
  REQUIRE(env->WriteConfig("notify = [\"" + script.string() + "\", \"first-arg\"]\n").ok());
  auto run = Run(*env, {"exec", "--json", "finish it"});
  REQUIRE(run.exit_code == 0);
  const std::string thread = JsonLines(run.out).front()["thread_id"];
  for (int i = 0; i < 200 && !fs::exists(out); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(fs::exists(out));
  const Json j = Json::parse(ReadFile(out));
  CHECK(j["type"] == "agent-turn-complete");
  CHECK(j["thread-id"] == thread);
  CHECK(j["turn-id"].get<std::string>().size() == 36);
  CHECK(j["cwd"] == fs::weakly_canonical(env->workdir()).string());
  CHECK(j["input-messages"] == Json::array({"finish it"}));
  CHECK(j["last-assistant-message"] == "all done");
  // The program's stdout never reaches the --json stream.
  for (const auto& e : JsonLines(run.out)) CHECK(e.is_object());

  // A program that cannot start does not change the turn's outcome.
  REQUIRE(
      env->WriteConfig("notify = [\"" + (env->root() / "no-such-program").string() + "\"]\n").ok());
  auto missing = Run(*env, {"exec", "again"});
  CHECK(missing.exit_code == 0);
  CHECK(missing.out == "second\n");

  REQUIRE(env->WriteConfig("notify = \"not-an-array\"\n").ok());
  auto bad = Run(*env, {"exec", "x"});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("notify"));
}

TEST_CASE("project_doc_max_bytes caps AGENTS.md; 0 leaves it out") {
  auto env = MakeEnv(R"(["a", "b"])");
  std::ofstream(env->workdir() / "AGENTS.md") << "RULE-ONE " << std::string(200, 'x') << " TAIL";
  REQUIRE(Run(*env, {"exec", "-c", "project_doc_max_bytes=120", "hi"}).exit_code == 0);
  REQUIRE(Run(*env, {"exec", "-c", "project_doc_max_bytes=0", "hi"}).exit_code == 0);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  const std::string first = requests[0].InputItems().dump();
  CHECK(first.find("RULE-ONE") != std::string::npos);
  CHECK(first.find("TAIL") == std::string::npos);
  CHECK(first.find("truncated at 120 bytes") != std::string::npos);
  CHECK(requests[1].InputItems().dump().find("RULE-ONE") == std::string::npos);
}

TEST_CASE("history.persistence = \"none\" keeps prompts out of history.jsonl") {
  auto env = MakeEnv(R"(["one", "two"])");
  const fs::path history = env->codex_home() / "history.jsonl";
  REQUIRE(Run(*env, {"-c", "history.persistence=\"none\"", "secret prompt"}, "").exit_code == 0);
  CHECK(ReadFile(history).find("secret prompt") == std::string::npos);
  REQUIRE(Run(*env, {"kept prompt"}, "").exit_code == 0);  // the default is save-all
  CHECK(ReadFile(history).find("kept prompt") != std::string::npos);
  CHECK(ReadFile(history).find("secret prompt") == std::string::npos);
}

TEST_CASE("hide_agent_reasoning leaves reasoning out of exec --json") {
  auto env = MakeEnv(R"([{"output": [{"reasoning": "thinking hard"}], "message": "answer"},
                         {"output": [{"reasoning": "thinking hard"}], "message": "answer"}])");
  auto shown = Run(*env, {"exec", "--json", "hi"});
  CHECK(shown.out.find("\"type\":\"reasoning\"") != std::string::npos);
  auto hidden = Run(*env, {"exec", "--json", "-c", "hide_agent_reasoning=true", "hi"});
  REQUIRE(hidden.exit_code == 0);
  CHECK(hidden.out.find("\"type\":\"reasoning\"") == std::string::npos);
  CHECK(hidden.out.find("thinking hard") == std::string::npos);
  CHECK(hidden.out.find("\"agent_message\"") != std::string::npos);
}

TEST_CASE("show_raw_agent_reasoning shows the raw reasoning text; by default it stays hidden") {
  // The reasoning item carries a summary and raw reasoning_text content, which
  // the scripted server also streams as response.reasoning_text.delta events.
  // The raw text tries to plant an OSC 8 hyperlink on the user's terminal.
  const std::string turn =
      R"({"output": [{"reasoning": "summary line", "content": "raw chain \u001b]8;;https://evil.example/\u0007click\u001b]8;;\u0007 end"}], "message": "answer"})";
  const std::string raw_only =
      R"({"output": [{"reasoning": "", "content": "only raw text"}], "message": "answer"})";
  auto env = MakeEnv("[" + turn + "," + turn + "," + turn + "," + turn + "," + raw_only + "," +
                     raw_only + "]");

  // Default: nothing raw, neither for people nor in --json (before, exec
  // --json showed the raw content of a reasoning item without a summary).
  auto human = Run(*env, {"exec", "hi"});
  REQUIRE(human.exit_code == 0);
  CHECK(human.err.find("raw chain") == std::string::npos);
  auto json = Run(*env, {"exec", "--json", "hi"});
  REQUIRE(json.exit_code == 0);
  CHECK(json.out.find("raw chain") == std::string::npos);
  CHECK(json.out.find("summary line") != std::string::npos);

  // On: exec's human output shows it under "thinking", with the escape
  // sequences neutralised (no ESC byte reaches the terminal).
  auto shown = Run(*env, {"exec", "-c", "show_raw_agent_reasoning=true", "hi"});
  REQUIRE(shown.exit_code == 0);
  CHECK_THAT(shown.err, Catch::Contains("thinking\n  raw chain"));
  CHECK_THAT(shown.err, Catch::Contains("end"));
  CHECK(shown.err.find('\x1b') == std::string::npos);
  CHECK(shown.err.find("warning") == std::string::npos);
  CHECK(shown.out == "answer\n");

  // --json: the reasoning item's text is the summary alone, key or not, as the
  // real Codex 0.169 emits it (checked against it on the scripted server).
  auto shown_json = Run(*env, {"exec", "--json", "-c", "show_raw_agent_reasoning=true", "hi"});
  REQUIRE(shown_json.exit_code == 0);
  bool found = false;
  for (const auto& e : JsonLines(shown_json.out)) {
    if (e.value("type", "") != "item.completed" || e["item"].value("type", "") != "reasoning") {
      continue;
    }
    found = true;
    CHECK(e["item"]["text"] == "summary line");
  }
  CHECK(found);

  // A reasoning item with raw text and no summary: --json has no reasoning
  // item for it (key on or off); exec's human output shows it with the key.
  auto raw_json = Run(*env, {"exec", "--json", "-c", "show_raw_agent_reasoning=true", "hi"});
  REQUIRE(raw_json.exit_code == 0);
  CHECK(raw_json.out.find("only raw text") == std::string::npos);
  auto raw_human = Run(*env, {"exec", "-c", "show_raw_agent_reasoning=true", "hi"});
  REQUIRE(raw_human.exit_code == 0);
  CHECK_THAT(raw_human.err, Catch::Contains("thinking\n  only raw text"));
}

// ---------------------------------------------------------------------------
// exec --json errors and usage; headers.

TEST_CASE("exec --json: a top-level error event per reconnect, then for the final error") {
  auto env = MakeEnv(R"([{"http_error": 503}, {"http_error": 503}, "recovered",
                         {"http_error": 400}])");
  auto ok = Run(*env, {"exec", "--json", "hi"});
  REQUIRE(ok.exit_code == 0);
  auto events = JsonLines(ok.out);
  std::vector<Json> errors;
  for (const auto& e : events) {
    if (e.value("type", "") == "error") errors.push_back(e);
  }
  REQUIRE(errors.size() == 2);
  for (const auto& e : errors) {
    CHECK(e.size() == 2);
    CHECK_THAT(e["message"].get<std::string>(), Catch::StartsWith("Reconnecting"));
  }
  CHECK(events.back()["type"] == "turn.completed");

  auto failed = Run(*env, {"exec", "--json", "again"});
  CHECK(failed.exit_code == 1);
  events = JsonLines(failed.out);
  REQUIRE(events.size() >= 2);
  const Json& error = events[events.size() - 2];
  CHECK(error["type"] == "error");
  CHECK(events.back()["type"] == "turn.failed");
  CHECK(events.back()["error"]["message"] == error["message"]);
  for (const auto& e : events) {
    CHECK_FALSE((e.value("type", "") == "item.completed" && e["item"]["type"] == "error"));
  }
}

TEST_CASE("turn.completed usage carries cache_write_input_tokens from the response") {
  auto env = MakeEnv(R"([{"message": "hi", "usage": {"input_tokens": 100,
      "input_tokens_details": {"cached_tokens": 40, "cache_write_tokens": 25},
      "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 3}, "total_tokens": 110}},
      "plain"])");
  auto run = Run(*env, {"exec", "--json", "hi"});
  REQUIRE(run.exit_code == 0);
  const Json usage = JsonLines(run.out).back()["usage"];
  CHECK(usage["input_tokens"] == 100);
  CHECK(usage["cached_input_tokens"] == 40);
  CHECK(usage["cache_write_input_tokens"] == 25);
  CHECK(usage["output_tokens"] == 10);
  CHECK(usage["reasoning_output_tokens"] == 3);
  run = Run(*env, {"exec", "--json", "hi"});
  CHECK(JsonLines(run.out).back()["usage"]["cache_write_input_tokens"] == 0);
}

TEST_CASE("requests carry the session id headers; x-client-request-id is the thread id") {
  // The one-shot shell harness: the compaction limit below is cut to its tools array.
  auto env = MakeEnv(R"([{"output": [{"shell": ["bash", "-lc", "true"]}]}, "done",
                         {"http_error": 503}, "after retry"])",
                     "[features]\nunified_exec = false\n");
  auto run = Run(*env, {"exec", "--json", "-s", "danger-full-access", "go"});
  REQUIRE(run.exit_code == 0);
  const std::string thread = JsonLines(run.out).front()["thread_id"];
  // A long prompt: the session is then over half the limit `codex compact` gets below.
  run = Run(*env, {"exec", "resume", "--last", "more " + std::string(2000, 'x')});
  REQUIRE(run.exit_code == 0);
  const auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 4);
  for (const auto& r : requests) {
    CHECK(r.headers.at("session_id") == thread);
    CHECK(r.headers.at("session-id") == thread);
    CHECK(r.headers.at("thread-id") == thread);
    // As Codex 0.169 sends it (a retry included).
    CHECK(r.headers.at("x-client-request-id") == thread);
  }

  // `codex compact` sends them on /responses/compact too (the endpoint form,
  // with a limit the session is over half of, so the compaction is worth it).
  // (Without the sub-agent tools, whose definitions alone would take half that limit.)
  auto compacted =
      Run(*env, {"-c", "model_providers.scripted.supports_compact=true", "-c",
                 "compaction=\"endpoint\"", "-c", "model_auto_compact_token_limit=4400",
                 "--disable", "multi_agent", "compact", thread});
  INFO(compacted.err);
  REQUIRE(compacted.exit_code == 0);
  auto compacts = env->server().requests_to("/responses/compact");
  REQUIRE(compacts.size() == 1);
  CHECK(compacts[0].headers.at("session-id") == thread);
  CHECK(compacts[0].headers.at("x-client-request-id") == thread);
}

TEST_CASE("the requests of a turn reuse one connection when the server keeps it alive") {
  const std::string script = R"([{"output": [{"shell": ["bash", "-lc", "true"]}]},
                                  {"output": [{"shell": ["bash", "-lc", "true"]}]}, "done"])";
  CodexTestEnvOptions options;
  options.server.keep_alive_max_count = 100;
  auto env = CodexTestEnv::Create(script, options);
  REQUIRE(env.ok());
  auto run = (*env)->RunCodex({"exec", "-s", "danger-full-access", "go"});
  REQUIRE(run.ok());
  REQUIRE(run->exit_code == 0);
  auto requests = (*env)->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].remote_port != 0);
  CHECK(requests[1].remote_port == requests[0].remote_port);
  CHECK(requests[2].remote_port == requests[0].remote_port);

  // A server that closes after each request gets a new connection each time.
  auto closing = MakeEnv(script);
  REQUIRE(Run(*closing, {"exec", "-s", "danger-full-access", "go"}).exit_code == 0);
  auto separate = closing->server().requests_to("/responses");
  REQUIRE(separate.size() == 3);
  CHECK(separate[0].remote_port != separate[1].remote_port);
  CHECK(separate[1].remote_port != separate[2].remote_port);
}

// Issue 25: Codex 0.169 has no built-in table of model defaults (against an
// API-key provider it sends reasoning {"summary":"auto"} for gpt-5-codex,
// gpt-5, gpt-5.1-codex alike: captured); its model_catalog_json gives them.
// Captured from Codex 0.169 with such a catalog: the model's entry gives the
// effort (default_reasoning_level), the summary (default_reasoning_summary)
// and text.verbosity (default_verbosity, when support_verbosity); config,
// the profile and -c win; another model's entry changes nothing.
TEST_CASE("model_catalog_json gives the model's reasoning defaults; config wins") {
  auto env = MakeEnv(R"({"default": "ok"})");
  const fs::path catalog = env->codex_home() / "models.json";
  std::ofstream(catalog) << R"({"models": [
      {"slug": "gpt-5-codex", "default_reasoning_level": "high", "default_verbosity": "low",
       "support_verbosity": true, "default_reasoning_summary": "detailed"},
      {"slug": "gpt-5", "default_reasoning_level": "minimal", "default_verbosity": "high",
       "support_verbosity": false}]})";
  auto run = [&](std::vector<std::string> args) {
    std::vector<std::string> all = {"exec", "-c", "model_catalog_json=\"models.json\""};
    all.insert(all.end(), args.begin(), args.end());
    all.push_back("hi");
    auto r = Run(*env, all);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("model_catalog_json") == std::string::npos);  // honoured, not warned
    return env->server().requests_to("/responses").back().body;
  };
  Json body = run({"-m", "gpt-5-codex"});
  CHECK(body["reasoning"] == Json{{"effort", "high"}, {"summary", "detailed"}});
  CHECK(body["text"] == Json{{"verbosity", "low"}});
  body = run({"-m", "gpt-5-codex", "-c", "model_reasoning_effort=\"low\"", "-c",
              "model_verbosity=\"high\"", "-c", "model_reasoning_summary=\"auto\""});
  CHECK(body["reasoning"] == Json{{"effort", "low"}, {"summary", "auto"}});
  CHECK(body["text"] == Json{{"verbosity", "high"}});
  body = run({"-m", "gpt-5"});  // no support_verbosity: no text.verbosity
  CHECK(body["reasoning"] == Json{{"effort", "minimal"}, {"summary", "auto"}});
  CHECK_FALSE(body.contains("text"));
  body = run({"-m", "gpt-5.1-codex"});  // not in the catalog: what Codex sends without one
  CHECK(body["reasoning"] == Json{{"summary", "auto"}});
  CHECK_FALSE(body.contains("text"));
  // Without the catalog, the same for a model it names.
  auto plain = Run(*env, {"exec", "-m", "gpt-5-codex", "hi"});
  REQUIRE(plain.exit_code == 0);
  CHECK(env->server().requests_to("/responses").back().body["reasoning"] ==
        Json{{"summary", "auto"}});
  auto bad = Run(*env, {"exec", "-c", "model_catalog_json=\"missing.json\"", "hi"});
  CHECK(bad.exit_code == 2);
  REQUIRE(ErrorLines(bad.err).size() == 1);
  CHECK_THAT(ErrorLines(bad.err)[0], Catch::Contains("model_catalog_json"));
}

// Codex's tool_output_token_limit bounds what the model gets of a command's
// output (about 4 bytes a token); without it, 10 KiB.
TEST_CASE("tool_output_token_limit bounds the tool output sent to the model") {
  const std::string script =
      R"([{"output": [{"shell": ["bash", "-c", "head -c 40000 /dev/zero | tr '\\0' x"],
                       "call_id": "big"}]}, "done"])";
  auto env = MakeEnv(script, "tool_output_token_limit = 500\n");
  auto run = Run(*env, {"exec", "go"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.find("tool_output_token_limit") == std::string::npos);  // not warned
  const std::string limited = e2e::ShellResult(*env, "big").output;
  CHECK(limited.size() <= 2000 + 200);  // 500 tokens = 2000 bytes, plus the marker
  CHECK(limited.size() >= 1000);
  auto plain_env = MakeEnv(script);
  REQUIRE(Run(*plain_env, {"exec", "go"}).exit_code == 0);
  const std::string plain = e2e::ShellResult(*plain_env, "big").output;
  CHECK(plain.size() > 9 * 1024);  // the default: 10 KiB
  CHECK(plain.size() <= 10 * 1024 + 200);
  auto bad = Run(*env, {"exec", "-c", "tool_output_token_limit=0", "go"});
  CHECK(bad.exit_code == 2);
}

}  // namespace
}  // namespace codex::testing
