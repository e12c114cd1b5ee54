// Dropping every Linux capability of the calling process.
//
// DropAllCapabilities() empties the bounding set (needs CAP_SETPCAP while any
// capability is still in it), clears the ambient set, then the effective,
// permitted and inheritable sets. After it, and with no_new_privs, neither
// the process nor anything it executes can hold a capability again, even as
// uid 0: that is what stops root inside the sandbox from setting the clock,
// rebooting or loading modules. Async-signal-safe (raw system calls only), so
// it may run between fork and exec. Returns 0 or an errno value.
#pragma once

namespace codex::sandbox {

int DropAllCapabilities() noexcept;

}  // namespace codex::sandbox
