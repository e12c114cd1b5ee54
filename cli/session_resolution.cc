#include "cli/session_resolution.h"

namespace codex::cli {

Result<std::optional<core::SessionInfo>> LatestInScope(core::SessionStore& store,
                                                       const std::string& cwd, bool all) {
  std::optional<std::string> scope;
  if (!all) scope = cwd;
  auto latest = store.LatestSession(scope);
  if (latest.ok()) return std::optional<core::SessionInfo>(*latest);
  if (latest.status().code() == StatusCode::kNotFound) return std::optional<core::SessionInfo>();
  return latest.status();
}

Status NoSessionInScope(const std::string& cwd, bool all) {
  if (all) return NotFoundError("there is no session yet; start one with 'codex exec PROMPT'");
  return NotFoundError("no session in " + cwd +
                       " (or another checkout of its project) to resume; --all takes the newest "
                       "of every directory, 'codex sessions list --all' lists them");
}

Result<core::SessionInfo> ResolveSession(core::SessionStore& store, const std::string& id,
                                         bool last, bool all, const std::string& cwd) {
  if (last) {
    ASSIGN_OR_RETURN(std::optional<core::SessionInfo> latest, LatestInScope(store, cwd, all));
    if (!latest) return NoSessionInScope(cwd, all);
    return *latest;
  }
  if (id.empty()) {
    return InvalidArgumentError("give a session id or --last; 'codex sessions list' shows them");
  }
  return store.FindSession(id);
}

}  // namespace codex::cli
