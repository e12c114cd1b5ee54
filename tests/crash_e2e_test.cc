// The promise "a crash at any moment loses nothing that was committed",
// attacked with SIGKILL at the worst moments of the commands that write
// (docs/threat-model.md, "Crashes"). Each kill point is chosen from progress
// the test observes (a file growing in the process's open descriptors, rows
// appearing in the store), never from elapsed time; each case kills at
// several points and then checks what a user would find: the old file or the
// whole new one, every session whole or absent, a rerun that finishes with
// nothing doubled.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "storage/open_database.h"
#include "tests/e2e_checks.h"
#include "tests/e2e_support.h"

namespace codex::testing {
namespace {

using e2e::MakeEnv;
using e2e::Run;

std::unique_ptr<storage::SessionDatabase> OpenSqlite(const std::filesystem::path& path) {
  core::StoreLocation loc;
  loc.path = path.string();
  auto db = storage::OpenDatabase(loc);
  INFO(db.status().ToString());
  REQUIRE(db.ok());
  return std::move(*db);
}

// One session of `items` user/assistant messages of about 2 KB each; its id.
std::string SeedBigSession(storage::SessionDatabase& store, int items) {
  core::NewSession spec;
  spec.cwd = "/w";
  spec.items = {core::UserMessage("the first question")};
  spec.turn_id = "t1";
  auto s = store.CreateSession(spec);
  REQUIRE(s.ok());
  std::vector<core::Item> batch;
  for (int i = 0; i < items; ++i) {
    std::string text = "item " + std::to_string(i) + " ";
    while (text.size() < 2000) text += "lorem ipsum dolor sit amet " + std::to_string(i) + " ";
    batch.push_back(i % 2 == 0 ? core::AssistantMessage(text) : core::UserMessage(text));
  }
  REQUIRE(store.Append(s->id, s->head_item_id, "t1", batch).ok());
  return s->id;
}

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// True once `pid` has exited (a zombie not yet reaped counts).
bool Exited(pid_t pid) {
  const std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z';
}

// The size of the largest regular file `pid` holds open under `dir` (a file
// being written there, named or not); -1 when none.
int64_t OpenFileSizeUnder(pid_t pid, const std::filesystem::path& dir) {
  const std::string fds = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(fds.c_str());
  if (d == nullptr) return -1;
  int64_t largest = -1;
  const std::string prefix = dir.string() + "/";
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string link = fds + "/" + e->d_name;
    char target[4096];
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0) continue;
    if (std::string(target, static_cast<size_t>(n)).rfind(prefix, 0) != 0) continue;
    struct stat st {};
    if (::stat(link.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      largest = std::max<int64_t>(largest, st.st_size);
    }
  }
  ::closedir(d);
  return largest;
}

// Polls `ready` until it holds, then SIGKILLs `child`; returns true when the
// kill landed on a running process (false: it ended first). Bounded: a
// child that neither gets there nor ends within two minutes fails the test.
bool KillWhen(ChildProcess& child, const std::function<bool()>& ready) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (!ready()) {
    if (Exited(child.pid())) return false;
    if (std::chrono::steady_clock::now() > until) FAIL("the kill point never came");
    std::this_thread::yield();
  }
  REQUIRE(child.Signal(SIGKILL).ok());
  return true;
}

// The names in `dir`.
std::set<std::string> Names(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

// ---------------------------------------------------------------------------
// Door 3: sessions export -o FILE.

TEST_CASE("crash: export killed while writing never leaves a cut file or destroys the old one") {
  auto env = MakeEnv(R"(["unused"])");
  std::string id;
  {
    auto store = OpenSqlite(env->codex_home() / "sessions.db");
    id = SeedBigSession(*store, 12'000);  // about 25 MB of export
  }
  const auto out_dir = env->root() / "exports";
  std::filesystem::create_directories(out_dir);
  for (const std::string format : {"jsonl", "markdown"}) {
    SECTION(format) {
      // The whole export, for comparing.
      const auto reference = env->root() / ("reference." + format);
      auto whole =
          Run(*env, {"sessions", "export", id, "--format", format, "-o", reference.string()});
      INFO(whole.err);
      REQUIRE(whole.exit_code == 0);
      const std::string complete = ReadAll(reference);
      REQUIRE(complete.size() > 20'000'000);
      // The user's earlier file under the name, private.
      const auto out = out_dir / ("session." + format);
      const std::string precious = "an earlier export the user keeps\n";
      std::ofstream(out, std::ios::binary) << precious;
      std::filesystem::permissions(
          out, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
      // Kill once the file being written holds 1 byte, a quarter, a half,
      // three quarters of the export.
      int landed = 0;
      for (const int64_t at : {int64_t{1}, static_cast<int64_t>(complete.size() / 4),
                               static_cast<int64_t>(complete.size() / 2),
                               static_cast<int64_t>(complete.size() * 3 / 4)}) {
        auto child = ChildProcess::Spawn(
            env->CodexCommand({"sessions", "export", id, "--format", format, "-o", out.string()}));
        REQUIRE(child.ok());
        const pid_t pid = (*child)->pid();
        const bool killed =
            KillWhen(**child, [&] { return OpenFileSizeUnder(pid, out_dir) >= at; });
        auto ended = (*child)->Wait(std::chrono::seconds(60));
        REQUIRE(ended.ok());
        INFO("kill point " << at << " of " << complete.size() << " bytes");
        if (killed && ended->term_signal == SIGKILL) ++landed;
        // The name holds the old file or the whole export, never a part.
        const std::string now = ReadAll(out);
        CHECK((now == precious || now == complete));
        if (ended->exit_code == 0) CHECK(now == complete);
        // No half-written file left beside it either.
        CHECK(Names(out_dir) == std::set<std::string>{out.filename().string()});
        // The rerun's result must be checked against the old file each time.
        std::ofstream(out, std::ios::binary | std::ios::trunc) << precious;
      }
      WARN(format << ": " << landed << " of 4 kills landed while the export was written");
      auto rerun = Run(*env, {"sessions", "export", id, "--format", format, "-o", out.string()});
      INFO(rerun.err);
      REQUIRE(rerun.exit_code == 0);
      CHECK(ReadAll(out) == complete);
      // The replaced file keeps the mode the user gave it.
      CHECK((std::filesystem::status(out).permissions() & std::filesystem::perms::all) ==
            (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
    }
  }
}

}  // namespace
}  // namespace codex::testing
