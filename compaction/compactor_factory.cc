#include "compaction/compactor_factory.h"

#include <string>

#include "compaction/compactor_options.h"
#include "compaction/local_compactor.h"
#include "compaction/remote_compactor.h"

namespace codex::compaction {

Result<CompactionMode> ParseCompactionMode(std::string_view name) {
  if (name == "auto") return CompactionMode::kAuto;
  if (name == "inline") return CompactionMode::kInline;
  if (name == "endpoint") return CompactionMode::kEndpoint;
  if (name == "local") return CompactionMode::kLocal;
  return InvalidArgumentError("compaction '" + std::string(name) +
                              "' is not one of auto, inline, endpoint, local; fix it in "
                              "config.toml or -c");
}

Result<std::unique_ptr<core::Compactor>> MakeCompactor(const core::Config& config,
                                                       core::ModelClient& client,
                                                       CompactionMode mode) {
  ASSIGN_OR_RETURN(CompactorOptions options, CompactorOptionsFromConfig(config));
  if (mode == CompactionMode::kAuto) {
    ASSIGN_OR_RETURN(mode, ParseCompactionMode(config.compaction));
  }
  if (mode == CompactionMode::kAuto) {
    mode = config.provider.supports_compact ? CompactionMode::kInline : CompactionMode::kLocal;
  }
  std::unique_ptr<core::Compactor> compactor;
  if (mode == CompactionMode::kLocal) {
    compactor = std::make_unique<LocalCompactor>(client, std::move(options));
  } else {
    compactor = std::make_unique<RemoteCompactor>(client, std::move(options),
                                                  /*try_inline=*/mode == CompactionMode::kInline);
  }
  return compactor;
}

}  // namespace codex::compaction
