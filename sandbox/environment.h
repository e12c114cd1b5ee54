// The environment a spawned command sees: Codex's [shell_environment_policy].
//
// BuildEnvironment applies, in this order (the order Codex documents):
//   1. inherit: start from the parent's whole environment (kAll), from its
//      core variables HOME LOGNAME PATH SHELL USER USERNAME TMPDIR TEMP TMP
//      (kCore), or from nothing (kNone);
//   2. default excludes (unless `secrets` is kKeep, i.e.
//      ignore_default_excludes = true): drop every variable whose name
//      matches *KEY*, *SECRET*, *TOKEN* (Codex's defaults) or *PASSWORD*,
//      *PASSWD*, *CREDENTIAL* and CODEX_SESSION_STORE (a store URL may hold
//      a password; ours in addition), ignoring case, e.g. OPENAI_API_KEY,
//      GITHUB_TOKEN;
//   3. exclude: drop names matching any of these patterns;
//   4. set: insert these variables (replacing inherited ones);
//   5. include_only: when non-empty, keep only names matching one of these
//      patterns (this also applies to `set`, as in Codex);
//   6. overrides: the runner's own variables (e.g.
//      CODEX_SANDBOX_NETWORK_DISABLED), always present.
// Patterns are globs matched against the whole name ignoring case: `*` any
// run of characters, `?` one character, `[abc]` / `[a-z]` / `[!a-z]` a set.
// Pure functions; thread-safe as long as nobody modifies `environ` meanwhile.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace codex::sandbox {

enum class EnvInherit { kAll, kCore, kNone };
enum class SecretFilter { kKeep, kDropSecretLike };

// "all" | "core" | "none"; nullopt otherwise.
std::optional<EnvInherit> ParseEnvInherit(std::string_view name);

struct EnvPolicy {
  EnvInherit inherit = EnvInherit::kAll;
  SecretFilter secrets = SecretFilter::kDropSecretLike;  // kKeep = ignore_default_excludes
  std::vector<std::string> exclude;                      // glob patterns
  std::map<std::string, std::string> set;                // [shell_environment_policy.set]
  std::vector<std::string> include_only;                 // glob patterns; empty = all
  std::map<std::string, std::string> overrides;          // applied last, always kept
};

// True when `name` matches one of the default excludes (step 2).
bool IsSecretLikeName(std::string_view name);

// True when the glob `pattern` matches the whole of `name`, ignoring ASCII
// case (see the file comment).
bool EnvPatternMatches(std::string_view pattern, std::string_view name);

// "NAME=value" entries, sorted by name, built from `base` ("NAME=value"
// strings, typically `environ`) according to `policy`. Entries without '='
// in `base` are skipped.
std::vector<std::string> BuildEnvironment(const EnvPolicy& policy,
                                          const std::vector<std::string>& base);

// The value `name` has in BuildEnvironment(policy, CurrentEnvironment()), or
// `fallback` when it has none, without building the rest.
std::string PolicyValueOf(const EnvPolicy& policy, std::string_view name,
                          std::string_view fallback);

// The current process environment as "NAME=value" strings.
std::vector<std::string> CurrentEnvironment();

// The value of `name` in an environment built by BuildEnvironment, or `fallback`.
std::string LookupEnv(const std::vector<std::string>& env, std::string_view name,
                      std::string_view fallback);

}  // namespace codex::sandbox
