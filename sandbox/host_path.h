// The one rule for finding a program codex itself starts on the host, outside
// any sandbox: git (core/host_git.h, and the PATH it hands git), bubblewrap
// (sandbox/launcher.h), the `notify` program (cli/notify.h), an MCP server's
// `command` (mcp/stdio_transport.cc) and xdg-open (`codex sessions serve
// --open`). Only PATH's absolute entries are searched. A relative or empty
// entry (`.`, `bin`, a stray `::` or trailing `:`) names a directory relative
// to the working directory, which is the workspace the model writes: a
// `./notify-send` or `./npx` it planted there would run with the user's rights
// (tests/trust_boundary_e2e_test "host programs: ..."). A name holding a '/'
// is the user's own explicit choice and is not looked up here.
// The model's own commands and the user's `!cmd` keep their PATH as it is
// (commands run in the sandbox; what the user types is theirs); the
// classifier (sandbox/safe_command.h) treats a relative entry as unsafe.
#pragma once

#include <string>
#include <string_view>

namespace codex::sandbox {

// PATH's absolute entries, in order, joined by ':'; "/usr/bin:/bin" when it
// has none (or is unset: `path_var` nullptr).
std::string HostSearchPath(const char* path_var);

// The first `DIR/program` over HostSearchPath(path_var) that is a regular
// file this process may execute; "" when none. `program` must hold no '/'.
std::string FindHostProgram(std::string_view program, const char* path_var);

}  // namespace codex::sandbox
