// Which stored session a command means: a full id, a unique id prefix, a
// session's name, or --last (the newest). Used by `codex exec resume/fork`,
// `codex compact`, `codex resume` and the interactive /resume.
#pragma once

#include <string>

#include "base/status.h"
#include "core/session_store.h"

namespace codex::cli {

// With `last`: the newest session whose cwd is `cwd`, or the newest anywhere
// when none is there; kNotFound when the store has none. Otherwise `id` (an
// id, a unique prefix or a name, core::SessionStore::FindSession): kNotFound
// for no match, kInvalidArgument (reason kAmbiguousPrefix) for several, and
// kInvalidArgument when `id` is empty.
Result<core::SessionInfo> ResolveSession(core::SessionStore& store, const std::string& id,
                                         bool last, const std::string& cwd);

}  // namespace codex::cli
