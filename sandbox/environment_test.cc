#include "sandbox/environment.h"

#include <stdlib.h>

#include <catch2/catch.hpp>

using namespace codex::sandbox;

TEST_CASE("IsSecretLikeName spots credentials regardless of case") {
  CHECK(IsSecretLikeName("OPENAI_API_KEY"));
  CHECK(IsSecretLikeName("GITHUB_TOKEN"));
  CHECK(IsSecretLikeName("aws_secret_access_key"));
  CHECK(IsSecretLikeName("DB_PASSWORD"));
  CHECK(IsSecretLikeName("GOOGLE_APPLICATION_CREDENTIALS"));
  CHECK_FALSE(IsSecretLikeName("PATH"));
  CHECK_FALSE(IsSecretLikeName("HOME"));
  CHECK_FALSE(IsSecretLikeName("TMPDIR"));
  // Each default exclude, anywhere in the name and in any case.
  CHECK(IsSecretLikeName("monkey"));
  CHECK(IsSecretLikeName("my_Passwd_file"));
  CHECK(IsSecretLikeName("xSecRetx"));
  CHECK(IsSecretLikeName("TOKEN"));
  CHECK(IsSecretLikeName("Credential"));
  CHECK(IsSecretLikeName("codex_session_store"));
  CHECK_FALSE(IsSecretLikeName("CODEX_SESSION_STORE_X"));
  CHECK_FALSE(IsSecretLikeName("CODEX_SESSION"));
  CHECK_FALSE(IsSecretLikeName("KE_Y"));
  CHECK_FALSE(IsSecretLikeName("PASSWOR"));
  CHECK_FALSE(IsSecretLikeName(""));
}

TEST_CASE("BuildEnvironment inherits, filters and overrides") {
  std::vector<std::string> base = {"PATH=/bin", "HOME=/root", "MY_API_KEY=sk",
                                   "BROKEN",    "=novalue",   "EMPTY="};
  EnvPolicy policy;
  policy.overrides = {{"HOME", "/home/x"}, {"NEW_TOKEN", "explicit"}};
  CHECK(BuildEnvironment(policy, base) ==
        std::vector<std::string>{"EMPTY=", "HOME=/home/x", "NEW_TOKEN=explicit", "PATH=/bin"});

  policy.secrets = SecretFilter::kKeep;
  CHECK(BuildEnvironment(policy, base) ==
        std::vector<std::string>{"EMPTY=", "HOME=/home/x", "MY_API_KEY=sk", "NEW_TOKEN=explicit",
                                 "PATH=/bin"});

  policy.inherit = EnvInherit::kNone;
  CHECK(BuildEnvironment(policy, base) ==
        std::vector<std::string>{"HOME=/home/x", "NEW_TOKEN=explicit"});
}

TEST_CASE("LookupEnv finds exact names only") {
  std::vector<std::string> env = {"PATHX=1", "PATH=/usr/bin"};
  CHECK(LookupEnv(env, "PATH", "dflt") == "/usr/bin");
  CHECK(LookupEnv(env, "PAT", "dflt") == "dflt");
}

TEST_CASE("EnvPatternMatches is a whole-name glob ignoring case") {
  CHECK(EnvPatternMatches("*KEY*", "openai_api_key"));
  CHECK(EnvPatternMatches("*KEY*", "KEY"));
  CHECK(EnvPatternMatches("AWS_*", "aws_region"));
  CHECK_FALSE(EnvPatternMatches("AWS_*", "MY_AWS_REGION"));
  CHECK(EnvPatternMatches("PATH", "path"));
  CHECK_FALSE(EnvPatternMatches("PATH", "PATHX"));
  CHECK(EnvPatternMatches("LC_?", "LC_A"));
  CHECK_FALSE(EnvPatternMatches("LC_?", "LC_AB"));
  CHECK(EnvPatternMatches("X[0-9]", "X7"));
  CHECK_FALSE(EnvPatternMatches("X[0-9]", "XA"));
  CHECK(EnvPatternMatches("X[!0-9]", "XA"));
  CHECK(EnvPatternMatches("A*B*C", "AxxBxxBxC"));
  CHECK_FALSE(EnvPatternMatches("A*B*C", "AxxBxxBx"));
  CHECK(EnvPatternMatches("*", ""));
  CHECK(EnvPatternMatches("[", "["));  // an unclosed set is a literal '['
}

TEST_CASE("shell_environment_policy: inherit all, core, none") {
  const std::vector<std::string> base = {"PATH=/bin", "HOME=/root", "LANG=C",
                                         "USER=u",    "TMPDIR=/t",  "EDITOR=vi"};
  EnvPolicy policy;
  CHECK(BuildEnvironment(policy, base).size() == base.size());
  policy.inherit = EnvInherit::kCore;
  CHECK(BuildEnvironment(policy, base) ==
        std::vector<std::string>{"HOME=/root", "PATH=/bin", "TMPDIR=/t", "USER=u"});
  policy.inherit = EnvInherit::kNone;
  CHECK(BuildEnvironment(policy, base).empty());
  CHECK(ParseEnvInherit("core") == EnvInherit::kCore);
  CHECK(ParseEnvInherit("all") == EnvInherit::kAll);
  CHECK(ParseEnvInherit("none") == EnvInherit::kNone);
  CHECK_FALSE(ParseEnvInherit("All").has_value());
  CHECK_FALSE(ParseEnvInherit("").has_value());
}

TEST_CASE("shell_environment_policy: default excludes, exclude, set, include_only in order") {
  const std::vector<std::string> base = {"PATH=/bin",    "FOO_TOKEN=t",   "my_key=k",
                                         "AWS_SECRET=s", "AWS_REGION=eu", "LANG=C"};
  EnvPolicy policy;
  // Default excludes apply to inherited names, ignoring case.
  CHECK(BuildEnvironment(policy, base) ==
        std::vector<std::string>{"AWS_REGION=eu", "LANG=C", "PATH=/bin"});
  // ignore_default_excludes keeps them.
  policy.secrets = SecretFilter::kKeep;
  CHECK(BuildEnvironment(policy, base).size() == base.size());
  // exclude drops matching names, ignoring case.
  policy.exclude = {"aws_*", "lang"};
  CHECK(BuildEnvironment(policy, base) ==
        std::vector<std::string>{"FOO_TOKEN=t", "PATH=/bin", "my_key=k"});
  // set comes after the excludes: it may set an excluded or secret-like name.
  policy.secrets = SecretFilter::kDropSecretLike;
  policy.set = {{"AWS_REGION", "us"}, {"API_KEY", "explicit"}};
  CHECK(BuildEnvironment(policy, base) ==
        std::vector<std::string>{"API_KEY=explicit", "AWS_REGION=us", "PATH=/bin"});
  // include_only comes last and also filters `set`.
  policy.include_only = {"PATH", "aws_*"};
  CHECK(BuildEnvironment(policy, base) == std::vector<std::string>{"AWS_REGION=us", "PATH=/bin"});
  // The runner's overrides survive every filter.
  policy.overrides = {{"CODEX_SANDBOX_NETWORK_DISABLED", "1"}};
  CHECK(BuildEnvironment(policy, base) ==
        std::vector<std::string>{"AWS_REGION=us", "CODEX_SANDBOX_NETWORK_DISABLED=1", "PATH=/bin"});
}

TEST_CASE("PolicyValueOf gives a variable the value the whole environment would") {
  ::setenv("CODEX_ENV_TEST_PATH", "/first", 1);
  ::setenv("CODEX_ENV_TEST_SECRET_TOKEN", "sk", 1);
  const std::vector<std::string> names = {"CODEX_ENV_TEST_PATH", "CODEX_ENV_TEST_SECRET_TOKEN",
                                          "CODEX_ENV_TEST_UNSET", "PATH"};
  std::vector<EnvPolicy> policies(6);
  policies[1].inherit = EnvInherit::kCore;
  policies[2].secrets = SecretFilter::kKeep;
  policies[3].exclude = {"codex_env_test_p*"};
  policies[3].set = {{"CODEX_ENV_TEST_UNSET", "from set"}};
  policies[4].include_only = {"*_TOKEN", "CODEX_ENV_TEST_U*"};
  policies[4].set = {{"CODEX_ENV_TEST_UNSET", "from set"}, {"CODEX_ENV_TEST_PATH", "set"}};
  policies[5].inherit = EnvInherit::kNone;
  policies[5].overrides = {{"CODEX_ENV_TEST_PATH", "override"}};
  for (size_t i = 0; i < policies.size(); ++i) {
    const auto whole = BuildEnvironment(policies[i], CurrentEnvironment());
    for (const std::string& name : names) {
      INFO("policy " << i << ", " << name);
      CHECK(PolicyValueOf(policies[i], name, "fallback") == LookupEnv(whole, name, "fallback"));
    }
  }
  CHECK(PolicyValueOf(policies[5], "CODEX_ENV_TEST_PATH", "") == "override");
  CHECK(PolicyValueOf(policies[3], "CODEX_ENV_TEST_PATH", "none") == "none");
  CHECK(PolicyValueOf(policies[0], "CODEX_ENV_TEST_SECRET_TOKEN", "none") == "none");
  CHECK(PolicyValueOf(policies[2], "CODEX_ENV_TEST_SECRET_TOKEN", "none") == "sk");
  ::unsetenv("CODEX_ENV_TEST_PATH");
  ::unsetenv("CODEX_ENV_TEST_SECRET_TOKEN");
}
