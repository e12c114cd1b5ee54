#include "base/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
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
