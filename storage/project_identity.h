// Which project a directory is, the same on every machine that has a checkout
// of it, so that `--cwd` scoping (list, resume --last, search, purge) finds a
// session started on another machine whose checkout lives at another path
// (README "Session store", "Across machines").
//
// The key of a directory inside a git checkout is the checkout's remote
// ("origin", else the first remote in .git/config) normalised to
// "host/path" (scheme, user, port and a trailing ".git" dropped; the
// scp-like "git@host:org/repo" and "https://host/org/repo.git" give the same
// "host/org/repo"), followed by "//" and the directory's path inside the
// checkout when it is not the checkout's top. A directory outside any
// checkout, or in a checkout without a remote, has no key (""): it is
// matched by its exact path only. Pure functions of the files they read; no
// process is started (`git` need not be installed).
#pragma once

#include <string>
#include <string_view>

namespace codex::storage {

// "" when `dir` has no project key (see above). `dir` is an absolute path.
std::string ProjectKey(std::string_view dir);

// "host/org/repo" for a git remote URL; "" when it names no repository.
std::string NormalizeRemoteUrl(std::string_view url);

// This machine's host name, as sessions and leases record it (a session's
// `host`, beside its `project`).
std::string LocalHost();

}  // namespace codex::storage
