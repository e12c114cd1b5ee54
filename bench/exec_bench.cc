// exec_bench: wall time and peak RSS of the `codex` binary against the
// scripted Responses server on loopback (an in-process ScriptedServer).
//
//   1. One `codex exec PROMPT` turn with one shell tool call (two requests),
//      a new session each run. Project targets: under 20 ms and 15 MiB.
//   2. `codex exec resume ID PROMPT` (one request, one answer) on a session
//      of about 1,000 items, built first by a turn that makes many tool calls.
//   3. 100 `true` tool calls in one exec per sandbox mode: what confinement
//      adds to one command (issue 24: at most 2 ms).
//   4. `codex --version`: start-up and exit alone (issue 24: at most 2 ms).
//   5. Against the real Codex 0.169 (npm @openai/codex@0.169.0, installed by
//      scripts/install-mcp-test-servers.sh into build/codex-compat/codex, or
//      --real-codex PATH): the same scripted endpoint, the same exec_command
//      calls, one exec turn and the 100-call tool loop; issue 24's targets are
//      at least 20x and 12x faster. Each also without features.shell_snapshot
//      (every login command re-runs the login files), the figure before it.
//      The loop's floor: 100 `bash -c true` alone, one and 25 at a time,
//      against what the 12x target allows.
//
// Each figure is the median (and max) over N runs; peak RSS is the child's
// ru_maxrss from wait4 (in bench/spawn_measured, so that it is codex's own),
// CPU its user + system time with the children it waited for (on a loaded
// machine wall time includes waiting for a core; CPU does not). The server runs in this process, so
// its CPU time is not charged to codex but shares the machine.
//
// Usage: exec_bench [--runs N (default 21)] [--items M (default 1000)] [--codex PATH]
//                   [--real-codex PATH]
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tests/e2e_support.h"

extern char** environ;

namespace {

using codex::testing::CodexTestEnv;
using Clock = std::chrono::steady_clock;

struct Sample {
  double ms = 0;
  double cpu_ms = 0;  // user + system, with the children it waited for (commands, servers)
  double rss_mib = 0;
  int exit_code = -1;
};

// bench/spawn_measured beside this program.
std::string SpawnMeasuredPath() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "spawn_measured";
  std::string self(buf, static_cast<size_t>(n));
  return self.substr(0, self.find_last_of('/') + 1) + "spawn_measured";
}

// Runs `argv` with `env` (full environment, KEY=VALUE) in `cwd`, stdio on
// /dev/null, through spawn_measured (peak RSS of the command alone).
Sample RunMeasured(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   const std::string& cwd) {
  static const std::string spawner = SpawnMeasuredPath();
  std::vector<std::string> full = {spawner, cwd};
  full.insert(full.end(), argv.begin(), argv.end());
  std::vector<char*> cargv;
  for (const auto& a : full) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<char*> cenv;
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "error: pipe: %s\n", std::strerror(errno));
    std::exit(1);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    std::fprintf(stderr, "error: cannot run %s: %s\n", cargv[0], std::strerror(rc));
    std::exit(1);
  }
  std::string line;
  char buf[256];
  for (ssize_t got; (got = ::read(out[0], buf, sizeof buf)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    line.append(buf, static_cast<size_t>(got));
  }
  ::close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Sample s;
  long rss_kib = 0;
  if (std::sscanf(line.c_str(), "%lf %lf %ld %d", &s.ms, &s.cpu_ms, &rss_kib, &s.exit_code) != 4) {
    std::fprintf(stderr, "error: %s did not measure %s\n", spawner.c_str(), argv[0].c_str());
    std::exit(1);
  }
  s.rss_mib = static_cast<double>(rss_kib) / 1024.0;
  return s;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double Max(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

void Report(const char* what, const std::vector<Sample>& samples, const char* target) {
  std::vector<double> ms, cpu, rss;
  for (const auto& s : samples) {
    ms.push_back(s.ms);
    cpu.push_back(s.cpu_ms);
    rss.push_back(s.rss_mib);
  }
  std::printf(
      "%-44s wall median %7.1f ms (max %7.1f)   CPU median %7.1f ms   peak RSS median %5.1f MiB "
      "(max %5.1f)%s\n",
      what, Median(ms), Max(ms), Median(cpu), Median(rss), Max(rss), target);
}

// The inherited environment minus anything that could redirect codex, plus `env`.
std::vector<std::string> ChildEnv(const CodexTestEnv& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    if (key == "OPENAI_API_KEY" || key == "OPENAI_BASE_URL" || key == "CODEX_API_KEY" ||
        env.Env().count(key)) {
      continue;
    }
    out.push_back(kv);
  }
  for (const auto& [k, v] : env.Env()) out.push_back(k + "=" + v);
  return out;
}

int Usage(const char* message) {
  std::fprintf(stderr,
               "error: %s; usage: exec_bench [--runs N] [--items M] [--codex PATH] "
               "[--real-codex PATH]\n",
               message);
  return 2;
}

// The real Codex 0.169's native binary where scripts/install-mcp-test-servers.sh
// puts it: <build>/codex-compat/codex/..., <build> being the directory above
// the one holding our codex (build/cli/codex).
std::string DefaultRealCodex(const std::string& codex) {
  const auto build = std::filesystem::path(codex).parent_path().parent_path();
  return (build /
          "codex-compat/codex/node_modules/@openai/codex-linux-x64/vendor/"
          "x86_64-unknown-linux-musl/bin/codex")
      .string();
}

// One run of `argv` (argv[0] = the binary) in `env`; nullopt after printing
// why when it fails or makes fewer than `at_least` requests (more than
// `at_most`, when given).
std::optional<Sample> RunChecked(CodexTestEnv& env, const std::vector<std::string>& argv,
                                 size_t at_least, std::optional<size_t> at_most,
                                 const std::string& what) {
  const size_t before = env.server().requests_to("/responses").size();
  Sample s = RunMeasured(argv, ChildEnv(env), env.workdir());
  if (s.exit_code != 0) {
    std::fprintf(stderr, "error: %s failed (exit %d)\n", what.c_str(), s.exit_code);
    return std::nullopt;
  }
  const size_t made = env.server().requests_to("/responses").size() - before;
  if (made < at_least || (at_most && made > *at_most)) {
    std::fprintf(stderr, "error: %s made %zu requests, not the %zu scripted\n", what.c_str(), made,
                 at_least);
    return std::nullopt;
  }
  return s;
}

codex::Result<std::unique_ptr<CodexTestEnv>> MakeBenchEnv(const std::string& script,
                                                          const std::string& binary) {
  codex::testing::CodexTestEnvOptions options;
  options.codex_binary = binary;
  auto env = CodexTestEnv::Create(script, options);
  if (!env.ok()) std::fprintf(stderr, "error: %s\n", env.status().message().c_str());
  return env;
}

// `script` once per run in a fresh environment (a new CODEX_HOME, an empty
// work directory), running `argv`; nullopt after printing why when a run fails.
std::optional<std::vector<Sample>> RunFresh(const std::string& script,
                                            const std::vector<std::string>& argv, int runs,
                                            const std::string& what) {
  std::vector<Sample> samples;
  for (int i = 0; i < runs; ++i) {
    auto env = MakeBenchEnv(script, argv[0]);
    if (!env.ok()) return std::nullopt;
    auto s = RunChecked(**env, argv, 2, std::nullopt, what);
    if (!s) return std::nullopt;
    samples.push_back(*s);
  }
  return samples;
}

// The same, in one environment kept across runs (a second and later run, as a
// user's are: the store and the state files exist): one uncounted run first;
// `script` must answer each run's requests in turn ("repeat"), and every run
// must make exactly `requests` of them.
std::optional<std::vector<Sample>> RunWarm(const std::string& script,
                                           const std::vector<std::string>& argv, int runs,
                                           size_t requests, const std::string& what) {
  auto env = MakeBenchEnv(script, argv[0]);
  if (!env.ok()) return std::nullopt;
  std::vector<Sample> samples;
  for (int i = 0; i <= runs; ++i) {
    auto s = RunChecked(**env, argv, requests, requests, what);
    if (!s) return std::nullopt;
    if (i > 0) samples.push_back(*s);
  }
  return samples;
}

double MedianMs(const std::vector<Sample>& samples) {
  std::vector<double> ms;
  for (const auto& s : samples) ms.push_back(s.ms);
  return Median(ms);
}

double MedianCpuMs(const std::vector<Sample>& samples) {
  std::vector<double> ms;
  for (const auto& s : samples) ms.push_back(s.cpu_ms);
  return Median(ms);
}

// The floor of the 100-call loop that no implementation can go under on this
// machine: `calls` `bash -c true` (the shell Codex's exec_command semantics
// start for every call), `width` at a time (1: one after another; 25: as the
// loop's responses of 25 calls run them), with nothing else: no codex, no
// server, no sandbox, no snapshot. Wall and CPU (the children's) of the whole.
Sample ShellFloor(int calls, int width) {
  const std::vector<std::string> args = {"/bin/bash", "-c", "true"};
  std::vector<char*> cargv;
  for (const auto& a : args) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  char* cenv[] = {const_cast<char*>("PATH=/usr/bin:/bin"), nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  rusage before{}, after{};
  ::getrusage(RUSAGE_CHILDREN, &before);
  const auto start = Clock::now();
  Sample s;
  s.exit_code = 0;
  for (int i = 0; i < calls && s.exit_code == 0; i += width) {
    std::vector<pid_t> wave;
    for (int j = i; j < std::min(calls, i + width); ++j) {
      pid_t pid = -1;
      if (posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), cenv) != 0) {
        s.exit_code = 127;
        break;
      }
      wave.push_back(pid);
    }
    for (pid_t pid : wave) {
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) s.exit_code = 1;
    }
  }
  s.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  ::getrusage(RUSAGE_CHILDREN, &after);
  auto ms = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
  };
  s.cpu_ms = ms(after.ru_utime) - ms(before.ru_utime) + ms(after.ru_stime) - ms(before.ru_stime);
  posix_spawn_file_actions_destroy(&actions);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 21;
  int items = 1000;
  std::string codex = codex::testing::CodexBinaryPath();
  std::string real_codex;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return Usage(("missing value after " + arg).c_str());
    const std::string value = argv[++i];
    if (arg == "--runs") {
      runs = std::atoi(value.c_str());
      if (runs < 1) return Usage("--runs needs a positive number");
    } else if (arg == "--items") {
      items = std::atoi(value.c_str());
      if (items < 10) return Usage("--items needs a number >= 10");
    } else if (arg == "--codex") {
      codex = value;
    } else if (arg == "--real-codex") {
      real_codex = value;
    } else {
      return Usage(("unknown option " + arg).c_str());
    }
  }
  if (!codex.empty()) codex = std::filesystem::absolute(codex).string();
  if (codex.empty() || ::access(codex.c_str(), X_OK) != 0) {
    return Usage(("the codex binary '" + codex + "' is not executable; pass --codex PATH").c_str());
  }
  std::printf("exec_bench: %s, %d runs per figure\n", codex.c_str(), runs);

  // 4. `codex --version`: the loader, static initialisers and exit.
  {
    std::vector<Sample> samples;
    for (int i = 0; i <= runs; ++i) {
      Sample s = RunMeasured({codex, "--version"}, {}, "/");
      if (s.exit_code != 0) {
        std::fprintf(stderr, "error: codex --version failed (exit %d)\n", s.exit_code);
        return 1;
      }
      if (i > 0) samples.push_back(s);  // the first run warms the page cache
    }
    Report("codex --version", samples, "   target <= 2 ms");
  }

  // 1. One turn with a tool call, a new session each run.
  {
    const std::string script =
        R"({"responses": [{"repeat": )" + std::to_string(runs + 1) +
        R"(, "entries": [{"output": [{"shell": ["echo", "hi"]}]}, "done"]}]})";
    codex::testing::CodexTestEnvOptions options;
    options.codex_binary = codex;
    auto env = CodexTestEnv::Create(script, options);
    if (!env.ok()) {
      std::fprintf(stderr, "error: %s\n", env.status().message().c_str());
      return 1;
    }
    const auto child_env = ChildEnv(**env);
    std::vector<Sample> samples;
    for (int i = 0; i <= runs; ++i) {
      Sample s = RunMeasured({codex, "exec", "run echo"}, child_env, (*env)->workdir());
      if (s.exit_code != 0) {
        std::fprintf(stderr, "error: codex exec failed (exit %d)\n", s.exit_code);
        return 1;
      }
      if (i > 0) samples.push_back(s);  // the first run creates the database
    }
    Report("exec turn with one tool call (2 requests)", samples, "   target < 20 ms, <= 12 MiB");
  }

  // 3. The tool loop: 100 `true` tool calls (4 responses of 25) in one
  // `codex exec`, under each sandbox mode. The difference between a confined
  // mode and danger-full-access, divided by 100, is what confinement costs one
  // command inside a session (issue 24: at most 2 ms).
  {
    std::string batch;
    for (int c = 0; c < 25; ++c) {
      if (c) batch += ",";
      batch += R"({"shell": ["true"]})";
    }
    const std::string script = R"({"responses": [{"repeat": 4, "entries": [{"output": [)" + batch +
                               R"(]}]}, "done"], "default": "done"})";
    double full_ms = 0;
    for (const char* mode : {"danger-full-access", "read-only", "workspace-write"}) {
      std::vector<Sample> samples;
      for (int i = 0; i < std::max(3, runs / 4); ++i) {
        codex::testing::CodexTestEnvOptions options;
        options.codex_binary = codex;
        auto env = CodexTestEnv::Create(script, options);
        if (!env.ok()) {
          std::fprintf(stderr, "error: %s\n", env.status().message().c_str());
          return 1;
        }
        Sample s = RunMeasured({codex, "exec", "--sandbox", mode, "run true 100 times"},
                               ChildEnv(**env), (*env)->workdir());
        if (s.exit_code != 0) {
          std::fprintf(stderr, "error: codex exec --sandbox %s failed (exit %d)\n", mode,
                       s.exit_code);
          return 1;
        }
        samples.push_back(s);
      }
      char what[80];
      std::snprintf(what, sizeof what, "100 `true` calls in one exec, %s", mode);
      std::vector<double> ms;
      for (const auto& s : samples) ms.push_back(s.ms);
      char extra[80] = "";
      if (std::string(mode) == "danger-full-access") {
        full_ms = Median(ms);
      } else {
        std::snprintf(extra, sizeof extra, "   +%.2f ms a command (target <= 2)",
                      (Median(ms) - full_ms) / 100.0);
      }
      Report(what, samples, extra);
    }
  }

  // 2. Resume a session of ~`items` items: one turn of calls, 25 per response.
  {
    const int calls = items / 2;
    const int responses = (calls + 24) / 25;
    std::string batch;
    for (int c = 0; c < 25; ++c) {
      if (c) batch += ",";
      batch += R"({"shell": ["echo", "call {{n}}.)" + std::to_string(c) + R"("]})";
    }
    const std::string script = R"({"responses": [{"repeat": )" + std::to_string(responses) +
                               R"(, "entries": [{"output": [)" + batch +
                               R"(]}]}, "built"], "default": "resumed {{n}}"})";
    codex::testing::CodexTestEnvOptions options;
    options.codex_binary = codex;
    auto env = CodexTestEnv::Create(script, options);
    if (!env.ok()) {
      std::fprintf(stderr, "error: %s\n", env.status().message().c_str());
      return 1;
    }
    const auto child_env = ChildEnv(**env);
    Sample build = RunMeasured({codex, "exec", "make many calls"}, child_env, (*env)->workdir());
    if (build.exit_code != 0) {
      std::fprintf(stderr, "error: building the long session failed (exit %d)\n", build.exit_code);
      return 1;
    }
    std::printf("built a session of %d tool calls (%d items) in %.0f ms\n", responses * 25,
                responses * 50, build.ms);
    std::vector<Sample> samples;
    for (int i = 0; i < runs; ++i) {
      Sample s = RunMeasured({codex, "exec", "resume", "--last", "one more"}, child_env,
                             (*env)->workdir());
      if (s.exit_code != 0) {
        std::fprintf(stderr, "error: codex exec resume failed (exit %d)\n", s.exit_code);
        return 1;
      }
      samples.push_back(s);
    }
    char what[64];
    std::snprintf(what, sizeof what, "exec resume of a %d-item session", responses * 50);
    Report(what, samples, "");
  }

  // 5. Against the real Codex 0.169: exec_command calls (the tool both offer
  // for this model; ours with features.unified_exec), danger-full-access for
  // both so that neither pays for a sandbox the other lacks here. The server
  // accepts resent item ids: Codex 0.169 resends them.
  if (real_codex.empty()) real_codex = DefaultRealCodex(codex);
  real_codex = std::filesystem::absolute(real_codex).string();  // runs start in a work directory
  if (::access(real_codex.c_str(), X_OK) != 0) {
    std::printf(
        "vs Codex 0.169: skipped, %s is not executable (run "
        "scripts/install-mcp-test-servers.sh, or pass --real-codex PATH)\n",
        real_codex.c_str());
    return 0;
  }
  {
    const std::string call = R"({"function_call": "exec_command", "arguments": {"cmd": "true"}})";
    std::string batch;
    for (int c = 0; c < 25; ++c) batch += (c ? "," : "") + call;
    const std::string one_turn =
        R"({"allow_item_ids": true, "responses": [{"output": [{"function_call": "exec_command", )"
        R"("arguments": )"
        R"({"cmd": "echo hi"}}]}, "done"], "default": "done"})";
    const std::string one_turn_each_run =
        R"({"allow_item_ids": true, "responses": [{"repeat": )" + std::to_string(runs + 1) +
        R"(, "entries": [{"output": [{"function_call": "exec_command", "arguments": )"
        R"({"cmd": "echo hi"}}]}, "done"]}], "default": "done"})";
    const std::string loop =
        R"({"allow_item_ids": true, "responses": [{"repeat": 4, "entries": [{"output": [)" + batch +
        R"(]}]}, "done"], "default": "done"})";
    const std::vector<std::string> ours = {codex,
                                           "exec",
                                           "-c",
                                           "features.unified_exec=true",
                                           "--sandbox",
                                           "danger-full-access",
                                           "--skip-git-repo-check"};
    const std::vector<std::string> theirs = {real_codex, "exec", "--sandbox", "danger-full-access",
                                             "--skip-git-repo-check"};
    const int loop_runs = std::max(3, runs / 4);
    struct Case {
      const char* what;
      const std::string* script;
      const char* prompt;
      int runs;
      const char* target;
      const std::string* warm_script;  // null: no run in a kept environment
    };
    for (const Case& c : {Case{"one exec turn (exec_command echo hi)", &one_turn, "run echo", runs,
                               "20", &one_turn_each_run},
                          Case{"100 exec_command `true` calls in one exec", &loop,
                               "run true 100 times", loop_runs, "12", nullptr}}) {
      auto with_prompt = [&](std::vector<std::string> command) {
        command.push_back(c.prompt);
        return command;
      };
      auto a = RunFresh(*c.script, with_prompt(ours), c.runs, "codex exec");
      auto b = RunFresh(*c.script, with_prompt(theirs), c.runs, "Codex 0.169 exec");
      if (!a || !b) return 1;
      std::string label = std::string(c.what) + ", codex";
      Report(label.c_str(), *a, "");
      label = std::string(c.what) + ", Codex 0.169";
      Report(label.c_str(), *b, "");
      std::printf("  -> codex is %.1fx faster in wall time (target >= %sx), %.1fx less CPU\n",
                  MedianMs(*b) / MedianMs(*a), c.target, MedianCpuMs(*b) / MedianCpuMs(*a));
      if (c.warm_script == nullptr) {
        // The loop: how much of the target the shell alone already takes.
        for (int width : {1, 25}) {
          std::vector<Sample> floor;
          for (int i = 0; i < c.runs; ++i) floor.push_back(ShellFloor(100, width));
          if (std::any_of(floor.begin(), floor.end(),
                          [](const Sample& s) { return s.exit_code; })) {
            std::fprintf(stderr, "error: /bin/bash -c true failed\n");
            return 1;
          }
          Report(width == 1 ? "floor: 100 `bash -c true` alone, one at a time"
                            : "floor: 100 `bash -c true` alone, 25 at a time",
                 floor, "");
          std::printf(
              "  -> the %sx target allows %.1f ms for the whole loop; the shells alone take "
              "%.1f ms (%.0f%%)\n",
              c.target, MedianMs(*b) / std::atof(c.target), MedianMs(floor),
              100.0 * MedianMs(floor) * std::atof(c.target) / MedianMs(*b));
        }
      }
      if (c.warm_script != nullptr) {
        // A later run: the store, Codex's state files and the page cache exist.
        auto wa = RunWarm(*c.warm_script, with_prompt(ours), c.runs, 2, "codex exec (warm)");
        auto wb =
            RunWarm(*c.warm_script, with_prompt(theirs), c.runs, 2, "Codex 0.169 exec (warm)");
        if (!wa || !wb) return 1;
        label = std::string(c.what) + ", codex, existing CODEX_HOME";
        Report(label.c_str(), *wa, "");
        label = std::string(c.what) + ", Codex 0.169, existing CODEX_HOME";
        Report(label.c_str(), *wb, "");
        std::printf("  -> on a later run codex is %.1fx faster in wall time, %.1fx less CPU\n",
                    MedianMs(*wb) / MedianMs(*wa), MedianCpuMs(*wb) / MedianCpuMs(*wa));
      }
      // Before features.shell_snapshot: every call runs the login files.
      std::vector<std::string> off = ours;
      off.insert(off.begin() + 2, {"-c", "features.shell_snapshot=false"});
      auto o = RunFresh(*c.script, with_prompt(off), c.runs, "codex exec (no shell snapshot)");
      if (!o) return 1;
      label = std::string(c.what) + ", codex, shell_snapshot off";
      Report(label.c_str(), *o, "");
      std::printf("  -> the shell snapshot saves %.1f ms wall, %.1f ms CPU (%.1fx faster)\n",
                  MedianMs(*o) - MedianMs(*a), MedianCpuMs(*o) - MedianCpuMs(*a),
                  MedianMs(*o) / MedianMs(*a));
    }
  }
  return 0;
}
