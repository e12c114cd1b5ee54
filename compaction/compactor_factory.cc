#include "compaction/compactor_factory.h"

#include "compaction/compactor_options.h"
#include "compaction/local_compactor.h"
#include "compaction/remote_compactor.h"

namespace codex::compaction {

Result<std::unique_ptr<core::Compactor>> MakeCompactor(const core::Config& config,
                                                       core::ModelClient& client,
                                                       CompactionMode mode) {
  ASSIGN_OR_RETURN(CompactorOptions options, CompactorOptionsFromConfig(config));
  if (mode == CompactionMode::kAuto) {
    mode = config.provider.supports_compact ? CompactionMode::kRemote : CompactionMode::kLocal;
  }
  std::unique_ptr<core::Compactor> compactor;
  if (mode == CompactionMode::kRemote) {
    compactor = std::make_unique<RemoteCompactor>(client, std::move(options));
  } else {
    compactor = std::make_unique<LocalCompactor>(client, std::move(options));
  }
  return compactor;
}

}  // namespace codex::compaction
