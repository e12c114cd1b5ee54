#include "core/config.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "testing/temp_dir.h"

using namespace codex::core;
namespace fs = std::filesystem;
using codex::testing::TempHome;

TEST_CASE("Defaults without a config file use the openai provider") {
  TempHome home;
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE(config.ok());
  CHECK(config->model_provider_id == "openai");
  CHECK(config->provider.env_key == "OPENAI_API_KEY");
  CHECK(config->provider.supports_compact);
  CHECK(config->approval_policy == ApprovalPolicy::kNever);
  CHECK(config->sandbox_mode == SandboxMode::kReadOnly);
}

TEST_CASE("Custom providers and -c overrides parsed as TOML") {
  TempHome home;
  home.Write(R"(model = "gpt-test"
model_provider = "local"
[model_providers.local]
name = "local"
base_url = "http://127.0.0.1:9/v1/"
env_key = "LOCAL_KEY"
wire_api = "responses"
query_params = { api-version = "2025-04-01" }
stream_max_retries = 2
)");
  ConfigOverrides o;
  o.dash_c = {"model_context_window=5000", "model_providers.local.send_item_ids=true",
              "model_reasoning_effort=high"};
  auto config = LoadConfig(home.path.string(), o);
  REQUIRE(config.ok());
  CHECK(config->model == "gpt-test");
  CHECK(config->provider.base_url == "http://127.0.0.1:9/v1");
  CHECK(config->provider.query_params.at("api-version") == "2025-04-01");
  CHECK(config->provider.stream_max_retries == 2);
  CHECK(config->provider.send_item_ids);
  CHECK(config->model_context_window == 5000);
  CHECK(config->model_reasoning_effort == "high");
}

TEST_CASE("Malformed config names the file and line") {
  TempHome home;
  home.Write("model = \"x\"\nmodel_provider = [unclosed\n");
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().code() == codex::StatusCode::kInvalidArgument);
  CHECK(config.status().message().find("config.toml:2") != std::string::npos);
}

TEST_CASE("Unknown provider and wrong types are rejected clearly") {
  TempHome home;
  home.Write("model_provider = \"nope\"\n");
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("[model_providers.nope]") != std::string::npos);
  home.Write("model = 3\n");
  config = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("'model' must be a string") != std::string::npos);
}

TEST_CASE("compaction: auto by default, the four modes accepted, anything else refused") {
  TempHome home;
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE(config.ok());
  CHECK(config->compaction == "auto");
  for (const char* mode : {"auto", "inline", "endpoint", "local"}) {
    ConfigOverrides o;
    o.dash_c = {std::string("compaction=\"") + mode + "\""};
    config = LoadConfig(home.path.string(), o);
    REQUIRE(config.ok());
    CHECK(config->compaction == mode);
  }
  home.Write("compaction = \"remote\"\n");
  config = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().code() == codex::StatusCode::kInvalidArgument);
  CHECK(config.status().message().find("compaction 'remote'") != std::string::npos);
  CHECK(config.status().message().find("auto, inline, endpoint, local") != std::string::npos);
  home.Write("compaction = true\n");
  config = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("'compaction' must be a string") != std::string::npos);
}

TEST_CASE("A missing API key names the variable") {
  ProviderInfo p;
  p.id = "x";
  p.env_key = "CODEX_TEST_SURELY_UNSET_KEY";
  auto key = ResolveApiKey(p);
  REQUIRE_FALSE(key.ok());
  CHECK(key.status().message().find("CODEX_TEST_SURELY_UNSET_KEY") != std::string::npos);
}

TEST_CASE("[shell_environment_policy] is parsed, defaults to Codex's, and rejects bad values") {
  TempHome home;
  {
    auto config = LoadConfig(home.path.string(), {});
    REQUIRE(config.ok());
    const auto& p = config->shell_environment_policy;
    CHECK(p.inherit == codex::sandbox::EnvInherit::kAll);
    CHECK(p.secrets == codex::sandbox::SecretFilter::kDropSecretLike);
    CHECK(p.exclude.empty());
    CHECK(p.include_only.empty());
    CHECK(p.set.empty());
  }
  home.Write(R"([shell_environment_policy]
inherit = "core"
ignore_default_excludes = true
exclude = ["AWS_*", "*_PASSWORD"]
include_only = ["PATH", "HOME", "MY_*"]
set = { MY_FLAG = "1", PATH = "/usr/bin" }
)");
  {
    auto config = LoadConfig(home.path.string(), {});
    REQUIRE(config.ok());
    const auto& p = config->shell_environment_policy;
    CHECK(p.inherit == codex::sandbox::EnvInherit::kCore);
    CHECK(p.secrets == codex::sandbox::SecretFilter::kKeep);
    CHECK(p.exclude == std::vector<std::string>{"AWS_*", "*_PASSWORD"});
    CHECK(p.include_only == std::vector<std::string>{"PATH", "HOME", "MY_*"});
    CHECK(p.set == std::map<std::string, std::string>{{"MY_FLAG", "1"}, {"PATH", "/usr/bin"}});
  }
  {
    ConfigOverrides o;
    o.dash_c = {"shell_environment_policy.inherit=none"};
    auto config = LoadConfig(home.path.string(), o);
    REQUIRE(config.ok());
    CHECK(config->shell_environment_policy.inherit == codex::sandbox::EnvInherit::kNone);
  }
  for (const auto& [bad, message] : std::vector<std::pair<std::string, std::string>>{
           {"inherit = \"some\"",
            "config: 'shell_environment_policy.inherit' must be one of \"all\", \"core\", "
            "\"none\""},
           {"ignore_default_excludes = 1",
            "config: 'shell_environment_policy.ignore_default_excludes' must be true or false"},
           {"exclude = \"X\"", "config: 'shell_environment_policy.exclude' must be an array"},
           {"include_only = [true]",
            "config: 'shell_environment_policy.include_only' must be an array"},
           {"set = 3", "config: 'shell_environment_policy.set' must be a table of strings"},
           {"set = { A = 2 }", "config: 'shell_environment_policy.set.A' must be a string"},
           {"excludes = []", "config: unknown key 'shell_environment_policy.excludes'"},
       }) {
    INFO(bad);
    home.Write("[shell_environment_policy]\n" + bad + "\n");
    auto config = LoadConfig(home.path.string(), {});
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().code() == codex::StatusCode::kInvalidArgument);
    CHECK_THAT(config.status().message(), Catch::StartsWith(message));
  }
  home.Write("shell_environment_policy = 3\n");
  CHECK_FALSE(LoadConfig(home.path.string(), {}).ok());
}

TEST_CASE("Unsupported keys are collected once each, known ones and their tables are not") {
  TempHome home;
  home.Write(R"(model = "m"
file_opener = "cursor"
show_raw_agent_reasoning = true
not_a_codex_key = 1
mcp_servers = { x = { command = "y" } }
[history]
persistence = "none"
max_bytes = 10
[tools]
web_search = true
[shell_environment_policy]
inherit = "core"
)");
  ConfigOverrides o;
  o.dash_c = {"disable_response_storage=true"};
  auto config = LoadConfig(home.path.string(), o);
  REQUIRE(config.ok());
  CHECK(config->warnings ==
        std::vector<std::string>{
            "config key 'disable_response_storage' is not supported; it is ignored",
            "config key 'not_a_codex_key' is not supported; it is ignored"});
  CHECK(config->file_opener == "cursor");  // Codex's file_opener, honoured
  CHECK(config->show_raw_agent_reasoning);
  CHECK_FALSE(config->history_persistence);
  CHECK(config->history_max_bytes == 10);  // Codex's history.max_bytes, honoured
  o.strict = true;
  auto strict = LoadConfig(home.path.string(), o);
  REQUIRE_FALSE(strict.ok());
  CHECK(strict.status().code() == codex::StatusCode::kInvalidArgument);
  CHECK(strict.status().message().find("disable_response_storage") != std::string::npos);
}

TEST_CASE("Enum keys name the allowed values") {
  TempHome home;
  for (const auto& [kv, words] : std::vector<std::pair<std::string, std::string>>{
           {"model_reasoning_summary=\"loud\"", "auto, concise, detailed, none"},
           {"model_verbosity=\"chatty\"", "low, medium, high"},
           {"model_reasoning_effort=\"max\"", "none, minimal, low, medium, high, xhigh"}}) {
    ConfigOverrides o;
    o.dash_c = {kv};
    auto config = LoadConfig(home.path.string(), o);
    INFO(kv);
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().message().find(words) != std::string::npos);
  }
  ConfigOverrides ok;
  ok.dash_c = {"model_verbosity=\"high\"", "model_reasoning_summary=\"none\""};
  auto config = LoadConfig(home.path.string(), ok);
  REQUIRE(config.ok());
  CHECK(config->model_verbosity == "high");
  CHECK(config->model_reasoning_summary == "none");
}

TEST_CASE("Profiles merge tables over the file, -c over the profile") {
  TempHome home;
  home.Write(R"(model = "base"
profile = "chosen"
[sandbox_workspace_write]
network_access = true
[profiles.chosen]
model = "from-profile"
[profiles.chosen.sandbox_workspace_write]
writable_roots = ["/x"]
[profiles.other]
model = "other"
)");
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE(config.ok());
  CHECK(config->model == "from-profile");
  CHECK(config->profile == "chosen");
  CHECK(config->sandbox_network_access);  // merged, not replaced
  CHECK(config->writable_roots == std::vector<std::string>{"/x"});
  ConfigOverrides o;
  o.profile = "other";
  o.dash_c = {"model=\"dash\""};
  config = LoadConfig(home.path.string(), o);
  REQUIRE(config.ok());
  CHECK(config->model == "dash");
  CHECK(config->profile == "other");
  o.profile = "missing";
  CHECK_FALSE(LoadConfig(home.path.string(), o).ok());
}

TEST_CASE("Model price tables: cached_input defaults to input; bad values are named") {
  TempHome home;
  home.Write(R"([model_prices."gpt-5-codex"]
input = 1.25
cached_input = 0.125
output = 10
[model_prices.mini]
input = 0.25
output = 2.0
)");
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE(config.ok());
  REQUIRE(config->model_prices.size() == 2);
  CHECK(config->model_prices.at("gpt-5-codex").cached_input == 0.125);
  CHECK(config->model_prices.at("gpt-5-codex").output == 10.0);
  CHECK(config->model_prices.at("mini").cached_input == 0.25);
  CHECK(config->warnings.empty());

  ConfigOverrides negative;
  negative.dash_c = {"model_prices.mini.output=-1"};
  auto bad = LoadConfig(home.path.string(), negative);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("model_prices.mini.output") != std::string::npos);

  ConfigOverrides typo;
  typo.dash_c = {"model_prices.mini.outptu=1"};
  auto unknown = LoadConfig(home.path.string(), typo);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("unknown key 'model_prices.mini.outptu'") !=
        std::string::npos);
}

TEST_CASE(
    "sandbox_workspace_write: exclude_slash_tmp and exclude_tmpdir_env_var reach the policy") {
  TempHome home;
  home.Write(R"([sandbox_workspace_write]
exclude_slash_tmp = true
network_access = true
)");
  ConfigOverrides o;
  o.dash_c = {"sandbox_workspace_write.exclude_tmpdir_env_var=true"};
  auto config = LoadConfig(home.path.string(), o);
  REQUIRE(config.ok());
  CHECK(config->warnings.empty());
  const SandboxPolicy policy = SandboxPolicyFor(*config);
  CHECK(policy.exclude_slash_tmp);
  CHECK(policy.exclude_tmpdir_env_var);
  CHECK(policy.network);
  CHECK(policy.workspace_root == config->cwd);
  home.Write("[sandbox_workspace_write]\nexclude_slash_tmp = \"yes\"\n");
  auto bad = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("exclude_slash_tmp") != std::string::npos);
}

TEST_CASE("Keys Codex itself writes never warn, even under --strict-config (issue 25)") {
  TempHome home;
  home.Write(R"(model = "m"
windows_wsl_setup_acknowledged = true
[projects."/home/me/project"]
trust_level = "trusted"
[notice]
hide_full_access_warning = true
[notice.model_migrations]
"gpt-5" = "gpt-5.1"
[tui]
notifications = true
[features]
web_search_request = true
[mcp_servers.docs]
url = "https://example.invalid/mcp"
oauth_resource = "https://example.invalid"
scopes = ["read", "write"]
default_tools_approval_mode = "approve"
supports_parallel_tool_calls = true
[mcp_servers.docs.tools.search]
approval_mode = "approve"
)");
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE(config.ok());
  CHECK(config->warnings.empty());
  CHECK(config->mcp_servers.at("docs").url == "https://example.invalid/mcp");
  ConfigOverrides strict;
  strict.strict = true;
  CHECK(LoadConfig(home.path.string(), strict).ok());
}

TEST_CASE("An unknown mcp_servers key warns by its path; --strict-config makes it an error") {
  TempHome home;
  home.Write("[mcp_servers.x]\ncommand = \"srv\"\nfuture_knob = 3\n");
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE(config.ok());
  REQUIRE(config->warnings.size() == 1);
  CHECK(config->warnings[0].find("'mcp_servers.x.future_knob'") != std::string::npos);
  CHECK(config->mcp_servers.at("x").command == "srv");
  ConfigOverrides strict;
  strict.strict = true;
  auto refused = LoadConfig(home.path.string(), strict);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("mcp_servers.x.future_knob") != std::string::npos);
}

TEST_CASE("developer_instructions, model_instructions_file, project_doc_fallback_filenames") {
  TempHome home;
  home.Write(R"(developer_instructions = "Always answer in French."
model_instructions_file = "base.md"
project_doc_fallback_filenames = ["CLAUDE.md", "GEMINI.md"]
)");
  std::ofstream(home.path / "base.md") << "You are a terse agent.";
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE(config.ok());
  CHECK(config->warnings.empty());
  CHECK(config->developer_instructions == "Always answer in French.");
  CHECK(config->instructions == "You are a terse agent.");
  CHECK(config->project_doc_fallback_filenames ==
        std::vector<std::string>{"CLAUDE.md", "GEMINI.md"});

  home.Write("model_instructions_file = \"missing.md\"\n");
  auto missing = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("missing.md") != std::string::npos);
  home.Write("project_doc_fallback_filenames = [\"../x.md\"]\n");
  CHECK_FALSE(LoadConfig(home.path.string(), {}).ok());
}

TEST_CASE("every file config names that is a directory, empty or unreadable is one clear error") {
  // These were read through istreambuf_iterator, which throws on a
  // directory: codex aborted ("terminate called...") instead of saying so.
  TempHome home;
  fs::create_directory(home.path / "adir");
  std::ofstream(home.path / "empty.md").flush();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"model_instructions_file = \"adir\"", "is a directory"},
      {"experimental_compact_prompt_file = \"adir\"", "is a directory"},
      {"model_catalog_json = \"adir\"", "is a directory"},
      {"model_instructions_file = \"empty.md\"", "is empty"},
      {"experimental_compact_prompt_file = \"empty.md\"", "is empty"},
      {"model_instructions_file = \"absent.md\"", "No such file"},
  };
  for (const auto& [line, cause] : cases) {
    INFO(line);
    home.Write(line + "\n");
    auto config = LoadConfig(home.path.string(), {});
    REQUIRE_FALSE(config.ok());
    const std::string& message = config.status().message();
    CHECK(message.find(line.substr(0, line.find(' '))) != std::string::npos);
    CHECK(message.find(cause) != std::string::npos);
    CHECK(message.find("fix the path or remove the key") != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
  // config.toml itself a directory: said, not read as an empty config.
  fs::remove(home.path / "config.toml");
  fs::create_directory(home.path / "config.toml");
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message().find("config.toml: is a directory") != std::string::npos);
}

TEST_CASE("a key of every kind given the wrong type is one error naming it, never ignored") {
  TempHome home;
  // Each: the line, and what the one error says. A table key given a scalar
  // was warned about as "not supported" (it is) or ignored without a word.
  for (const auto& [bad, message] : std::vector<std::pair<std::string, std::string>>{
           {"model = 3", "config: 'model' must be a string"},
           {"hide_agent_reasoning = \"yes\"",
            "config: 'hide_agent_reasoning' must be true or false"},
           {"project_doc_max_bytes = \"big\"",
            "config: 'project_doc_max_bytes' must be an integer"},
           {"notify = \"echo\"", "config: 'notify' must be an array of strings"},
           {"history = 1", "config: 'history' must be a table"},
           {"history = { retention_days = \"x\" }",
            "config: 'history.retention_days' must be an integer"},
           {"tools = 1", "config: 'tools' must be a table"},
           {"tools = { view_image = 1 }", "config: 'tools.view_image' must be true or false"},
           {"features = 3", "config: 'features' must be a table"},
           {"features = { unified_exec = \"on\" }",
            "config: 'features.unified_exec' must be true or false"},
           {"sandbox_workspace_write = 1", "config: 'sandbox_workspace_write' must be a table"},
           {"profiles = 1", "config: 'profiles' must be a table"},
           {"mcp_servers = 1", "config: mcp_servers must be a table"},
           {"shell_environment_policy = 1", "config: 'shell_environment_policy' must be a table"},
           // 2^32 + 1 days was read as 1 (an int cast): the sessions of the
           // last two days were removed at the next start.
           {"history = { retention_days = 4294967297 }",
            "config: history.retention_days must be a number of days from 0 to 2147483647"},
           {"history = { retention_days = -3 }",
            "config: history.retention_days must be a number of days from 0 to 2147483647"},
       }) {
    INFO(bad);
    home.Write(bad + "\n");
    auto config = LoadConfig(home.path.string(), {});
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().code() == codex::StatusCode::kInvalidArgument);
    CHECK_THAT(config.status().message(), Catch::StartsWith(message));
    CHECK(config.status().message().find('\n') == std::string::npos);
  }
}

TEST_CASE("-C naming a file or nothing says which, and what -C wants") {
  TempHome home;
  home.Write("");
  const std::string file = (home.path / "config.toml").string();
  for (const auto& [cwd, says] : std::vector<std::pair<std::string, std::string>>{
           {file, "is not a directory"},
           {file + "/below", "does not exist"},
           {(home.path / "absent").string(), "does not exist"}}) {
    INFO(cwd);
    ConfigOverrides o;
    o.cwd = cwd;
    auto config = LoadConfig(home.path.string(), o);
    REQUIRE_FALSE(config.ok());
    CHECK(config.status().message() ==
          "working directory '" + cwd + "' " + says + "; give -C an existing directory");
  }
}
