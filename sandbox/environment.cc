#include "sandbox/environment.h"

#include <algorithm>
#include <array>
#include <cctype>

extern char** environ;

namespace codex::sandbox {

bool IsSecretLikeName(std::string_view name) {
  static constexpr std::array<std::string_view, 6> kMarkers = {"KEY",      "SECRET", "TOKEN",
                                                               "PASSWORD", "PASSWD", "CREDENTIAL"};
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return std::any_of(kMarkers.begin(), kMarkers.end(), [&](std::string_view marker) {
    return upper.find(marker) != std::string::npos;
  });
}

std::vector<std::string> BuildEnvironment(const EnvPolicy& policy,
                                          const std::vector<std::string>& base) {
  std::map<std::string, std::string> vars;
  if (policy.inherit == EnvInherit::kAll) {
    for (const std::string& entry : base) {
      size_t eq = entry.find('=');
      if (eq == std::string::npos || eq == 0) continue;
      std::string name = entry.substr(0, eq);
      if (policy.secrets == SecretFilter::kDropSecretLike && IsSecretLikeName(name)) continue;
      vars.emplace(std::move(name), entry.substr(eq + 1));
    }
  }
  for (const auto& [name, value] : policy.overrides) vars[name] = value;
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) out.push_back(name + "=" + value);
  return out;
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
