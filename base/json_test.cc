#include "base/json.h"

#include <catch2/catch.hpp>
#include <string>

using codex::Dump;

TEST_CASE("Dump writes compact JSON and replaces invalid UTF-8 instead of throwing") {
  CHECK(Dump({{"a", 1}, {"b", "x"}}) == R"({"a":1,"b":"x"})");  // a braced list is a json
  nlohmann::json bad = std::string("ok \xC3(");
  CHECK(Dump(bad) == "\"ok \xEF\xBF\xBD(\"");  // U+FFFD for the broken sequence
  nlohmann::ordered_json ordered;
  ordered["z"] = 1;
  ordered["a"] = 2;
  CHECK(Dump(ordered) == R"({"z":1,"a":2})");  // insertion order kept
}
