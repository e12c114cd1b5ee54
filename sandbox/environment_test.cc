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
