// Codex 0.169 command lines as Codex users and their scripts type them
// (issue 25): top-level options before the subcommand, multi-value -i,
// Codex subcommand words never sent as prompts.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "testing/files.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::ErrorLines;
using e2e::MakeEnv;
using e2e::Run;
using e2e::RunOk;
namespace fs = std::filesystem;

TEST_CASE("-m -s -C --full-auto before exec apply to the exec run") {
  auto env = MakeEnv(R"(["one", "two", "three"])");
  std::filesystem::create_directories(env->workdir() / "sub");
  auto run = RunOk(*env, {"-m", "gpt-before", "-s", "workspace-write", "-C", "sub", "exec", "hi"});
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].body["model"] == "gpt-before");
  CHECK(run.err.find("sandbox workspace-write") != std::string::npos);
  CHECK(requests[0].InputItems().dump().find((env->workdir() / "sub").string()) !=
        std::string::npos);

  auto bypass = RunOk(*env, {"--dangerously-bypass-approvals-and-sandbox", "exec", "again"});
  CHECK(bypass.err.find("sandbox danger-full-access") != std::string::npos);
  // Placed after exec, the same options still mean the same.
  auto after = RunOk(*env, {"exec", "-m", "gpt-after", "--full-auto", "third"});
  CHECK(after.err.find("sandbox workspace-write") != std::string::npos);
  CHECK(env->server().requests_to("/responses").back().body["model"] == "gpt-after");
}

TEST_CASE("exec -i a.png b.png -- PROMPT sends two images and the prompt") {
  auto env = MakeEnv(R"(["seen"])");
  const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  std::ofstream(env->workdir() / "a.png", std::ios::binary) << png;
  std::ofstream(env->workdir() / "b.png", std::ios::binary) << png;
  RunOk(*env, {"exec", "-i", "a.png", "b.png", "--", "describe both"});
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  Json user;
  for (const auto& item : requests[0].InputItems()) {
    if (item.value("role", "") == "user") user = item;
  }
  REQUIRE(user["content"].size() == 3);
  // Without the --, the prompt is read as a third file: one line says what to do.
  auto eaten = Run(*env, {"exec", "-i", "a.png", "b.png", "describe both"});
  CHECK(eaten.exit_code == 2);
  CHECK(eaten.err.find("'--' before it") != std::string::npos);
  CHECK(env->server().requests_to("/responses").size() == 1);
  CHECK(user["content"][0]["type"] == "input_image");
  CHECK(user["content"][1]["type"] == "input_image");
  CHECK(user["content"][2]["text"] == "describe both");
}

TEST_CASE("Codex subcommand words are never a prompt: refused by name, exit 2, nothing sent") {
  auto env = MakeEnv(R"([])");
  // (`review` is a command now: tests/review_e2e_test.cc.)
  for (std::vector<std::string> args : {std::vector<std::string>{"doctor"},
                                        {"update"},
                                        {"agents"},
                                        {"login"},
                                        {"logout"},
                                        {"mcp-server"},
                                        {"app-server"},
                                        {"apply"},
                                        {"debug"},
                                        {"cloud"},
                                        {"-m", "x", "doctor", "--base", "main"}}) {
    auto run = Run(*env, args);
    INFO("args[0]: " << args[0] << "\nstderr: " << run.err);
    CHECK(run.exit_code == 2);
    auto lines = ErrorLines(run.err);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("Codex CLI subcommand") != std::string::npos);
    CHECK(run.out.empty());
  }
  CHECK(env->server().requests_to("/responses").empty());
}

TEST_CASE("codex help prints help; archive/delete are the sessions commands") {
  auto env = MakeEnv(R"(["kept"])");
  auto help = RunOk(*env, {"help"});
  CHECK(help.out.find("exec") != std::string::npos);
  auto help_exec = RunOk(*env, {"help", "exec"});
  CHECK(help_exec.out.find("--output-schema") != std::string::npos);
  CHECK(env->server().requests_to("/responses").empty());

  auto run = RunOk(*env, {"exec", "--json", "hello"});
  std::string id;
  for (const Json& e : e2e::JsonLines(run.out)) {
    if (e.is_object() && e.value("type", "") == "thread.started") id = e["thread_id"];
  }
  REQUIRE_FALSE(id.empty());
  RunOk(*env, {"archive", id});
  auto listed = RunOk(*env, {"sessions", "list", "--json"});
  CHECK(listed.out.find(id) == std::string::npos);
  RunOk(*env, {"unarchive", id});
  CHECK(RunOk(*env, {"sessions", "list", "--json"}).out.find(id) != std::string::npos);
  RunOk(*env, {"delete", id});
  auto show = Run(*env, {"sessions", "show", id});
  CHECK(show.exit_code != 0);
}

// The tool names a request offers.
std::set<std::string> ToolNames(const RecordedRequest& r) {
  std::set<std::string> names;
  for (const auto& t : r.body["tools"]) names.insert(t.value("name", t.value("type", "")));
  return names;
}

TEST_CASE("--enable/--disable FEATURE and --search: accepted anywhere, mapped where we have it") {
  auto env = MakeEnv(R"({"default": "ok"})");
  auto run = RunOk(*env, {"--enable", "some_feature", "exec", "--disable", "other", "hi"});
  CHECK(run.err.find("warning") == std::string::npos);  // Codex's other features: silent
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  // Codex 0.169's defaults: unified exec and view_image on, no hosted search.
  CHECK_FALSE(ToolNames(requests[0]).contains("web_search"));
  CHECK(ToolNames(requests[0]).contains("view_image"));
  CHECK(ToolNames(requests[0]).contains("exec_command"));
  CHECK_FALSE(ToolNames(requests[0]).contains("shell"));
  // --search is web_search = "live": the hosted search is offered.
  run = RunOk(*env, {"--search", "exec", "hi"});
  CHECK(run.err.find("warning") == std::string::npos);
  CHECK(ToolNames(env->server().requests_to("/responses").back()).contains("web_search"));
  // Codex's feature names with a counterpart here.
  RunOk(*env, {"exec", "--disable", "view_image", "--disable", "unified_exec", "hi"});
  auto names = ToolNames(env->server().requests_to("/responses").back());
  CHECK_FALSE(names.contains("view_image"));
  CHECK_FALSE(names.contains("exec_command"));
  CHECK(names.contains("shell"));
  RunOk(*env, {"exec", "-c", "features.unified_exec=false", "--enable", "unified_exec", "hi"});
  names = ToolNames(env->server().requests_to("/responses").back());
  CHECK(names.contains("exec_command"));
  CHECK_FALSE(names.contains("shell"));
  RunOk(*env, {"--enable", "web_search_request", "exec", "hi"});
  CHECK(ToolNames(env->server().requests_to("/responses").back()).contains("web_search"));
  RunOk(*env, {"exec", "-c", "web_search=\"disabled\"", "hi"});
  CHECK_FALSE(ToolNames(env->server().requests_to("/responses").back()).contains("web_search"));
  auto bad = Run(*env, {"exec", "-c", "web_search=\"sometimes\"", "hi"});
  CHECK(bad.exit_code == 2);
}

TEST_CASE("codex features list: the features that act here, their stage and effective state") {
  auto env = MakeEnv(R"([])", "[features]\nview_image = false\nsome_codex_feature = true\n");
  auto run = RunOk(*env, {"features", "list"});
  CHECK(run.err.empty());
  // Codex's table form: name and stage padded, then true|false.
  CHECK(run.out ==
        "default_mode_request_user_input  under development  false\n"
        "multi_agent                      deprecated         true\n"
        "shell_snapshot                   stable             true\n"
        "unified_exec                     stable             true\n"
        "view_image                       stable             false\n"
        "web_search_cached                deprecated         false\n"
        "web_search_request               deprecated         false\n");
  run = RunOk(*env, {"--disable", "unified_exec", "features", "list", "--enable", "view_image"});
  CHECK_THAT(run.out,
             Catch::Contains("unified_exec                     stable             false\n"));
  CHECK_THAT(run.out,
             Catch::Contains("view_image                       stable             true\n"));
  run = RunOk(*env, {"-c", "web_search=\"live\"", "features", "list"});
  CHECK_THAT(run.out,
             Catch::Contains("web_search_request               deprecated         true\n"));
  run = RunOk(*env, {"--disable", "shell_snapshot", "features", "list"});
  CHECK_THAT(run.out,
             Catch::Contains("shell_snapshot                   stable             false\n"));
  CHECK(env->server().requests_to("/responses").empty());
}

TEST_CASE(
    "codex features enable/disable write [features] as Codex does; bad input writes nothing") {
  auto env = MakeEnv(R"([])",
                     "# my settings\n[tui]\nnotifications = true # note\n\n"
                     "[mcp_servers.a]\ncommand = \"x\"\n");
  const auto config = [&] {
    std::ifstream in(env->codex_home() / "config.toml");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string original = config();
  REQUIRE(original.find("notifications = true # note\n\n[mcp_servers.a]\ncommand = \"x\"\n") !=
          std::string::npos);
  // Codex 0.169's words, on stdout; the table appended, the rest kept.
  auto run = RunOk(*env, {"features", "enable", "unified_exec"});
  CHECK(run.out == "Enabled feature `unified_exec` in config.toml.\n");
  CHECK(run.err.empty());
  run = RunOk(*env, {"features", "disable", "view_image"});
  CHECK(run.out == "Disabled feature `view_image` in config.toml.\n");
  CHECK(config() == original + "\n[features]\nunified_exec = true\nview_image = false\n");
  // What it wrote acts here.
  CHECK_THAT(RunOk(*env, {"features", "list"}).out,
             Catch::Contains("view_image                       stable             false\n"));
  // A Codex feature without a counterpart here is written, and the user told so.
  run = RunOk(*env, {"features", "enable", "multi_agent_v2"});
  CHECK(run.out == "Enabled feature `multi_agent_v2` in config.toml.\n");
  REQUIRE(ErrorLines(run.err).empty());
  CHECK_THAT(run.err, Catch::Contains("does not act on `multi_agent_v2`"));
  const std::string written = config();
  CHECK(written.ends_with("view_image = false\nmulti_agent_v2 = true\n"));

  // Bad input: one line naming what was wrong, exit 2, the file untouched.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"features", "enable", "no_such_feature"},
        {"features", "disable", "no_such_feature"},
        {"-p", "work", "features", "enable", "unified_exec"},
        {"features", "enable"}}) {
    run = Run(*env, args);
    INFO(args.back() << ": " << run.err);
    CHECK(run.exit_code == 2);
    auto lines = ErrorLines(run.err);
    REQUIRE(lines.size() == 1);
    CHECK(run.out.empty());
    CHECK(config() == written);
    if (args.back() == "no_such_feature") {
      CHECK_THAT(lines[0], Catch::Contains("'no_such_feature'"));
      CHECK_THAT(lines[0], Catch::Contains("codex features list"));
    }
  }
  // A config.toml that does not parse: named with its line, nothing written.
  const std::string broken = "# fine\nmodel = \"unterminated\n[features]\n";
  std::ofstream(env->codex_home() / "config.toml", std::ios::trunc) << broken;
  run = Run(*env, {"features", "enable", "unified_exec"});
  CHECK(run.exit_code == 2);
  auto lines = ErrorLines(run.err);
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Contains((env->codex_home() / "config.toml").string() + ":2:"));
  CHECK(config() == broken);
  CHECK(env->server().requests_to("/responses").empty());
}

TEST_CASE("developer_instructions, model_instructions_file and CLAUDE.md reach the model") {
  auto env = MakeEnv(R"(["ok", "ok"])", R"(developer_instructions = "Answer in French."
model_instructions_file = "base.md"
project_doc_fallback_filenames = ["CLAUDE.md"]
)");
  std::ofstream(env->codex_home() / "base.md") << "You are the base from a file.";
  std::ofstream(env->workdir() / "CLAUDE.md") << "Use tabs, never spaces.";
  auto run = RunOk(*env, {"exec", "hi"});
  CHECK(run.err.find("warning") == std::string::npos);
  auto requests = env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].body["instructions"] == "You are the base from a file.");
  bool developer = false;
  bool docs = false;
  for (const auto& item : requests[0].InputItems()) {
    const std::string text = item.dump();
    if (item.value("role", "") == "developer" &&
        text.find("Answer in French.") != std::string::npos) {
      developer = true;
    }
    if (item.value("role", "") == "user" &&
        text.find("Use tabs, never spaces.") != std::string::npos) {
      docs = true;
    }
  }
  CHECK(developer);
  CHECK(docs);
  // With an AGENTS.md beside it, CLAUDE.md is not read.
  std::ofstream(env->workdir() / "AGENTS.md") << "Agents file wins.";
  RunOk(*env, {"exec", "again"});
  const std::string second = env->server().requests_to("/responses").back().InputItems().dump();
  CHECK(second.find("Agents file wins.") != std::string::npos);
  CHECK(second.find("Use tabs, never spaces.") == std::string::npos);
}

TEST_CASE("codex completion without a shell prints the bash script, as Codex") {
  auto env = MakeEnv(R"([])");
  auto plain = RunOk(*env, {"completion"});
  auto bash = RunOk(*env, {"completion", "bash"});
  CHECK(plain.out == bash.out);
  CHECK(plain.out.find("complete ") != std::string::npos);
  CHECK(RunOk(*env, {"completion", "zsh"}).out != bash.out);
}

TEST_CASE("exec --ignore-user-config does not read config.toml; -c still applies") {
  auto env = MakeEnv(R"(["from flags"])", "model_reasoning_effort = \"not-a-level\"\n");
  // With the file read, its bad value is an error.
  CHECK(Run(*env, {"exec", "hi"}).exit_code == 2);
  const std::string provider = "model_providers.scripted={name=\"scripted\",base_url=\"" +
                               env->server().base_url() +
                               "\",env_key=\"SCRIPTED_API_KEY\",wire_api=\"responses\"}";
  auto run = RunOk(*env, {"exec", "--ignore-user-config", "-c", "model_provider=\"scripted\"", "-c",
                          provider, "-m", "flag-model", "hi"});
  CHECK(run.out == "from flags\n");
  CHECK(env->server().requests_to("/responses").at(0).body["model"] == "flag-model");
}

// Codex's history.max_bytes: history.jsonl keeps only its newest entries that fit.
TEST_CASE("history.max_bytes caps history.jsonl, the newest prompts kept") {
  std::string input;
  for (int i = 0; i < 10; ++i) input += "prompt number " + std::to_string(i) + " with padding\n";
  for (const bool capped : {true, false}) {
    INFO("capped " << capped);
    auto env = MakeEnv(R"({"default": "ok"})", capped ? "[history]\nmax_bytes = 400\n" : "");
    auto run = Run(*env, {}, input);  // the interactive session, reading lines from stdin
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    CHECK(run.err.find("max_bytes") == std::string::npos);  // honoured, not warned
    REQUIRE(env->server().requests_to("/responses").size() == 10);
    const fs::path history = env->codex_home() / "history.jsonl";
    const std::string text = ReadFile(history);
    CHECK_THAT(text, Catch::Contains("prompt number 9 with padding"));
    if (capped) {
      CHECK(fs::file_size(history) <= 400);
      CHECK(text.find("prompt number 0 ") == std::string::npos);
    } else {
      CHECK(fs::file_size(history) > 400);
      CHECK_THAT(text, Catch::Contains("prompt number 0 "));
    }
  }
}

}  // namespace
}  // namespace codex::testing
