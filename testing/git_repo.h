// Real git repositories in tests of /undo (core/undo_test, tests/undo_e2e_test;
// test support, never linked into codex): the test's own git setup, and the
// user's git state that codex must leave byte-identical.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace codex::testing {

// True (after SkipPart, testing/skip.h: a failure under CI) when no `git`
// program is on PATH; the caller then leaves its git part out.
bool GitMissing();

// Runs `git ARGS` in `dir` for a test's setup (hooks off, a fixed identity,
// branch "main"); the code under test never does this. `args` is shell
// text. Returns stdout and stderr together; a failing git prints the command
// and its output and aborts: the test's setup failed.
std::string Git(const std::filesystem::path& dir, const std::string& args);

// Every byte of the user's git state in `repo`: each file under .git (index,
// HEAD, config, packed refs, refs, reflogs) but the objects (snapshots only
// add objects, never change one) and refs/codex (codex's own), plus
// `git status` and `git stash list`.
std::map<std::string, std::string> UserGitState(const std::filesystem::path& repo);

}  // namespace codex::testing
