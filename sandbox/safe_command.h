// The known-safe command classifier: commands that only read, which the
// approval policy may run without asking (they still run sandboxed).
//
// A command is known-safe when it is one of these, spelled as a bare name or
// under /bin/ or /usr/bin/:
//   cat head tail wc nl tac rev cut tr paste fold column comm join diff cmp
//   grep egrep fgrep ls stat du df pwd echo printf true false which whoami id
//   uname basename dirname realpath readlink md5sum sha1sum sha256sum
//   sha512sum seq cd
//   date        (without -s / --set)
//   file        (without -C / --compile)
//   tree        (without -o and -R, which write files)
//   sort        (without -o / --output / --compress-program / -T)
//   uniq        (at most one file operand: a second one is written)
//   rg          (without --pre, --pre-glob, -z / --search-zip, --hostname-bin)
//   find        (without -exec -execdir -ok -okdir -delete -fls -fprint
//                -fprint0 -fprintf)
//   sed         only as `sed -n Np [FILE...]` or `sed -n N,Mp [FILE...]`
//   git status | log | diff | show | branch (listing flags only) | rev-parse
//       | ls-files | blame, with no option before the subcommand and none of
//       --output --ext-diff --textconv --exec -O / --open-files-in-pager
// or `bash|sh|zsh|dash -c|-lc SCRIPT` where SCRIPT (see shell_lexer.h) is
// simple commands joined by && || ; | and every one of them is known-safe.
// An argv[0] holding '=' (an environment assignment) is never safe, nor is
// anything the lexer refuses (redirections, substitutions, globs, …).
// Pure function; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace codex::sandbox {

bool IsKnownSafeCommand(const std::vector<std::string>& argv);

}  // namespace codex::sandbox
