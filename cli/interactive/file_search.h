// The workspace's files for the composer's "@" popup, and the fuzzy match
// that filters them as the user types.
//
// ListWorkspaceFiles() asks git inside a work tree (`git ls-files` for the
// tracked files plus the untracked ones .gitignore does not exclude), and
// otherwise walks the directory, skipping hidden entries and the usual
// build and dependency folders (node_modules, target, build, dist,
// __pycache__). Paths are relative to the root, at most `limit` of them.
// FuzzyFind() is pure. Both are thread-compatible.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace codex::cli {

std::vector<std::string> ListWorkspaceFiles(const std::string& root, size_t limit = 20000);

// The paths that hold the characters of `query` in order (ignoring case),
// best first, at most `max`: a match in the file name beats one spread over
// directories, consecutive characters and an early start score higher, and
// shorter paths win ties. An empty query gives the first `max` paths.
std::vector<std::string> FuzzyFind(const std::vector<std::string>& paths, std::string_view query,
                                   size_t max);

}  // namespace codex::cli
