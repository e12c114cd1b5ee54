// What running git the safe way (core/host_git.h) costs: the `@` popup's
// `git ls-files` and /diff's `git diff` in a small repository, through
// HostGit (read-only sandbox + neutralising config; the config listing once)
// and, for comparison, plain git started the same way without either.
// Prints milliseconds per call; no assertion (tests hold the behaviour).
//
//   host_git_bench [CALLS]   (default 30)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/host_git.h"
#include "core/sandboxed_runner.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 30;
  const fs::path dir = fs::temp_directory_path() / ("host_git_bench." + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string setup = "cd '" + dir.string() +
                            "' && git init -q . && for i in $(seq 1 200); do echo $i > f$i.txt; "
                            "done && git add . && git -c user.email=b@e -c user.name=b commit -qm "
                            "init && echo x >> f1.txt";
  if (std::system(setup.c_str()) != 0) {
    std::fprintf(stderr, "error: could not make the repository in %s\n", dir.c_str());
    return 1;
  }
  auto open = codex::core::HostGit::Open(dir.string());
  if (!open.ok()) {
    std::fprintf(stderr, "error: %s\n", open.status().message().c_str());
    return 1;
  }
  std::printf("host git (%s), %d calls each, 200-file repository\n",
              open->sandboxed() ? "read-only sandbox + neutralising config"
                                : "no sandbox here: neutralising config only",
              calls);
  auto time = [&](const char* label, auto&& fn) {
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) fn();
    std::printf("  %-44s %7.2f ms/call\n", label, Ms(Clock::now() - start) / calls);
  };
  time("HostGit::Open (config listing)", [&] { (void)codex::core::HostGit::Open(dir.string()); });
  time("HostGit::Run ls-files -z --cached --others", [&] {
    (void)open->Run({"ls-files", "-z", "--cached", "--others", "--exclude-standard"});
  });
  time("HostGit::Run diff", [&] { (void)open->Run({"diff", "--no-ext-diff", "--color=never"}); });
  codex::core::SandboxedRunner runner;
  codex::core::CancelToken never;
  time("plain git ls-files (no sandbox, no config)", [&] {
    codex::core::CommandSpec spec;
    spec.argv = {"git", "-C", dir.string(), "ls-files", "-z", "--cached", "--others"};
    spec.sandbox.mode = codex::core::SandboxMode::kDangerFullAccess;
    (void)runner.Run(spec, never);
  });
  std::error_code ec;
  fs::remove_all(dir, ec);
  return 0;
}
