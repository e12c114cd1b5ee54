// MakeCompactor: the one place that picks a compactor for a session
// (cli/main.cc plugs the result into the turn loop as a core::Compactor).
#pragma once

#include <memory>

#include "core/compactor.h"
#include "core/config.h"
#include "core/model_client.h"
#include "core/status.h"

namespace codex::compaction {

enum class CompactionMode {
  kAuto,    // remote when config.provider.supports_compact, else local
  kRemote,  // POST /responses/compact (falls back to local on 404)
  kLocal,   // summary request
};

// A compactor with limits and request settings from `config` (see
// CompactorOptionsFromConfig). `client` is borrowed and must outlive the
// result. kInvalidArgument for bad model_context_window /
// model_auto_compact_token_limit values.
Result<std::unique_ptr<core::Compactor>> MakeCompactor(const core::Config& config,
                                                       core::ModelClient& client,
                                                       CompactionMode mode = CompactionMode::kAuto);

}  // namespace codex::compaction
