// The known-safe command classifier: commands that only read, which the
// approval policy may run without asking (they still run sandboxed, unless
// the session is danger-full-access).
//
// A command is known-safe when it is one of these, spelled as a bare name or
// under /bin/ or /usr/bin/:
//   cat head tail wc nl tac rev cut tr paste fold column comm join diff cmp
//   grep egrep fgrep ls stat du df pwd echo true false which whoami id uname
//   basename dirname realpath readlink md5sum sha1sum sha256sum sha512sum seq
//   cd          (one operand at most, no option)
//   printf      only as `printf FORMAT [ARG...]` (the builtin's -v assigns)
//   date        only printing: the options -d -f -I -r -R -u and their long
//               names, and +FORMAT operands (-s/--set or a bare date operand
//               set the clock)
//   file        (without -C / --compile)
//   tree        (without -o, -R, --output)
//   sort        (without -o --output --compress-program -T
//                --temporary-directory)
//   uniq        (at most one file operand: a second one is written)
//   rg          (without --pre --pre-glob -z --search-zip --hostname-bin)
//   find        (without -exec -execdir -ok -okdir -delete -fls -fprint
//                -fprint0 -fprintf)
//   sed         only as `sed -n Np [FILE...]` or `sed -n N,Mp [FILE...]`
// Long options are matched the way GNU getopt_long matches them: any unique
// prefix names the option, so `sort --compress-prog=./x`, `sort --out=f` and
// `date --se=...` are the forbidden options. date's options are an allow-list
// (an unknown option is not safe); the others deny the options above in
// every spelling: exact, abbreviated, `--opt=value`, inside a short-option
// bundle (`sort -uo f`), and after operands (GNU permutes arguments).
// Not safe at all: git (a repository's own config runs programs from plain
// `git status`/`git diff`: core.fsmonitor, diff.external, textconv), xargs,
// env, nice, timeout, awk, any shell other than the wrapper below.
// `bash|sh|zsh -c|-lc SCRIPT` (base/shell.h ShellScriptOf) is safe when
// SCRIPT (see shell_lexer.h) is simple commands joined by && || ; | and every one of them is
// known-safe; nothing in such a script can assign a variable (`VAR=x cmd`, `printf -v`,
// `$...` are refused), so a later command cannot be redirected to another
// program. An argv[0] holding '=' is never safe, nor is anything the lexer
// refuses (redirections, substitutions, globs, ...).
//
// Where this differs from Codex's is_known_safe_command (codex-rs
// command_safety/is_safe_command.rs): Codex also accepts base64 (without
// -o/--output), expr and numfmt, `cd` with any arguments and `uniq IN OUT`
// (which writes OUT); it matches forbidden options only in their exact or
// `--opt=` spelling (no abbreviations, no bundles) and does not look at
// PATH. We also accept comm join diff cmp column fold egrep fgrep du df
// basename dirname realpath readlink the sha*sum family, printf, date,
// file, tree and sort in the forms above, where Codex asks. Like current
// Codex, git always needs approval.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace codex::sandbox {

// The classification above, for a command whose bare program names resolve
// to the system's tools.
bool IsKnownSafeCommand(const std::vector<std::string>& argv);

// True when every entry of `path_var` (a PATH value) is an absolute
// directory. A relative or empty entry means the working directory, where a
// planted `./cat` would run instead of /usr/bin/cat.
bool IsTrustedSearchPath(std::string_view path_var);

// IsKnownSafeCommand, and the PATH the command will run with is trusted.
// What the approval policy uses.
bool IsKnownSafeCommand(const std::vector<std::string>& argv, std::string_view path_var);

}  // namespace codex::sandbox
