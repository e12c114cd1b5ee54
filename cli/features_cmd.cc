#include "cli/features_cmd.h"

#include <algorithm>
#include <string>
#include <vector>

#include "cli/config_overrides.h"
#include "cli/terminal_text.h"
#include "core/config.h"

namespace codex::cli {

namespace {

struct FeatureRow {
  std::string name;
  std::string stage;  // Codex 0.169's word for it
  bool enabled = false;
};

// The features with a counterpart here (core/config.cc reads them), by name.
std::vector<FeatureRow> KnownFeatures(const core::Config& config) {
  return {
      {"shell_snapshot", "stable", config.shell_snapshot},
      {"unified_exec", "stable", config.unified_exec},
      {"view_image", "stable", config.view_image},
      {"web_search_cached", "deprecated", config.web_search},
      {"web_search_request", "deprecated", config.web_search},
  };
}

Status ListFeatures(const GlobalOptions& global) {
  ASSIGN_OR_RETURN(core::Config config,
                   core::LoadConfig(core::DefaultCodexHome(), GlobalOverrides(global)));
  const std::vector<FeatureRow> rows = KnownFeatures(config);
  size_t name_width = 0;
  size_t stage_width = 0;
  for (const FeatureRow& r : rows) {
    name_width = std::max(name_width, r.name.size());
    stage_width = std::max(stage_width, r.stage.size());
  }
  for (const FeatureRow& r : rows) {
    PrintF(stdout, "%-*s  %-*s  %s\n", static_cast<int>(name_width), r.name.c_str(),
           static_cast<int>(stage_width), r.stage.c_str(), r.enabled ? "true" : "false");
  }
  return OkStatus();
}

}  // namespace

void RegisterFeaturesCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  CLI::App* features = app.add_subcommand("features", "Inspect feature flags");
  features->require_subcommand(1, 1);
  CLI::App* list = features->add_subcommand(
      "list", "List the Codex features this codex acts on, with their stage and effective state");
  list->callback([&global, &result]() { result.Set(ListFeatures(global)); });
}

}  // namespace codex::cli
