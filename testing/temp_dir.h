// Temporary directories for tests and benches (test support: linked only into
// test and bench binaries, never into codex).
//
//   codex::testing::TempDir dir("apply-patch-");       // $TMPDIR or /tmp
//   codex::testing::TempDir outside("runner-", codex::testing::NonTempBase());
//   std::ofstream(dir.path() / "a.txt") << "x\n";
//
// Not thread-safe; each TempDir is owned by one test.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace codex::testing {

// Where temporary files go: $TMPDIR when set and not empty, else /tmp.
std::filesystem::path TempBase();

// True when `dir` lies under /tmp or $TMPDIR, which workspace-write may write.
bool UnderTemp(const std::filesystem::path& dir);

// A writable place outside /tmp and $TMPDIR, for a directory a sandbox must
// not reach through its temp-dir rule: beside the running binary, else
// /var/tmp, else $HOME (CI may build under /tmp; the first candidate is
// returned when none qualifies, so callers should check UnderTemp).
std::filesystem::path NonTempBase();

// A fresh directory `<base>/<prefix>XXXXXX` (its canonical path), removed with
// everything in it on destruction. When it cannot be made the process prints
// why and aborts: a test must not run in a wrong place.
class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "codex-test-",
                   const std::filesystem::path& base = TempBase());
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // path() / name, as a string.
  std::string File(std::string_view name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// A temporary CODEX_HOME: `path` is the directory (removed with `dir`);
// Write replaces its config.toml.
struct TempHome {
  TempHome() : dir("codex-home-"), path(dir.path()) {}
  void Write(std::string_view config_toml) const;

  TempDir dir;
  std::filesystem::path path;
};

}  // namespace codex::testing
