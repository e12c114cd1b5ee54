// ScopedEnv: sets (or, with nullopt, unsets) an environment variable for one
// scope and restores its old value after (test support, never linked into
// codex). Not thread-safe: the environment is process-wide, so use it only
// while no other thread reads the environment.
#pragma once

#include <optional>
#include <string>

namespace codex::testing {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace codex::testing
