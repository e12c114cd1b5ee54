#include "cli/global_options.h"

namespace codex::cli {

const CLI::Validator& NonEmptyValue() {
  static const CLI::Validator validator(
      [](const std::string& value) -> std::string {
        return value.empty() ? "an empty value (an unset shell variable?); give one, or leave "
                               "the option out"
                             : "";
      },
      "");
  return validator;
}

void AddGlobalOptions(CLI::App& app, GlobalOptions& global) {
  app.add_option("-c,--config", global.dash_c,
                 "Override a config.toml value: key=value (value parsed as TOML)")
      ->take_all()
      ->allow_extra_args(false);  // one key=value each, so `codex -c k=v PROMPT` keeps its prompt
  app.add_option("-p,--profile", global.profile,
                 "Apply [profiles.NAME] of config.toml (or $CODEX_HOME/NAME.config.toml)")
      ->check(NonEmptyValue());
  app.add_flag("--strict-config", global.strict_config,
               "Make unsupported config.toml keys an error instead of a warning");
  app.add_option("--enable", global.enable, "Enable a feature (repeatable): -c features.NAME=true")
      ->allow_extra_args(false);
  app.add_option("--disable", global.disable,
                 "Disable a feature (repeatable): -c features.NAME=false")
      ->allow_extra_args(false);
  app.add_flag("--search", global.search, "Enable live web search: -c web_search=\"live\"");
}

}  // namespace codex::cli
