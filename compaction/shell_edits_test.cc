#include "compaction/shell_edits.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compaction/working_state.h"

using namespace codex;
using namespace codex::compaction;

namespace {

using Files = std::vector<std::string>;

Files Script(const std::string& script, const std::string& workdir = "") {
  return ShellScriptWrittenFiles(script, workdir);
}

core::Item ShellCall(const std::vector<std::string>& argv, const std::string& id,
                     const std::string& workdir = "") {
  nlohmann::json args = {{"command", argv}};
  if (!workdir.empty()) args["workdir"] = workdir;
  nlohmann::json j = {
      {"type", "function_call"}, {"name", "shell"}, {"arguments", args.dump()}, {"call_id", id}};
  return core::DecodeItem(j.dump()).value();
}

}  // namespace

TEST_CASE("Shell edits: output redirections in every spelling") {
  CHECK(Script("echo hi > a.txt") == Files{"a.txt"});
  CHECK(Script("echo hi>>b.txt") == Files{"b.txt"});
  CHECK(Script("make 2> err.log 1>out.log") == Files{"err.log", "out.log"});
  CHECK(Script("make &> all.log; make &>>all2.log") == Files{"all.log", "all2.log"});
  CHECK(Script("echo x >| forced.txt") == Files{"forced.txt"});
  CHECK(Script("echo x > 'with space.txt'") == Files{"with space.txt"});
  CHECK(Script("echo x > \"dq.txt\"") == Files{"dq.txt"});
  CHECK(Script("exec 3<> rw.txt") == Files{"rw.txt"});
  // Not files: fd duplication, closing, special devices, inputs.
  CHECK(Script("make >/dev/null 2>&1").empty());
  CHECK(Script("cmd 2>/dev/stderr >&2 3>&-").empty());
  CHECK(Script("sort < in.txt").empty());
  CHECK(Script("grep x <<< 'a > b'").empty());
  // A '>' inside quotes or a comment is data.
  CHECK(Script("echo 'a > b' \"c >> d\" # > e").empty());
}

TEST_CASE("Shell edits: sed -i, perl -i, tee, rm, touch, mv, cp") {
  CHECK(Script("sed -i 's/a/b/' src/x.cc src/y.cc") == Files{"src/x.cc", "src/y.cc"});
  CHECK(Script("sed -i.bak -e 's/a/b/' -e 's/c/d/' f.txt") == Files{"f.txt"});
  CHECK(Script("sed -ni 's/a/b/p' g.txt") == Files{"g.txt"});
  CHECK(Script("sed --in-place=.orig -f edits.sed h.txt") == Files{"h.txt"});
  CHECK(Script("sed -E 's/a/b/' notinplace.txt").empty());  // prints, writes nothing
  CHECK(Script("perl -pi -e 's/a/b/' p.pl") == Files{"p.pl"});
  CHECK(Script("perl -i.bak -pe 's/a/b/' q.txt r.txt") == Files{"q.txt", "r.txt"});
  CHECK(Script("perl -ne 'print' s.txt").empty());
  CHECK(Script("printf x | tee -a log1 log2") == Files{"log1", "log2"});
  CHECK(Script("rm -rf build/ old.txt") == Files{"build/", "old.txt"});
  CHECK(Script("touch -d yesterday stamp") == Files{"stamp"});
  CHECK(Script("mv -f a.cc b.cc") == Files{"a.cc", "b.cc"});
  CHECK(Script("mv -t dest/ one two") == Files{"one", "two", "dest/"});
  CHECK(Script("cp -r src/ backup/") == Files{"backup/"});  // the sources are only read
  CHECK(Script("cp -S .old -t out a b") == Files{"out"});
  CHECK(Script("cat a.txt; ls -l; git diff").empty());
}

TEST_CASE("Shell edits: lists, pipes, cd and workdir, argv without a shell") {
  CHECK(Script("cd src && sed -i 's/a/b/' x.cc && cd /tmp && echo > y") ==
        Files{"src/x.cc", "/tmp/y"});
  CHECK(Script("echo a > one\necho b > two || rm three") == Files{"one", "two", "three"});
  CHECK(Script("echo > a.txt", "/repo") == Files{"/repo/a.txt"});
  CHECK(Script("echo > /abs.txt", "/repo") == Files{"/abs.txt"});
  CHECK(Script("echo > ./dot.txt") == Files{"dot.txt"});
  CHECK(Script("echo > same; echo >> same") == Files{"same"});
  CHECK(ShellWrittenFiles({"sed", "-i", "s/x/y/", "z.txt"}, "") == Files{"z.txt"});
  CHECK(ShellWrittenFiles({"bash", "-lc", "echo > w.txt"}, "sub") == Files{"sub/w.txt"});
  CHECK(ShellWrittenFiles({"/bin/sh", "-c", "rm q"}, "") == Files{"q"});
  // argv without a shell: '>' is an argument, not a redirection.
  CHECK(ShellWrittenFiles({"echo", ">", "nota.txt"}, "").empty());
  // A here-document body is data, its command's redirection is not.
  CHECK(Script("cat > gen.txt <<'EOF'\nrm -rf / > boom\nEOF\necho done > after") ==
        Files{"gen.txt", "after"});
  CHECK(Script("cat <<-END > t.txt\n\tx > y\n\tEND\n") == Files{"t.txt"});
}

TEST_CASE("Shell edits: what is not detectable is not reported") {
  // Expansions, globs and substitutions name no literal path.
  CHECK(Script("echo x > \"$OUT\"").empty());
  CHECK(Script("echo x > $(mktemp)").empty());
  CHECK(Script("rm *.o").empty());
  CHECK(Script("echo > ~/home.txt").empty());
  // After a `cd` that cannot be followed, relative paths are unknown.
  CHECK(Script("cd - && rm rel.txt && rm /abs/x") == Files{"/abs/x"});
  // A script the lexer refuses (here a subshell): only absolute redirection targets.
  CHECK(Script("(cd sub && make) > rel.log 2> /var/log/abs.log") == Files{"/var/log/abs.log"});
  // Programs that write on their own are not followed.
  CHECK(Script("python3 -c 'open(\"f\",\"w\")'; xargs rm < list; find . -delete").empty());
}

TEST_CASE("Working state: shell edits are files touched, and survive a compaction") {
  std::vector<core::Item> transcript = {
      core::UserMessage("fix it"),
      ShellCall({"bash", "-lc", "sed -i 's/old/new/' src/a.cc && echo '# x' >> README.md"}, "c1"),
      ShellCall({"cat", "src/a.cc"}, "c2"),
      ShellCall({"mv", "b.txt", "c.txt"}, "c3", "docs"),
      ShellCall({"bash", "-lc",
                 "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: added.txt\n+x\n"
                 "*** End Patch\nEOF\n"},
                "c4"),
  };
  nlohmann::json local = {
      {"type", "local_shell_call"},
      {"call_id", "c5"},
      {"status", "completed"},
      {"action", {{"type", "exec"}, {"command", {"tee", "out.txt"}}, {"working_directory", "/w"}}}};
  transcript.push_back(core::DecodeItem(local.dump()).value());
  WorkingState state = ExtractWorkingState(transcript);
  CHECK(state.paths() ==
        Files{"src/a.cc", "README.md", "docs/b.txt", "docs/c.txt", "added.txt", "/w/out.txt"});
  // What a compaction writes is read back by the next one.
  auto message = WorkingStateMessage(state);
  REQUIRE(message.has_value());
  std::vector<core::Item> compacted = {*message, ShellCall({"rm", "gone.txt"}, "c6")};
  CHECK(ExtractWorkingState(compacted).paths() == Files{"src/a.cc", "README.md", "docs/b.txt",
                                                        "docs/c.txt", "added.txt", "/w/out.txt",
                                                        "gone.txt"});
}

TEST_CASE("Shell edits: any script is read without crashing, no placeholder leaks out") {
  // Scripts made of shell metacharacters in every order: unterminated
  // quotes, dangling redirections, here-documents without an end.
  const std::string alphabet = "ab/.> <&|;'\"\\\n#$(){}*~-2e=";
  uint64_t state = 12345;
  for (int n = 0; n < 3000; ++n) {
    std::string script;
    const size_t length = 1 + n % 40;
    for (size_t i = 0; i < length; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      script += alphabet[(state >> 33) % alphabet.size()];
    }
    CAPTURE(script);
    for (const auto& f : ShellScriptWrittenFiles(script, n % 2 ? "w" : "")) {
      CHECK_FALSE(f.empty());
      CHECK(f.find("__codex_output_redirection_") == std::string::npos);
    }
  }
}
