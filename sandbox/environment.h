// The environment a spawned command sees.
//
// Policy (documented for users in docs and `codex sandbox --help`):
//   1. Start from the parent's environment (EnvInherit::kAll) or from nothing
//      (EnvInherit::kNone).
//   2. With SecretFilter::kDropSecretLike, drop every variable whose name
//      contains KEY, SECRET, TOKEN, PASSWORD, PASSWD or CREDENTIAL (ignoring
//      case), e.g. OPENAI_API_KEY, GITHUB_TOKEN, so a command the model runs
//      cannot read the credentials the agent itself was started with.
//   3. Apply the overrides last: they always win, even for secret-like names.
// Pure functions; thread-safe as long as nobody modifies `environ` meanwhile.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace codex::sandbox {

enum class EnvInherit { kAll, kNone };
enum class SecretFilter { kKeep, kDropSecretLike };

struct EnvPolicy {
  EnvInherit inherit = EnvInherit::kAll;
  SecretFilter secrets = SecretFilter::kDropSecretLike;
  std::map<std::string, std::string> overrides;
};

// True when `name` looks like it holds a credential (see the policy above).
bool IsSecretLikeName(std::string_view name);

// "NAME=value" entries, sorted by name, built from `base` ("NAME=value"
// strings, typically `environ`) according to `policy`. Entries without '='
// in `base` are skipped.
std::vector<std::string> BuildEnvironment(const EnvPolicy& policy,
                                          const std::vector<std::string>& base);

// The current process environment as "NAME=value" strings.
std::vector<std::string> CurrentEnvironment();

// The value of `name` in an environment built by BuildEnvironment, or `fallback`.
std::string LookupEnv(const std::vector<std::string>& env, std::string_view name,
                      std::string_view fallback);

}  // namespace codex::sandbox
