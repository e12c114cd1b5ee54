#include "core/config.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace codex::core;
namespace fs = std::filesystem;

namespace {

struct TempHome {
  TempHome() {
    char tmpl[] = "/tmp/codex-config-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempHome() { fs::remove_all(path); }
  void Write(const std::string& text) const { std::ofstream(path / "config.toml") << text; }
  fs::path path;
};

}  // namespace

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
