// sandbox_bench: what the sandbox costs per command.
//
// Runs `true` N times (argument 1, default 100) through RunProcess without a
// sandbox, then under read-only and workspace-write confinement, each with
// the full layer stack (bubblewrap namespaces + helper applying Landlock,
// capabilities, seccomp) and with Landlock + seccomp applied in the forked
// child alone (bubblewrap hidden: the layer set before issue 10, and the
// fallback without user namespaces). Prints the mean and median wall time of
// each, the minimum (the cost on an idle machine), the overhead against the
// unsandboxed run (the median is the steadier figure on a busy machine), and the mean time
// Confinement::Prepare takes (ruleset, seccomp program, bwrap command line; the first one also
// probes bubblewrap). Each confined row is followed by the same runs through a per-session sandbox
// server (sandbox_server.h, what codex does), against an unconfined server as the baseline: issue
// 24's target is at most 2 ms.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "sandbox/confinement.h"
#include "sandbox/landlock.h"
#include "sandbox/launcher.h"
#include "sandbox/process.h"
#include "sandbox/sandbox_server.h"

using namespace codex::sandbox;
using Clock = std::chrono::steady_clock;

namespace {

struct Stats {
  double mean_ms = 0;
  double median_ms = 0;
  double min_ms = 0;  // the cost on a machine with nothing else to do
};

Stats Summarize(std::vector<double> samples) {
  Stats s;
  for (double v : samples) s.mean_ms += v;
  s.mean_ms /= static_cast<double>(samples.size());
  std::sort(samples.begin(), samples.end());
  s.median_ms = samples[samples.size() / 2];
  s.min_ms = samples.front();
  return s;
}

double MsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Times N runs of `true`; exits on the first failure.
Stats TimeRuns(int n, const ChildSetup* setup) {
  SpawnOptions options;
  options.argv = {"true"};
  options.child_setup = setup;
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) {
    const auto start = Clock::now();
    auto r = RunProcess(options);
    samples.push_back(MsSince(start));
    if (!r.ok() || r->exit_code != 0) {
      std::fprintf(stderr, "error: run %d failed: %s\n", i,
                   r.ok() ? "non-zero exit" : r.status().message().c_str());
      std::exit(1);
    }
  }
  return Summarize(std::move(samples));
}

// The same through a sandbox server (sandbox_server.h), as codex runs them.
Stats TimeServerRuns(int n, SandboxServer& server) {
  SpawnOptions options;
  options.argv = {"true"};
  std::vector<double> samples;
  for (int i = 0; i < n; ++i) {
    const auto start = Clock::now();
    auto r = server.Run(options);
    samples.push_back(MsSince(start));
    if (!r.ok() || r->exit_code != 0) {
      std::fprintf(stderr, "error: server run %d failed: %s\n", i,
                   r.ok() ? "non-zero exit" : r.status().message().c_str());
      std::exit(1);
    }
  }
  return Summarize(std::move(samples));
}

// Starts a server for `confinement`, times N runs through it; prints a row.
void ServerRow(const std::string& label, const Confinement& confinement, int n,
               const Stats& baseline) {
  const auto start = Clock::now();
  auto server = SandboxServer::Start(confinement);
  const double start_ms = MsSince(start);
  if (!server.ok()) {
    std::fprintf(stderr, "error: %s\n", server.status().message().c_str());
    std::exit(1);
  }
  TimeServerRuns(3, **server);  // warm up
  const Stats run = TimeServerRuns(n, **server);
  std::printf(
      "%-36s mean %7.3f ms  median %7.3f ms  min %7.3f ms  overhead: median %+.3f ms, "
      "min %+.3f ms (server start %.1f ms)\n",
      label.c_str(), run.mean_ms, run.median_ms, run.min_ms, run.median_ms - baseline.median_ms,
      run.min_ms - baseline.min_ms, start_ms);
}

SandboxSpec WorkspaceWrite() {
  char cwd[4096];
  SandboxSpec spec;
  spec.mode = Mode::kWorkspaceWrite;
  spec.writable_roots = {::getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : ".", "/tmp"};
  return spec;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 100;
  if (argc > 1) {
    n = std::atoi(argv[1]);
    if (n <= 0) {
      std::fprintf(stderr, "error: N must be a positive number of runs, got '%s'\n", argv[1]);
      return 2;
    }
  }
  std::printf("sandbox_bench: %d runs of `true` each (Landlock ABI %d)\n", n,
              landlock::AbiVersion());
  TimeRuns(5, nullptr);  // warm up the page cache and the allocator
  const Stats plain = TimeRuns(n, nullptr);
  std::printf("%-36s mean %7.3f ms  median %7.3f ms  min %7.3f ms\n", "unsandboxed", plain.mean_ms,
              plain.median_ms, plain.min_ms);

  // The per-session server without confinement: the baseline of the
  // confined server rows (what one command costs in a danger-full-access
  // session).
  SandboxSpec full;
  full.mode = Mode::kFullAccess;
  auto unconfined = Confinement::Prepare(full);
  if (!unconfined.ok()) return 1;
  auto full_server = SandboxServer::Start(**unconfined);
  if (!full_server.ok()) return 1;
  TimeServerRuns(3, **full_server);
  const Stats served = TimeServerRuns(n, **full_server);
  std::printf("%-36s mean %7.3f ms  median %7.3f ms  min %7.3f ms\n", "unsandboxed via server",
              served.mean_ms, served.median_ms, served.min_ms);

  const BwrapAvailability bwrap = ProbeBwrap();
  if (!bwrap.usable) std::printf("namespaces unavailable: %s\n", bwrap.reason.c_str());
  SandboxSpec read_only;
  read_only.mode = Mode::kReadOnly;
  for (bool namespaces : {true, false}) {
    if (namespaces && !bwrap.usable) continue;
    if (!namespaces) TEST_SetBwrapOverride(std::string());
    const char* layers = namespaces ? "ns+landlock+seccomp" : "landlock+seccomp";
    for (const auto& [name, spec] :
         {std::pair<const char*, SandboxSpec>{"read-only", read_only},
          std::pair<const char*, SandboxSpec>{"workspace-write", WorkspaceWrite()}}) {
      std::vector<double> prepare;
      std::unique_ptr<Confinement> confinement;
      for (int i = 0; i < n; ++i) {
        const auto start = Clock::now();
        auto c = Confinement::Prepare(spec);
        prepare.push_back(MsSince(start));
        if (!c.ok()) {
          std::fprintf(stderr, "error: %s\n", c.status().message().c_str());
          return 1;
        }
        confinement = std::move(*c);
      }
      TimeRuns(3, confinement.get());  // warm up
      const Stats run = TimeRuns(n, confinement.get());
      const Stats prep = Summarize(prepare);
      const std::string label = std::string(name) + " " + layers;
      std::printf(
          "%-36s mean %7.3f ms  median %7.3f ms  min %7.3f ms  overhead: median %+.3f ms, "
          "min %+.3f ms\n",
          label.c_str(), run.mean_ms, run.median_ms, run.min_ms, run.median_ms - plain.median_ms,
          run.min_ms - plain.min_ms);
      std::printf("%-36s mean %7.3f ms\n", ("  prepare " + label).c_str(), prep.mean_ms);
      ServerRow("  " + label + " via server", *confinement, n, served);
    }
  }
  TEST_SetBwrapOverride(std::nullopt);
  return 0;
}
