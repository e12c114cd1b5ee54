// Which stored session a command means: a full id, a unique id prefix, a
// session's name, or --last (the newest in scope). Used by `codex exec
// resume`, `codex compact`, `codex resume` and the interactive /resume.
//
// The scope of --last has this one home: the sessions of the current
// directory as storage's DirScope selects them (the same cwd on any host, or
// the same place in another checkout of the same project), or every session
// with --all. There is no fallback that widens it: with nothing in scope,
// --last finds nothing (the caller starts a new session, as Codex 0.169
// does, or says there is none), so another directory's transcript is never
// continued (nor sent to a provider) without the user asking for --all.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"
#include "core/session_store.h"

namespace codex::cli {

// The value of an `--at-turn N` option that was not given (exec, sessions fork).
inline constexpr int kNoTurn = -2147483647 - 1;

// The newest non-archived session in the scope of `cwd`, or anywhere with
// `all`; nullopt when the scope holds none.
Result<std::optional<core::SessionInfo>> LatestInScope(core::SessionStore& store,
                                                       const std::string& cwd, bool all);

// kNotFound naming the scope --last searched and how to widen it.
Status NoSessionInScope(const std::string& cwd, bool all);

// With `last`: LatestInScope, kNotFound (NoSessionInScope) when it finds
// none. Otherwise `id` (an id, a unique prefix or a name,
// core::SessionStore::FindSession): kNotFound for no match, kInvalidArgument
// (reason kAmbiguousPrefix) for several, and kInvalidArgument when `id` is empty.
Result<core::SessionInfo> ResolveSession(core::SessionStore& store, const std::string& id,
                                         bool last, bool all, const std::string& cwd);

}  // namespace codex::cli
