// store_open_bench: what opening the SQLite session store costs a run.
//   - a brand-new store (a first run: CODEX_HOME has no sessions.db yet), the
//     case exec_bench's fresh-home figures pay on every run;
//   - an existing store at the current schema (every later run).
// Each figure is the median (and max) wall and CPU time of
// SqliteSessionStore::Open in this process, over N stores in a scratch
// directory on the same file system as the default temp directory.
//
// Usage: store_open_bench [--runs N (default 41)]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "storage/sqlite_session_store.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"

namespace {

using codex::storage::SqliteSessionStore;
using codex::storage::testing::OpenOrDie;

struct Sample {
  double ms = 0;
  double cpu_ms = 0;
};

double CpuMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Wall and CPU time of one SqliteSessionStore::Open of `path` (closed after).
Sample TimeOpen(const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu = CpuMs();
  auto store = OpenOrDie<SqliteSessionStore>(path);
  Sample s;
  s.cpu_ms = CpuMs() - cpu;
  s.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return s;
}

void Report(const char* what, std::vector<Sample> samples) {
  auto median = [&](double Sample::*field) {
    std::vector<double> v;
    for (const Sample& s : samples) v.push_back(s.*field);
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double max = 0;
  for (const Sample& s : samples) max = std::max(max, s.ms);
  std::printf("%-44s %7.2f ms (max %7.2f)  cpu %6.2f ms\n", what, median(&Sample::ms), max,
              median(&Sample::cpu_ms));
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 41;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
      if (runs < 1) runs = 1;
    } else {
      std::fprintf(stderr, "usage: store_open_bench [--runs N]\n");
      return 2;
    }
  }
  codex::testing::TempDir dir("store-open-bench-");
  std::vector<Sample> fresh;
  std::vector<Sample> existing;
  for (int i = 0; i < runs; ++i) {
    const std::filesystem::path home = dir.path() / ("home" + std::to_string(i));
    const std::string path = (home / "sessions.db").string();
    std::filesystem::create_directory(home);
    fresh.push_back(TimeOpen(path));
    existing.push_back(TimeOpen(path));
  }
  std::printf("store_open_bench: %d runs, %s\n", runs, dir.path().c_str());
  Report("open a new store (first run)", fresh);
  Report("open an existing store", existing);
  return 0;
}
