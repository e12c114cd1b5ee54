#include "cli/store_open.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "cli/config_overrides.h"
#include "cli/terminal_text.h"
#include "storage/open_database.h"

namespace codex::cli {

Result<std::unique_ptr<storage::SessionDatabase>> OpenCliStore(const core::StoreLocation& location,
                                                               bool read_only) {
  storage::StoreOptions options;
  // A fresh CODEX_HOME has no database yet: create it (an empty one lists
  // nothing) rather than fail a read. A PostgreSQL database is always opened
  // for writing so that its schema is brought up to date.
  std::error_code ec;
  options.read_only = read_only && location.kind == core::StoreLocation::Kind::kSqlite &&
                      std::filesystem::exists(location.path, ec);
  options.on_wait = [](const std::string& holder) {
    PrintF(stderr, "waiting for %s to release the database…\n", holder.c_str());
    std::fflush(stderr);
  };
  return storage::OpenDatabase(location, std::move(options));
}

Result<core::StoreLocation> ConfiguredStoreLocation(const GlobalOptions& global) {
  const core::ConfigOverrides overrides = GlobalOverrides(global);
  ASSIGN_OR_RETURN(core::Config config, core::LoadConfig(core::DefaultCodexHome(), overrides));
  return config.session_store;
}

Result<std::unique_ptr<storage::SessionDatabase>> OpenConfiguredStore(const GlobalOptions& global,
                                                                      bool read_only) {
  ASSIGN_OR_RETURN(core::StoreLocation location, ConfiguredStoreLocation(global));
  return OpenCliStore(location, read_only);
}

void ApplyRetention(storage::SessionDatabase& store, const std::string& codex_home,
                    std::optional<int> retention_days) {
  if (!retention_days || *retention_days < 0 || store.read_only()) return;
  const auto now = std::chrono::system_clock::now();
  const std::string marker = (std::filesystem::path(codex_home) / ".retention-checked").string();
  struct stat st {};
  if (::stat(marker.c_str(), &st) == 0 &&
      std::chrono::system_clock::from_time_t(st.st_mtime) > now - std::chrono::hours(1) &&
      std::chrono::system_clock::from_time_t(st.st_mtime) <= now) {
    return;
  }
  std::ofstream(marker, std::ios::trunc).put('\n');  // touches the marker
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  storage::PurgeQuery query;
  query.updated_before_ms = now_ms - int64_t{*retention_days} * 86'400'000;
  storage::RemoveStats stats;
  auto removed = store.Purge(query, &stats);
  if (!removed.ok()) {
    PrintF(stderr, "warning: applying retention_days = %d failed: %s\n", *retention_days,
           removed.status().message().c_str());
    return;
  }
  if (!removed->empty()) {
    PrintF(stderr, "removed %zu sessions not updated for %d days ([history] retention_days)\n",
           removed->size(), *retention_days);
  }
}

}  // namespace codex::cli
