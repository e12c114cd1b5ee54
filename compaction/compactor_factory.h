// MakeCompactor: the one place that picks a compactor for a session
// (cli/engine.cc plugs the result into the turn loop as a core::Compactor).
#pragma once

#include <memory>
#include <string_view>

#include "base/status.h"
#include "core/compactor.h"
#include "core/config.h"
#include "core/model_client.h"

namespace codex::compaction {

enum class CompactionMode {
  kAuto,      // config.compaction; "auto": inline when provider.supports_compact, else local
  kInline,    // compaction_trigger on POST /responses; endpoint form when refused
  kEndpoint,  // POST /responses/compact (falls back to local on 404)
  kLocal,     // summary request
};

// "auto" | "inline" | "endpoint" | "local" (the `compaction` config key);
// kInvalidArgument naming the accepted values otherwise.
Result<CompactionMode> ParseCompactionMode(std::string_view name);

// A compactor with limits and request settings from `config` (see
// CompactorOptionsFromConfig). kAuto reads config.compaction. `client` is
// borrowed and must outlive the result. kInvalidArgument for bad
// model_context_window / model_auto_compact_token_limit / compaction values.
Result<std::unique_ptr<core::Compactor>> MakeCompactor(const core::Config& config,
                                                       core::ModelClient& client,
                                                       CompactionMode mode = CompactionMode::kAuto);

}  // namespace codex::compaction
