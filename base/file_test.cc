#include "base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "base/scratch_dir_test.h"

using namespace codex;
namespace fs = std::filesystem;
using codex::base_test::ScratchDir;

TEST_CASE("ReadWholeFile reads every byte, NULs and all") {
  ScratchDir dir;
  std::string bytes(200'000, 'x');
  bytes[7] = '\0';
  const auto got = ReadWholeFile(dir.Write("f", bytes));
  REQUIRE(got.ok());
  CHECK(*got == bytes);
  CHECK(*ReadWholeFile(dir.Write("empty", "")) == "");
}

TEST_CASE("ReadWholeFile names the path and the cause, and never throws") {
  ScratchDir dir;
  const auto absent = ReadWholeFile((dir.path / "absent").string());
  CHECK(absent.status().code() == StatusCode::kNotFound);
  CHECK(absent.status().message().find("absent") != std::string::npos);
  // A directory opens but cannot be read: the ifstream way threw here.
  const auto directory = ReadWholeFile(dir.path.string());
  CHECK(directory.status().code() == StatusCode::kInvalidArgument);
  CHECK(directory.status().message() == dir.path.string() + ": is a directory, not a file");
  CHECK(ReadWholeFile(dir.path.string(), 100, /*regular_only=*/false).status().code() ==
        StatusCode::kFailedPrecondition);
  // A FIFO with no writer is refused at once, not waited on.
  const std::string fifo = (dir.path / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(ReadWholeFile(fifo).status().code() == StatusCode::kInvalidArgument);
  CHECK(ReadWholeFile(dir.Write("big", std::string(1000, 'b')), 999).status().code() ==
        StatusCode::kResourceExhausted);
  CHECK(*ReadWholeFile(dir.Write("fits", std::string(1000, 'b')), 1000) == std::string(1000, 'b'));
}

TEST_CASE("ReadWholeFile reads /proc files, whose size says 0, and a process gone meanwhile") {
  const auto self = ReadWholeFile("/proc/self/stat", 1 << 20, /*regular_only=*/false);
  REQUIRE(self.ok());
  CHECK(self->find(") ") != std::string::npos);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(ReadWholeFile("/proc/" + std::to_string(child) + "/stat", 1 << 20, false).status().code() ==
        StatusCode::kNotFound);
}

TEST_CASE("ReadToEnd reads a pipe to its end and names a descriptor that cannot be read") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const std::string bytes = std::string(100'000, 'p') + '\0' + "tail";
  const pid_t writer = ::fork();
  REQUIRE(writer >= 0);
  if (writer == 0) {
    ::close(fds[0]);
    const ssize_t n = ::write(fds[1], bytes.data(), bytes.size());
    ::_exit(n == static_cast<ssize_t>(bytes.size()) ? 0 : 1);
  }
  ::close(fds[1]);
  const auto got = ReadToEnd(fds[0], "stdin");
  ::close(fds[0]);
  int status = 0;
  ::waitpid(writer, &status, 0);
  REQUIRE(got.ok());
  CHECK(*got == bytes);
  // A directory (stdin redirected from one) and a descriptor open only for writing.
  ScratchDir dir;
  const int directory = ::open(dir.path.c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(directory >= 0);
  const auto from_directory = ReadToEnd(directory, "stdin");
  ::close(directory);
  CHECK(from_directory.status().code() == StatusCode::kFailedPrecondition);
  CHECK(from_directory.status().message() == "stdin: Is a directory");
  const int write_only = ::open("/dev/null", O_WRONLY);
  REQUIRE(write_only >= 0);
  CHECK(ReadToEnd(write_only, "stdin").status().message() == "stdin: Bad file descriptor");
  ::close(write_only);
}

TEST_CASE("WriteWholeFile writes every byte and names the cause of a failure") {
  ScratchDir dir;
  const std::string path = (dir.path / "out").string();
  const std::string bytes = std::string(100'000, 'w') + '\0' + "end";
  REQUIRE(WriteWholeFile(path, bytes).ok());
  CHECK(*ReadWholeFile(path) == bytes);
  REQUIRE(WriteWholeFile(path, "short").ok());  // truncated, not appended
  CHECK(*ReadWholeFile(path) == "short");
  CHECK(WriteWholeFile("/dev/full", "x").message() == "/dev/full: No space left on device");
  CHECK(WriteWholeFile(dir.path.string(), "x").message() == dir.path.string() + ": Is a directory");
  CHECK(WriteWholeFile((dir.path / "absent" / "f").string(), "x").code() ==
        StatusCode::kFailedPrecondition);
}

TEST_CASE(
    "ReplaceWholeFile replaces whole, keeps the mode, follows a link, leaves nothing beside") {
  ScratchDir dir;
  const std::string path = (dir.path / "out").string();
  REQUIRE(ReplaceWholeFile(path, "first").ok());
  CHECK(*ReadWholeFile(path) == "first");
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  struct stat before {};
  REQUIRE(::stat(path.c_str(), &before) == 0);
  REQUIRE(ReplaceWholeFile(path, std::string(100'000, 'r')).ok());
  CHECK(*ReadWholeFile(path) == std::string(100'000, 'r'));
  struct stat after {};
  REQUIRE(::stat(path.c_str(), &after) == 0);
  CHECK((after.st_mode & 07777) == 0600);
  CHECK(after.st_ino != before.st_ino);  // a new file renamed over the name, not rewritten
  // A symlink (a dotfiles checkout): the file it points to is replaced, the link stays.
  fs::create_directories(dir.path / "dotfiles");
  const std::string real = (dir.path / "dotfiles" / "config.toml").string();
  REQUIRE(ReplaceWholeFile(real, "old").ok());
  fs::create_symlink(real, dir.path / "link");
  REQUIRE(ReplaceWholeFile((dir.path / "link").string(), "through the link").ok());
  CHECK(fs::is_symlink(dir.path / "link"));
  CHECK(*ReadWholeFile(real) == "through the link");
  // Nothing but the names made on purpose.
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path)) names.insert(e.path().filename());
  CHECK(names == std::set<std::string>{"out", "dotfiles", "link"});
  // Not a regular file: written in place (a device, a FIFO); failures named.
  CHECK(ReplaceWholeFile("/dev/null", "x").ok());
  CHECK(ReplaceWholeFile("/dev/full", "x").message() == "/dev/full: No space left on device");
  CHECK(ReplaceWholeFile(dir.path.string(), "x").message() ==
        dir.path.string() + ": Is a directory");
  CHECK(ReplaceWholeFile((dir.path / "absent" / "f").string(), "x").message() ==
        (dir.path / "absent" / "f").string() + ": No such file or directory");
}

TEST_CASE("ReplaceWholeFile killed mid-write leaves the old file under the name") {
  ScratchDir dir;
  const std::string path = (dir.path / "out").string();
  REQUIRE(ReplaceWholeFile(path, "the old file").ok());
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(ready[0]);
    const std::string big(64 << 20, 'n');
    const char c = 'r';
    if (::write(ready[1], &c, 1) != 1) std::_Exit(3);
    (void)ReplaceWholeFile(path, big);
    std::_Exit(2);
  }
  ::close(ready[1]);
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  // Killed once a file it writes in the directory holds 1 MB of the new bytes.
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  const std::string prefix = dir.path.string() + "/";
  for (bool seen = false; !seen;) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fds, ec)) {
      std::error_code link_ec;
      const std::string target = fs::read_symlink(e.path(), link_ec).string();
      struct stat st {};
      if (!link_ec && target.rfind(prefix, 0) == 0 && ::stat(e.path().c_str(), &st) == 0 &&
          S_ISREG(st.st_mode) && st.st_size > (1 << 20)) {
        seen = true;
      }
    }
    if (ec) break;  // it ended
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) FAIL("the writer ended before the kill");
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  const std::string now = *ReadWholeFile(path);
  INFO(now.size() << " bytes under the name");
  CHECK((now == "the old file"));  // not a part of the new one
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path)) names.insert(e.path().filename());
  CHECK(names == std::set<std::string>{"out"});
}
