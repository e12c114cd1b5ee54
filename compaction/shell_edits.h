// The files a shell command writes, read from the command itself, so that
// edits made through the shell tool survive a compaction in the working
// state (working_state.h) as apply_patch edits do.
//
// Conservative: a path is reported only when the command names it literally.
// Recognised, in an argv or in the script of `bash|sh|zsh -c/-lc SCRIPT` (base/shell.h
// ShellScriptOf) (each simple command of a list joined by && || ; | or newlines):
//  - output redirections `> F`, `>> F`, `>| F`, `&> F`, `&>> F`, `N> F`,
//    `N>> F` (not /dev/null, /dev/stdout, /dev/stderr, /dev/fd/N, nor fd
//    duplications such as `2>&1`);
//  - `sed -i` / `--in-place` and `perl -i`: the files after the script;
//  - `tee [-a] F...`, `rm F...`, `touch F...`, `mv SRC... DST` (sources and
//    destination), `cp SRC... DST` (the destination only), `-t DIR` forms;
//  - `cd DIR` earlier in the same script: later relative paths are under DIR;
//  - a relative path under the call's `workdir` is reported as workdir/path.
// Not detectable, and so not reported: paths built by expansions ($VAR,
// $(...), globs, ~, brace expansion), commands run through xargs, find
// -exec, sudo, env, eval or an interpreter's own code (python -c, a script
// file), writes a program makes on its own (compilers, formatters, git
// checkout), here-documents fed to an editor, and any part of a script the
// shell lexer (sandbox/shell_lexer.h) refuses. A command that failed or was
// declined is still reported: the working state records what the session
// set out to change. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace codex::compaction {

// The files `argv` (run in `workdir`, "" = the session's cwd) writes, in
// order of appearance, without duplicates.
std::vector<std::string> ShellWrittenFiles(const std::vector<std::string>& argv,
                                           std::string_view workdir);

// The same for a shell script (the text after `bash -c`).
std::vector<std::string> ShellScriptWrittenFiles(std::string_view script, std::string_view workdir);

}  // namespace codex::compaction
