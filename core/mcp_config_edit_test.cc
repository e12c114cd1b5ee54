#include "core/mcp_config_edit.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/config.h"
#include "testing/temp_dir.h"

using namespace codex::core;
using codex::testing::TempHome;

namespace {

std::string ReadConfig(const TempHome& home) {
  std::ifstream in(home.path / "config.toml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("mcp add writes Codex's format and keeps the rest of the file byte for byte") {
  TempHome home;
  const std::string original = "# my settings\nmodel = \"m\" # inline note\n\n[tui]\nx = 1\n";
  home.Write(original);
  McpServerConfig stdio;
  stdio.name = "srv";
  stdio.command = "node";
  stdio.args = {"server.js", "--flag"};
  stdio.env = {{"A", "1"}, {"B", "two"}};
  REQUIRE(WriteMcpServer(home.path.string(), stdio).ok());
  McpServerConfig http;
  http.name = "web";
  http.url = "https://example.com/mcp";
  http.bearer_token_env_var = "TOK";
  REQUIRE(WriteMcpServer(home.path.string(), http).ok());
  CHECK(ReadConfig(home) == original +
                                "\n[mcp_servers.srv]\ncommand = \"node\"\nargs = [\"server.js\", "
                                "\"--flag\"]\n\n[mcp_servers.srv.env]\nA = \"1\"\nB = \"two\"\n"
                                "\n[mcp_servers.web]\nurl = \"https://example.com/mcp\"\n"
                                "bearer_token_env_var = \"TOK\"\n");
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE(config.ok());
  CHECK(config->mcp_servers.at("srv").args == std::vector<std::string>{"server.js", "--flag"});
  CHECK(config->mcp_servers.at("srv").env.at("B") == "two");
  CHECK(config->mcp_servers.at("web").bearer_token_env_var == "TOK");

  // Adding an existing name replaces it, as Codex does; the other stays.
  McpServerConfig again;
  again.name = "srv";
  again.command = "other";
  REQUIRE(WriteMcpServer(home.path.string(), again).ok());
  config = LoadConfig(home.path.string(), {});
  REQUIRE(config.ok());
  CHECK(config->mcp_servers.at("srv").command == "other");
  CHECK(config->mcp_servers.at("srv").env.empty());
  CHECK(config->mcp_servers.contains("web"));

  REQUIRE(RemoveMcpServer(home.path.string(), "srv").value());
  REQUIRE(RemoveMcpServer(home.path.string(), "web").value());
  CHECK(ReadConfig(home) == original);
  auto absent = RemoveMcpServer(home.path.string(), "web");
  REQUIRE(absent.ok());
  CHECK_FALSE(*absent);
}

TEST_CASE("mcp remove refuses an inline table and leaves the file alone") {
  TempHome home;
  const std::string original = "[mcp_servers]\nx = { command = \"srv\" }\n";
  home.Write(original);
  auto removed = RemoveMcpServer(home.path.string(), "x");
  REQUIRE_FALSE(removed.ok());
  CHECK(removed.status().message().find("by hand") != std::string::npos);
  CHECK(ReadConfig(home) == original);
}

TEST_CASE("mcp add into a missing config.toml creates it; a broken one is not touched") {
  TempHome home;
  std::filesystem::remove(home.path / "config.toml");
  McpServerConfig s;
  s.name = "a";
  s.command = "srv";
  REQUIRE(WriteMcpServer(home.path.string(), s).ok());
  CHECK(ReadConfig(home) == "[mcp_servers.a]\ncommand = \"srv\"\n");
  home.Write("model = [\n");
  CHECK_FALSE(WriteMcpServer(home.path.string(), s).ok());
  CHECK(ReadConfig(home) == "model = [\n");
}

TEST_CASE("the trust record is Codex's table; replaced in place, the rest kept byte for byte") {
  TempHome home;
  const std::string original =
      "# mine\nmodel = \"m\"\n\n[projects.\"/a\"]\nother = 1\n\n[tui]\nx = 1\n";
  home.Write(original);
  // A table that exists gets the line; one that does not is appended.
  REQUIRE(WriteProjectTrust(home.path.string(), "/a", "trusted").ok());
  REQUIRE(WriteProjectTrust(home.path.string(), "/b \"q\"", "untrusted").ok());
  CHECK(ReadConfig(home) ==
        "# mine\nmodel = \"m\"\n\n[projects.\"/a\"]\nother = 1\ntrust_level = \"trusted\"\n\n"
        "[tui]\nx = 1\n\n[projects.\"/b \\\"q\\\"\"]\ntrust_level = \"untrusted\"\n");
  // Asked again: the line is replaced, not added.
  REQUIRE(WriteProjectTrust(home.path.string(), "/a", "untrusted").ok());
  const std::string now = ReadConfig(home);
  CHECK(now.find("trust_level = \"trusted\"") == std::string::npos);
  CHECK(now.find("[projects.\"/a\"]\nother = 1\ntrust_level = \"untrusted\"\n\n[tui]") !=
        std::string::npos);
  // A form the edit cannot make sense of is refused, the file untouched.
  TempHome inline_home;
  inline_home.Write("projects = { \"/a\" = { trust_level = \"trusted\" } }\n");
  auto s = WriteProjectTrust(inline_home.path.string(), "/c", "trusted");
  CHECK(!s.ok());
  CHECK(s.message().find("by hand") != std::string::npos);
  CHECK(ReadConfig(inline_home) == "projects = { \"/a\" = { trust_level = \"trusted\" } }\n");
}

TEST_CASE("a directory's name cannot write config through the trust record") {
  // The user answers "Trust this folder?" in a directory a cloned repository
  // (or the model) named: quotes, newlines and brackets in the name stay in
  // the table's key; no key such as notify or sandbox_mode appears.
  TempHome home;
  home.Write("model = \"m\"\n");
  const std::string name =
      "/w/x\"]\nnotify = [\"/tmp/evil\"]\nsandbox_mode = \"danger-full-access\"\n[y.\"\\";
  REQUIRE(WriteProjectTrust(home.path.string(), name, "trusted").ok());
  TempHome reread;
  std::filesystem::copy_file(home.path / "config.toml", reread.path / "config.toml",
                             std::filesystem::copy_options::overwrite_existing);
  auto config = LoadConfig(reread.path.string(), {});
  REQUIRE(config.ok());
  CHECK(config->notify.empty());
  CHECK(config->sandbox_mode == SandboxMode::kReadOnly);
  const std::string text = ReadConfig(home);
  INFO(text);
  CHECK(text.find("\nnotify") == std::string::npos);
  CHECK(text.find("\nsandbox_mode") == std::string::npos);
}

TEST_CASE("features enable/disable: Codex's [features] line, the rest of the file byte for byte") {
  TempHome home;
  const std::string original =
      "# my settings\nmodel = \"m\" # inline note\n\n[mcp_servers.a]\ncommand = \"x\"\n";
  home.Write(original);
  // No [features] table: appended, as the real Codex 0.169 writes it.
  REQUIRE(WriteFeatureFlag(home.path.string(), "unified_exec", true).ok());
  REQUIRE(WriteFeatureFlag(home.path.string(), "view_image", false).ok());
  CHECK(ReadConfig(home) == original + "\n[features]\nunified_exec = true\nview_image = false\n");
  auto config = LoadConfig(home.path.string(), {});
  REQUIRE(config.ok());
  CHECK(config->unified_exec);
  CHECK_FALSE(config->view_image);

  // An existing key in a table followed by others: its value changes in place,
  // its comment stays; a new key goes to the end of the table, not of the file.
  TempHome table_home;
  const std::string table =
      "[features]\n# keep me\nview_image = true # trailing\n\n[profiles.p]\nmodel = \"y\"\n";
  table_home.Write(table);
  REQUIRE(WriteFeatureFlag(table_home.path.string(), "view_image", false).ok());
  REQUIRE(WriteFeatureFlag(table_home.path.string(), "multi_agent", true).ok());
  CHECK(ReadConfig(table_home) ==
        "[features]\n# keep me\nview_image = false # trailing\nmulti_agent = true\n\n"
        "[profiles.p]\nmodel = \"y\"\n");
  // Set again to the same value: the file does not change.
  REQUIRE(WriteFeatureFlag(table_home.path.string(), "multi_agent", true).ok());
  CHECK(ReadConfig(table_home).find("multi_agent = true\n\n[profiles.p]") != std::string::npos);
}

TEST_CASE("features enable refuses what it cannot edit; nothing written") {
  // A file that does not parse: the error names file and line.
  TempHome broken;
  broken.Write("# first\nmodel = \"x\n[features]\n");
  auto s = WriteFeatureFlag(broken.path.string(), "unified_exec", true);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find((broken.path / "config.toml").string() + ":2:") != std::string::npos);
  CHECK(s.message().find('\n') == std::string::npos);
  CHECK(ReadConfig(broken) == "# first\nmodel = \"x\n[features]\n");
  // Inline table and dotted keys: refused by hand, file untouched.
  for (const std::string& text : {std::string("features = { view_image = true }\n"),
                                  std::string("features.view_image = true\nmodel = \"x\"\n")}) {
    TempHome h;
    h.Write(text);
    auto r = WriteFeatureFlag(h.path.string(), "unified_exec", true);
    INFO(text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.message().find("by hand") != std::string::npos);
    CHECK(ReadConfig(h) == text);
  }
}

TEST_CASE(
    "an edit of a symlinked config.toml (a dotfiles checkout) writes the target, keeps the link") {
  TempHome home;
  TempHome dotfiles;
  dotfiles.Write("model = \"kept\"\n");
  const std::filesystem::path link = home.path / "config.toml";
  const std::filesystem::path target = dotfiles.path / "config.toml";
  std::filesystem::create_symlink(target, link);
  REQUIRE(WriteFeatureFlag(home.path.string(), "unified_exec", false).ok());
  // The link was replaced by a plain file: the dotfiles never saw the edit.
  CHECK(std::filesystem::is_symlink(link));
  CHECK(ReadConfig(dotfiles) == "model = \"kept\"\n\n[features]\nunified_exec = false\n");
  CHECK(ReadConfig(home) == ReadConfig(dotfiles));
  // No temporary file is left beside either.
  for (const auto& dir : {home.path, dotfiles.path}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
    }
  }
}
