#include "storage/packed_text.h"

#include <catch2/catch.hpp>
#include <random>

#include "core/item.h"

using codex::storage::PackText;
using codex::storage::UnpackText;

TEST_CASE("PackText: what it packs unpacks to the same bytes, NULs and bad UTF-8 included") {
  std::string output;
  for (int i = 0; i < 40; ++i) output += "src/file" + std::to_string(i) + ".cc:42: TODO tidy\n";
  const std::vector<std::string> texts = {
      codex::core::FunctionCallOutput("call_1", output).body,
      codex::core::UserMessage("explain what SearchQuery does and where it is used").body,
      std::string(300, '\0') + "\xff\xfe" + std::string(300, 'x'),
  };
  for (const std::string& t : texts) {
    auto packed = PackText(t);
    REQUIRE(packed.has_value());
    CHECK(packed->size() < t.size());
    auto back = UnpackText(*packed);
    REQUIRE(back.ok());
    CHECK(*back == t);
  }
  // A Codex event shape shrinks to a small part of itself (the dictionary's point).
  const std::string token_count =
      R"({"type":"token_count","info":{"total_token_usage":{"input_tokens":12034,"cached_input_tokens":11008,"cache_write_input_tokens":0,"output_tokens":310,"reasoning_output_tokens":128,"total_tokens":12344},"last_token_usage":{"input_tokens":4100,"cached_input_tokens":3968,"cache_write_input_tokens":0,"output_tokens":95,"reasoning_output_tokens":64,"total_tokens":4195},"last_usage_includes_reasoning":false,"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":null,"secondary":null,"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}})";
  auto packed = PackText(token_count);
  REQUIRE(packed.has_value());
  CHECK(packed->size() * 4 < token_count.size());
}

TEST_CASE("PackText leaves short and incompressible texts as they are") {
  CHECK_FALSE(PackText(R"({"type":"message"})").has_value());
  // Random bytes do not shrink by an eighth: stored as they are.
  std::mt19937 rng(7);
  std::string noise;
  for (int i = 0; i < 2000; ++i) noise += static_cast<char>(rng() & 0xff);
  CHECK_FALSE(PackText(noise).has_value());
  // Encrypted reasoning is base64 of random bytes: only its 6 bits a character
  // are saved (about a quarter), and it unpacks to the same text.
  std::string enc = R"({"type":"reasoning","encrypted_content":")";
  const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 2000; ++i) enc += b64[rng() % 64];
  enc += "\"}";
  auto packed = PackText(enc);
  REQUIRE(packed.has_value());
  CHECK(packed->size() * 10 > enc.size() * 7);
  CHECK(*UnpackText(*packed) == enc);
}

TEST_CASE("UnpackText refuses a damaged or unknown packed text with DataLoss") {
  const std::string text = codex::core::AssistantMessage(std::string(500, 'a') + " done").body;
  auto packed = PackText(text);
  REQUIRE(packed.has_value());
  std::string cut = packed->substr(0, packed->size() - 3);
  CHECK(UnpackText(cut).status().code() == codex::StatusCode::kDataLoss);
  std::string longer = *packed;
  longer[1] = static_cast<char>(longer[1] + 1);  // recorded size no longer matches
  CHECK(UnpackText(longer).status().code() == codex::StatusCode::kDataLoss);
  std::string future = *packed;
  future[0] = 0x02;
  auto r = UnpackText(future);
  CHECK(r.status().code() == codex::StatusCode::kDataLoss);
  CHECK(r.status().message().find("newer codex") != std::string::npos);
  CHECK(UnpackText("").status().code() == codex::StatusCode::kDataLoss);
  // A recorded size no stream of this length can reach is refused before it is allocated.
  std::string huge = *packed;
  huge[4] = static_cast<char>(0x7f);  // about 2 GB
  CHECK(UnpackText(huge).status().message().find("cannot come from") != std::string::npos);
}
