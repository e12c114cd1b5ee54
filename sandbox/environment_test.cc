#include "sandbox/environment.h"

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
