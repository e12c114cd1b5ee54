#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/compat_args.h"
#include "cli/image_input.h"
#include "cli/notify.h"

namespace codex::cli {
namespace {

using Args = std::vector<std::string>;

TEST_CASE("global options move in front of the subcommand, in order") {
  CHECK(HoistGlobalOptions({"codex", "exec", "-c", "model=\"x\"", "hi", "--config=a=1"}) ==
        Args{"codex", "-c", "model=\"x\"", "--config=a=1", "exec", "hi"});
  CHECK(HoistGlobalOptions({"codex", "exec", "resume", "--last", "-p", "fast", "go"}) ==
        Args{"codex", "-p", "fast", "exec", "resume", "--last", "go"});
  CHECK(HoistGlobalOptions({"codex", "exec", "-V"}) == Args{"codex", "-V", "exec"});
  CHECK(HoistGlobalOptions({"codex", "sessions", "list", "--strict-config", "-cmodel=y"}) ==
        Args{"codex", "--strict-config", "-cmodel=y", "sessions", "list"});
}

TEST_CASE("nothing after -- is moved, and -C is not -c") {
  CHECK(HoistGlobalOptions({"codex", "sandbox", "--", "grep", "-c", "x"}) ==
        Args{"codex", "sandbox", "--", "grep", "-c", "x"});
  CHECK(HoistGlobalOptions({"codex", "exec", "-C", "/tmp", "hi"}) ==
        Args{"codex", "exec", "-C", "/tmp", "hi"});
  CHECK(HoistGlobalOptions({"codex"}) == Args{"codex"});
  // codex sandbox takes a command line: its -c belongs to the command.
  CHECK(HoistGlobalOptions({"codex", "-c", "a=1", "sandbox", "bash", "-c", "echo hi"}) ==
        Args{"codex", "-c", "a=1", "sandbox", "bash", "-c", "echo hi"});
  // ... but "sandbox" as a prompt word of exec is just a word.
  CHECK(HoistGlobalOptions({"codex", "exec", "sandbox", "-c", "a=1"}) ==
        Args{"codex", "-c", "a=1", "exec", "sandbox"});
}

TEST_CASE("Codex subcommands this codex lacks are named; others are not") {
  CHECK(MissingCodexSubcommand({"codex", "apply"}) == "apply");
  CHECK(MissingCodexSubcommand({"codex", "-c", "a=1", "login", "--with-api-key"}) == "login");
  CHECK(MissingCodexSubcommand({"codex", "logout"}) == "logout");
  CHECK(MissingCodexSubcommand({"codex", "cloud"}) == "cloud");
  CHECK_FALSE(MissingCodexSubcommand({"codex", "features", "list"}));         // implemented
  CHECK_FALSE(MissingCodexSubcommand({"codex", "features", "enable", "x"}));  // implemented
  for (const char* word : {"agents", "doctor", "update", "mcp-server", "app-server", "debug",
                           "plugin", "queue", "exec-server", "a", "remote-control"}) {
    CHECK(MissingCodexSubcommand({"codex", word}) == word);
  }
  // review is implemented (codex review = codex exec review).
  CHECK_FALSE(MissingCodexSubcommand({"codex", "-m", "x", "--oss", "review"}));
  CHECK_FALSE(MissingCodexSubcommand({"codex", "exec", "review", "--base", "main"}));
  CHECK_FALSE(MissingCodexSubcommand({"codex", "exec", "--", "review"}));
  CHECK(MissingCodexSubcommand({"codex", "mcp", "login", "x"}) == "mcp login");
  CHECK_FALSE(MissingCodexSubcommand({"codex", "mcp", "add", "x", "--", "npx"}));
  CHECK(MissingCodexSubcommand({"codex", "sandbox", "uninstall"}) == "sandbox uninstall");
  CHECK_FALSE(MissingCodexSubcommand({"codex", "sandbox", "ls", "add"}));
  CHECK_FALSE(MissingCodexSubcommand({"codex", "mcp", "list"}));
  CHECK_FALSE(MissingCodexSubcommand({"codex", "exec", "apply"}));  // a prompt word
  CHECK_FALSE(MissingCodexSubcommand({"codex", "apply the patch"}));
  CHECK_FALSE(MissingCodexSubcommand({"codex"}));
}

TEST_CASE("run options before exec/resume/fork move after its word; others stay") {
  auto lower = [](Args a) { return LowerRunOptions(HoistGlobalOptions(a)); };
  CHECK(lower({"codex", "-m", "X", "-s", "workspace-write", "-C", "dir", "exec", "hi"}) ==
        Args{"codex", "exec", "-m", "X", "-s", "workspace-write", "-C", "dir", "hi"});
  CHECK(lower({"codex", "--oss", "-c", "a=1", "--full-auto", "exec", "resume", "--last"}) ==
        Args{"codex", "-c", "a=1", "exec", "--oss", "--full-auto", "resume", "--last"});
  CHECK(lower({"codex", "--dangerously-bypass-approvals-and-sandbox", "-mgpt", "resume"}) ==
        Args{"codex", "resume", "--dangerously-bypass-approvals-and-sandbox", "-mgpt"});
  CHECK(lower({"codex", "-i", "a.png", "b.png", "fork", "ID"}) ==
        Args{"codex", "fork", "-i", "a.png", "b.png", "ID"});
  // Interactive: the options stay on the top-level command.
  CHECK(lower({"codex", "-m", "X", "hello"}) == Args{"codex", "-m", "X", "hello"});
  // A prompt word that happens to follow -m's value is not a subcommand.
  CHECK(lower({"codex", "-m", "exec", "hi"}) == Args{"codex", "-m", "exec", "hi"});
  CHECK(lower({"codex", "--enable", "x", "exec", "--disable", "y", "hi"}) ==
        Args{"codex", "--enable", "x", "--disable", "y", "exec", "hi"});
}

TEST_CASE("Codex words with a home here are renamed") {
  CHECK(LowerRunOptions({"codex", "help"}) == Args{"codex", "--help"});
  CHECK(LowerRunOptions({"codex", "help", "exec"}) == Args{"codex", "exec", "--help"});
  CHECK(LowerRunOptions({"codex", "-c", "a=1", "archive", "ID"}) ==
        Args{"codex", "-c", "a=1", "sessions", "archive", "ID"});
  CHECK(LowerRunOptions({"codex", "delete", "ID"}) == Args{"codex", "sessions", "rm", "ID"});
  // codex review is codex exec review; run options before it follow it.
  CHECK(LowerRunOptions({"codex", "-c", "a=1", "-m", "X", "review", "--uncommitted"}) ==
        Args{"codex", "-c", "a=1", "exec", "review", "-m", "X", "--uncommitted"});
  CHECK(LowerRunOptions({"codex", "unarchive", "ID"}) ==
        Args{"codex", "sessions", "unarchive", "ID"});
  CHECK(LowerRunOptions({"codex", "exec", "delete", "it"}) ==
        Args{"codex", "exec", "delete", "it"});
}

// main.cc registers only exec's command tree when this word is exec or e.
TEST_CASE("the first command word skips global and run options, stops at --") {
  auto word = [](Args a) { return FirstCommandWord(LowerRunOptions(HoistGlobalOptions(a))); };
  CHECK(word({"codex", "exec", "hi"}) == "exec");
  CHECK(word({"codex", "-c", "a=1", "-m", "X", "e", "hi"}) == "e");
  CHECK(word({"codex", "exec", "-c", "a=1", "hi"}) == "exec");
  CHECK(word({"codex", "--enable", "f", "-s", "read-only", "exec", "resume", "--last"}) == "exec");
  CHECK(word({"codex", "-mX", "sessions", "list"}) == "sessions");
  CHECK(word({"codex", "help", "exec"}) == "exec");  // `codex exec --help`
  CHECK(word({"codex", "a prompt"}) == "a prompt");
  CHECK_FALSE(word({"codex", "--", "exec"}).has_value());
  CHECK_FALSE(word({"codex", "-c", "a=1"}).has_value());
  CHECK_FALSE(word({"codex"}).has_value());
}

TEST_CASE("--enable/--disable/--search are -c overrides") {
  CHECK(FeatureOverrides({"a", "b"}, {"c"}, true) ==
        Args{"features.a=true", "features.b=true", "features.c=false", "web_search=\"live\""});
  CHECK(FeatureOverrides({}, {}, false).empty());
}

TEST_CASE("image MIME types come from the content") {
  CHECK(SniffImageMime(std::string("\x89PNG\r\n\x1a\n\0\0", 10)) == "image/png");
  CHECK(SniffImageMime("\xff\xd8\xff\xe0rest") == "image/jpeg");
  CHECK(SniffImageMime("GIF89a....") == "image/gif");
  CHECK(SniffImageMime(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16)) == "image/webp");
  CHECK(SniffImageMime(std::string("RIFF\x10\0\0\0WAVEfmt ", 16)) == "");
  CHECK(SniffImageMime("%PDF-1.7") == "");
  CHECK(SniffImageMime("") == "");
}

TEST_CASE("base64 matches RFC 4648 vectors") {
  CHECK(Base64Encode("") == "");
  CHECK(Base64Encode("f") == "Zg==");
  CHECK(Base64Encode("fo") == "Zm8=");
  CHECK(Base64Encode("foo") == "Zm9v");
  CHECK(Base64Encode("foob") == "Zm9vYg==");
  CHECK(Base64Encode("fooba") == "Zm9vYmE=");
  CHECK(Base64Encode("foobar") == "Zm9vYmFy");
  CHECK(Base64Encode(std::string("\xff\xfe\0", 3)) == "//4A");
}

TEST_CASE("ImageDataUrl: data URL for images, one clear error otherwise") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("codex-compat-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto png = dir / "shot.txt";  // the name does not matter, the bytes do
  std::ofstream(png, std::ios::binary) << std::string("\x89PNG\r\n\x1a\nxyz", 11);
  auto url = ImageDataUrl(png.string());
  REQUIRE(url.ok());
  CHECK(*url == "data:image/png;base64," + Base64Encode(std::string("\x89PNG\r\n\x1a\nxyz", 11)));

  const auto text = dir / "notes.png";
  std::ofstream(text) << "just text";
  auto bad = ImageDataUrl(text.string());
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message().find("not a PNG, JPEG, GIF or WebP image") != std::string::npos);

  auto missing = ImageDataUrl((dir / "nope.png").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("no such file") != std::string::npos);
  auto directory = ImageDataUrl(dir.string());
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.status().message().find("not a regular file") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the notify argument is Codex's agent-turn-complete JSON") {
  const auto j =
      nlohmann::json::parse(NotificationJson({"th", "tu", "/w", {"fix \"it\""}, "done\nnow"}));
  CHECK(j == nlohmann::json{{"type", "agent-turn-complete"},
                            {"thread-id", "th"},
                            {"turn-id", "tu"},
                            {"cwd", "/w"},
                            {"input-messages", {"fix \"it\""}},
                            {"last-assistant-message", "done\nnow"}});
}

}  // namespace
}  // namespace codex::cli
