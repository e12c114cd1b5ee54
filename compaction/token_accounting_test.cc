#include "compaction/token_accounting.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/model_client.h"

using namespace codex;
using namespace codex::compaction;

namespace {

core::Item ImageMessage(size_t base64_bytes) {
  core::Item item;
  item.kind = core::ItemKind::kMessage;
  item.role = "user";
  item.body = R"({"type":"message","role":"user","content":[{"type":"input_text","text":"look"},)"
              R"({"type":"input_image","image_url":"data:image/png;base64,)" +
              std::string(base64_bytes, 'A') + R"(","detail":"auto"}]})";
  return item;
}

}  // namespace

TEST_CASE("Known model families map to their context windows") {
  CHECK(KnownContextWindow("gpt-5-codex") == 272'000);
  CHECK(KnownContextWindow("gpt-5.1-codex-max") == 272'000);
  CHECK(KnownContextWindow("gpt-5") == 272'000);
  CHECK(KnownContextWindow("gpt-4.1-mini") == 1'047'576);
  CHECK(KnownContextWindow("gpt-4o-mini") == 128'000);
  CHECK(KnownContextWindow("gpt-4") == 8'192);
  CHECK(KnownContextWindow("o3") == 200'000);
  CHECK(KnownContextWindow("o4-mini") == 200'000);
  CHECK(KnownContextWindow("o1-mini") == 128'000);
  CHECK(KnownContextWindow("codex-mini-latest") == 200'000);
  CHECK(KnownContextWindow("openai/gpt-4o") == 128'000);
  CHECK_FALSE(KnownContextWindow("llama3").has_value());
  CHECK_FALSE(KnownContextWindow("").has_value());
}

TEST_CASE("Context limits: table, overrides, 90% default, cap and bad values") {
  auto unknown = ResolveContextLimits("mystery-model", std::nullopt, std::nullopt);
  REQUIRE(unknown.ok());
  CHECK(unknown->context_window == kFallbackContextWindow);
  CHECK(unknown->auto_compact_limit == 115'200);

  auto known = ResolveContextLimits("gpt-5-codex", std::nullopt, std::nullopt);
  REQUIRE(known.ok());
  CHECK(known->context_window == 272'000);
  CHECK(known->auto_compact_limit == 244'800);

  auto window = ResolveContextLimits("gpt-5-codex", 12'000, std::nullopt);
  REQUIRE(window.ok());
  CHECK(window->context_window == 12'000);
  CHECK(window->auto_compact_limit == 10'800);
  CHECK(window->soft_compact_limit == 8'100);  // 75% of the limit

  auto soft = ResolveContextLimits("gpt-5-codex", 12'000, std::nullopt, 9'000);
  REQUIRE(soft.ok());
  CHECK(soft->soft_compact_limit == 9'000);
  auto soft_capped = ResolveContextLimits("gpt-5-codex", 12'000, std::nullopt, 11'000);
  REQUIRE(soft_capped.ok());
  CHECK(soft_capped->soft_compact_limit == 10'800);  // never above the limit
  auto bad = ResolveContextLimits("gpt-5-codex", 12'000, std::nullopt, -1);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("model_auto_compact_soft_token_limit") != std::string::npos);

  auto limit = ResolveContextLimits("gpt-4o", std::nullopt, 5'000);
  REQUIRE(limit.ok());
  CHECK(limit->context_window == 128'000);
  CHECK(limit->auto_compact_limit == 5'000);

  auto capped = ResolveContextLimits("gpt-4o", 10'000, 50'000);
  REQUIRE(capped.ok());
  CHECK(capped->auto_compact_limit == 10'000);

  auto bad_window = ResolveContextLimits("gpt-4o", 0, std::nullopt);
  REQUIRE_FALSE(bad_window.ok());
  CHECK(bad_window.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad_window.status().message().find("model_context_window") != std::string::npos);
  auto bad_limit = ResolveContextLimits("gpt-4o", std::nullopt, -3);
  REQUIRE_FALSE(bad_limit.ok());
  CHECK(bad_limit.status().message().find("model_auto_compact_token_limit") != std::string::npos);

  core::Config config;
  config.model = "o3";
  config.model_auto_compact_token_limit = 1'000;
  auto from_config = ResolveContextLimits(config);
  REQUIRE(from_config.ok());
  CHECK(from_config->context_window == 200'000);
  CHECK(from_config->auto_compact_limit == 1'000);
}

TEST_CASE("Item estimates: bytes / 4, images at a fixed cost, encrypted content by bytes") {
  core::Item text = core::UserMessage("hello");
  CHECK(EstimateItemTokens(text) == static_cast<int64_t>((text.body.size() + 3) / 4));
  CHECK(EstimateItemTokens(text) == EstimateTextTokens(text.body.size()));

  core::Item image = ImageMessage(400'000);
  const int64_t est = EstimateItemTokens(image);
  CHECK(est > kImageTokenEstimate);
  CHECK(est < kImageTokenEstimate + 100);
  CHECK(EstimateTextTokens(image.body.size()) > 100'000);  // what bytes / 4 alone would say
  // The image's cost does not depend on its encoded size.
  CHECK(EstimateItemTokens(ImageMessage(10)) == est);

  auto output = core::DecodeItem(
      R"({"type":"function_call_output","call_id":"c1","output":[{"type":"input_image","image_url":"data:image/png;base64,)" +
      std::string(80'000, 'B') +
      R"("},{"type":"input_image","image_url":"data:image/png;base64,QQ=="}]})");
  REQUIRE(output.ok());
  CHECK(EstimateItemTokens(*output) > 2 * kImageTokenEstimate);
  CHECK(EstimateItemTokens(*output) < 2 * kImageTokenEstimate + 50);

  auto reasoning = core::DecodeItem(R"({"type":"reasoning","summary":[],"encrypted_content":")" +
                                    std::string(40'000, 'E') + R"("})");
  REQUIRE(reasoning.ok());
  CHECK(EstimateItemTokens(*reasoning) >= 10'000);
  auto compaction = core::DecodeItem(R"({"type":"compaction","encrypted_content":")" +
                                     std::string(8'000, 'Z') + R"("})");
  REQUIRE(compaction.ok());
  CHECK(EstimateItemTokens(*compaction) >= 2'000);

  core::Item checkpoint;
  checkpoint.kind = core::ItemKind::kCompactionCheckpoint;
  checkpoint.body = R"({"type":"compaction_checkpoint","mode":"local"})";
  CHECK(EstimateItemTokens(checkpoint) == 0);

  std::vector<core::Item> items = {text, *reasoning, checkpoint};
  CHECK(EstimateTokens(items) == EstimateItemTokens(text) + EstimateItemTokens(*reasoning));
}

TEST_CASE("Context left and the overflow error") {
  CHECK(ContextLeftPercent(0, 1000) == 100);
  CHECK(ContextLeftPercent(500, 1000) == 50);
  CHECK(ContextLeftPercent(999, 1000) == 0);
  CHECK(ContextLeftPercent(5000, 1000) == 0);
  CHECK(ContextLeftPercent(-5, 1000) == 100);
  CHECK(ContextLeftPercent(10, 0) == 100);  // unknown window: nothing known used

  Status overflow = ResourceExhaustedError("too long");
  overflow.WithReason(core::reason::kContextLengthExceeded);
  CHECK(IsContextWindowExceeded(overflow));
  Status quota = ResourceExhaustedError("quota");
  quota.WithReason(core::reason::kInsufficientQuota);
  CHECK_FALSE(IsContextWindowExceeded(quota));
  CHECK_FALSE(IsContextWindowExceeded(
      UnavailableError("x").WithReason(core::reason::kContextLengthExceeded)));
}
