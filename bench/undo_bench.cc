// What /undo's snapshots cost a turn (core/undo.h): in a git work tree and in
// a plain directory of FILES small files, the first capture of a session
// (every file read), a warm capture (stat only), the end of a turn that
// changed 8 files (recorded) and the undo of it. Prints milliseconds; no
// assertion (core/undo_test holds the behaviour).
//
//   undo_bench [FILES]   (default 2000)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/undo.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

bool Fill(const fs::path& dir, int files) {
  for (int i = 0; i < files; ++i) {
    const fs::path p = dir / ("d" + std::to_string(i / 100)) / ("f" + std::to_string(i) + ".txt");
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "line one of file " << i << "\nline two\nline three\n";
  }
  return true;
}

int Run(const char* label, const fs::path& ws, const fs::path& state) {
  auto undo = codex::core::WorkspaceUndo::Open(ws.string(), state.string(),
                                               "0193aaaa-bbbb-7ccc-8ddd-eeeeffff0000");
  if (!undo.ok()) {
    std::fprintf(stderr, "error: %s\n", undo.status().message().c_str());
    return 1;
  }
  auto& u = **undo;
  auto step = [&](const char* what, auto&& fn) {
    const auto start = Clock::now();
    codex::Status s = fn();
    std::printf("  %-8s %-40s %8.1f ms\n", label, what, Ms(Clock::now() - start));
    if (!s.ok()) std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return s.ok();
  };
  bool ok = step("first capture (every file read)", [&] { return u.BeginTurn(); }) &&
            step("end of a turn that changed nothing", [&] { return u.EndTurn("").status(); });
  // Files written within 2 s of a capture are read again (racy stat); let
  // the fill age so the warm capture is stat only, as between real turns.
  ::sleep(3);
  ok = ok && step("warm capture (stat only)", [&] { return u.BeginTurn(); });
  for (int i = 0; i < 5; ++i)
    std::ofstream(ws / "d0" / ("f" + std::to_string(i) + ".txt")) << "x\n";
  std::ofstream(ws / "new1.txt") << "new\n";
  std::ofstream(ws / "new2.txt") << "new\n";
  fs::remove(ws / "d0" / "f9.txt");
  ok = ok && step("end of a turn that changed 8 files", [&] { return u.EndTurn("").status(); });
  std::string turn;
  ok = ok && step("plan (/undo's conflict check)", [&] {
         auto plan = u.Plan();
         if (plan.ok() && plan->has_value()) turn = (*plan)->turn_id;
         return plan.status();
       });
  ok = ok && step("undo (8 files restored)",
                  [&] { return u.Undo(turn, codex::core::UndoConflicts::kRefuse).status(); });
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int files = argc > 1 ? std::atoi(argv[1]) : 2000;
  const fs::path root = fs::temp_directory_path() / ("undo_bench." + std::to_string(getpid()));
  const fs::path git = root / "git";
  const fs::path plain = root / "plain";
  fs::create_directories(git);
  fs::create_directories(plain);
  Fill(git, files);
  Fill(plain, files);
  const std::string setup = "cd '" + git.string() +
                            "' && git init -q . && git add . && git -c user.email=b@e -c "
                            "user.name=b commit -qm init";
  if (std::system(setup.c_str()) != 0) {
    std::fprintf(stderr, "error: could not make the repository in %s\n", git.c_str());
    return 1;
  }
  std::printf("/undo snapshots, %d files of 3 lines\n", files);
  int rc = Run("git", git, root / "state");
  rc |= Run("plain", plain, root / "state");
  fs::remove_all(root);
  return rc;
}
