// The one rule for finding a program codex itself starts on the host, outside
// any sandbox: git (core/host_git.h, and the PATH it hands git), bubblewrap
// (sandbox/launcher.h), the `notify` program (cli/notify.h), an MCP server's
// `command` (mcp/stdio_transport.cc), xdg-open (`codex sessions serve
// --open`) and the shell snapshot's bash (core/shell_snapshot.h). Only PATH's
// entries that no sandboxed command can write are searched:
//   * never a relative or empty entry (`.`, `bin`, a stray `::` or trailing
//     `:`): it names a directory of the working directory, the workspace;
//   * never an entry inside a directory the model's commands may write (the
//     workspace policy's writable roots, `writable`): a virtualenv's or
//     node_modules' bin that `activate` or direnv put on PATH, a PATH
//     directory under /tmp.
// Either would let a `./notify-send`, `.venv/bin/git` or `npx` the model
// planted run with the user's rights (tests/trust_boundary_e2e_test "host
// programs: ..."). A name holding a '/' is the user's own explicit choice and
// is not looked up here. The model's own commands and the user's `!cmd` keep
// their PATH as it is (commands run in the sandbox; what the user types is
// theirs); the classifier (sandbox/safe_command.h) treats a relative entry as
// unsafe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sandbox/workspace_policy.h"

namespace codex::sandbox {

// The directories a sandboxed command may write for `spec` (the workspace
// policy's writable roots, WorkspacePolicy::Compute), whatever the session's
// mode: an earlier session in workspace-write may have written there. When
// the policy is refused, every root it could have (workspace, extra roots,
// /tmp, $TMPDIR).
std::vector<std::string> ModelWritableRoots(const WritableRootsSpec& spec);

// PATH's absolute entries that lie outside every directory of `writable`
// (after resolving symlinks), in order, joined by ':'; "" when none is left;
// "/usr/bin:/bin" when PATH is unset (`path_var` nullptr), as execvp.
std::string HostSearchPath(const char* path_var, const std::vector<std::string>& writable);

// The first `DIR/program` over HostSearchPath(path_var, writable) that is a
// regular file this process may execute; "" when none. `program` must hold
// no '/'.
std::string FindHostProgram(std::string_view program, const char* path_var,
                            const std::vector<std::string>& writable);

}  // namespace codex::sandbox
