#include "sandbox/environment.h"

#include <algorithm>
#include <array>

extern char** environ;

namespace codex::sandbox {
namespace {

// ASCII only (the file comment's rule), without the locale's tolower.
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Matches a `[...]` set at pattern[*p] (just after '[') against `c`; advances
// *p past the closing ']'. Returns nullopt when the set is not closed (then
// '[' is an ordinary character).
std::optional<bool> MatchSet(std::string_view pattern, size_t* p, char c) {
  size_t i = *p;
  bool negate = false;
  if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
    negate = true;
    ++i;
  }
  bool matched = false;
  bool first = true;
  while (i < pattern.size() && (pattern[i] != ']' || first)) {
    first = false;
    char lo = Lower(pattern[i]);
    char hi = lo;
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      hi = Lower(pattern[i + 2]);
      i += 2;
    }
    if (lo <= Lower(c) && Lower(c) <= hi) matched = true;
    ++i;
  }
  if (i >= pattern.size()) return std::nullopt;
  *p = i + 1;
  return matched != negate;
}

}  // namespace

std::optional<EnvInherit> ParseEnvInherit(std::string_view name) {
  if (name == "all") return EnvInherit::kAll;
  if (name == "core") return EnvInherit::kCore;
  if (name == "none") return EnvInherit::kNone;
  return std::nullopt;
}

bool EnvPatternMatches(std::string_view pattern, std::string_view name) {
  // Iterative glob match with one backtrack point for the last '*'.
  size_t p = 0;
  size_t n = 0;
  size_t star_p = std::string_view::npos;
  size_t star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star_p = ++p;
      star_n = n;
      continue;
    }
    if (p < pattern.size()) {
      size_t next = p + 1;
      bool ok = false;
      if (pattern[p] == '?') {
        ok = true;
      } else if (pattern[p] == '[') {
        size_t q = p + 1;
        if (auto m = MatchSet(pattern, &q, name[n])) {
          ok = *m;
          next = q;
        } else {
          ok = name[n] == '[';
        }
      } else {
        ok = Lower(pattern[p]) == Lower(name[n]);
      }
      if (ok) {
        p = next;
        ++n;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    n = ++star_n;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool IsSecretLikeName(std::string_view name) {
  // The default excludes "*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*",
  // "*PASSWD*", "*CREDENTIAL*" and "CODEX_SESSION_STORE" (a postgresql:// URL
  // may hold its password), ignoring ASCII case as EnvPatternMatches does:
  // the name folded once, then a substring search per word (this runs for
  // every variable of every command).
  static constexpr std::array<std::string_view, 6> kWords = {"key",      "secret", "token",
                                                             "password", "passwd", "credential"};
  std::string folded(name);
  for (char& c : folded) c = Lower(c);
  if (folded == "codex_session_store") return true;
  return std::any_of(kWords.begin(), kWords.end(),
                     [&](std::string_view word) { return folded.find(word) != std::string::npos; });
}

std::vector<std::string> BuildEnvironment(const EnvPolicy& policy,
                                          const std::vector<std::string>& base) {
  static constexpr std::array<std::string_view, 9> kCoreVars = {
      "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP"};
  auto matches_any = [](const std::vector<std::string>& patterns, std::string_view name) {
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const std::string& p) { return EnvPatternMatches(p, name); });
  };
  std::map<std::string, std::string> vars;
  if (policy.inherit != EnvInherit::kNone) {
    for (const std::string& entry : base) {
      size_t eq = entry.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      std::string name = entry.substr(0, eq);
      if (policy.inherit == EnvInherit::kCore &&
          std::find(kCoreVars.begin(), kCoreVars.end(), name) == kCoreVars.end()) {
        continue;
      }
      vars.emplace(std::move(name), entry.substr(eq + 1));
    }
  }
  std::erase_if(vars, [&](const auto& kv) {
    return (policy.secrets == SecretFilter::kDropSecretLike && IsSecretLikeName(kv.first)) ||
           matches_any(policy.exclude, kv.first);
  });
  for (const auto& [name, value] : policy.set) vars[name] = value;
  if (!policy.include_only.empty()) {
    std::erase_if(vars,
                  [&](const auto& kv) { return !matches_any(policy.include_only, kv.first); });
  }
  for (const auto& [name, value] : policy.overrides) vars[name] = value;
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
}

std::string PolicyValueOf(const EnvPolicy& policy, std::string_view name,
                          std::string_view fallback) {
  // BuildEnvironment decides each variable by its own name and values alone:
  // building from `name`'s entry only gives it the value the whole would.
  std::vector<std::string> base;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      base.emplace_back(entry);
      break;  // the first one, as BuildEnvironment keeps
    }
  }
  return LookupEnv(BuildEnvironment(policy, base), name, fallback);
}

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

std::string LookupEnv(const std::vector<std::string>& env, std::string_view name,
                      std::string_view fallback) {
  for (const std::string& entry : env) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return entry.substr(name.size() + 1);
    }
  }
  return std::string(fallback);
}

}  // namespace codex::sandbox
