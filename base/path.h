// The one path canonicaliser (issue 29): where a session records its working
// directory and where `--cwd DIR` (or the viewer's ?cwd=) names one, the same
// text comes out, so a directory reached through a symlink finds its sessions.
#pragma once

#include <optional>
#include <string>

namespace codex {

// `dir` made absolute (against the current directory), with every symlink of
// its existing part resolved (std::filesystem::weakly_canonical), `.` and
// `..` folded and no trailing slash ("/" stays "/"). A path that does not
// exist here (another machine's) is normalised lexically. Empty stays empty.
std::string CanonicalPath(const std::string& dir);

// realpath(3): `path` with every symlink resolved, which must exist;
// nullopt when it does not (or cannot be resolved). For rules that guard
// something (protected paths), where a path that is not there is refused.
std::optional<std::string> RealPath(const std::string& path);

}  // namespace codex
