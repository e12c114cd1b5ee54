#include "cli/session_resolution.h"

#include <optional>

namespace codex::cli {

Result<core::SessionInfo> ResolveSession(core::SessionStore& store, const std::string& id,
                                         bool last, const std::string& cwd) {
  if (last) {
    auto here = store.LatestSession(cwd);
    if (here.ok() || here.status().code() != StatusCode::kNotFound) return here;
    auto anywhere = store.LatestSession(std::nullopt);
    if (anywhere.ok()) return anywhere;
    return NotFoundError("there is no session to resume yet; start one with 'codex exec PROMPT'");
  }
  if (id.empty()) {
    return InvalidArgumentError("give a session id or --last; 'codex sessions list' shows them");
  }
  return store.FindSession(id);
}

}  // namespace codex::cli
