// The sessions of sub-agents (core/agent_tools.h) as this codex opens them:
// each one an Engine of its own (its own store connection, model client,
// sandboxed runner and tool router, so its turn loop runs on its own thread)
// on the parent's store, with the parent's config less what is the parent's
// alone: the sub-agent tools are off (an agent cannot spawn), no
// --output-schema, and no approver (every approval request is declined, so
// an agent never gets a permission its parent would have had to ask for).
// The sandbox policy, writable roots and approval policy are the parent's,
// copied, never widened. Its turns report to no one (the parent learns of
// them through wait_agent and the notifications).
#pragma once

#include <memory>
#include <string>

#include "core/agent_tools.h"
#include "core/config.h"
#include "core/store_location.h"

namespace codex::cli {

class SubAgentFactory final : public core::AgentFactory {
 public:
  // `config` is the parent's (copied); `location` the store it uses.
  SubAgentFactory(const core::Config& config, core::StoreLocation location)
      : config_(config), location_(std::move(location)) {}

  Result<std::unique_ptr<core::AgentSession>> Spawn(const core::SpawnRequest& request) override;
  Result<std::unique_ptr<core::AgentSession>> Reopen(const std::string& parent_id,
                                                     const std::string& id) override;

  // The config an agent of a session under `parent` runs with.
  static core::Config AgentConfig(const core::Config& parent);

 private:
  const core::Config config_;
  const core::StoreLocation location_;
};

}  // namespace codex::cli
