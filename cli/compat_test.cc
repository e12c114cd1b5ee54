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
  CHECK(MissingCodexSubcommand({"codex", "features", "list"}) == "features");
  CHECK_FALSE(MissingCodexSubcommand({"codex", "mcp", "list"}));
  CHECK_FALSE(MissingCodexSubcommand({"codex", "exec", "apply"}));  // a prompt word
  CHECK_FALSE(MissingCodexSubcommand({"codex", "apply the patch"}));
  CHECK_FALSE(MissingCodexSubcommand({"codex"}));
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
