// Token usage as reported by response.completed (ResponseUsage), mapped the
// way Codex maps it. Missing or null details count as 0.
#pragma once

#include <cstdint>

namespace codex::core {

struct TokenUsage {
  int64_t input_tokens = 0;
  int64_t cached_input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t reasoning_output_tokens = 0;
  int64_t total_tokens = 0;
  int64_t cache_write_input_tokens = 0;  // input_tokens_details.cache_write_tokens

  TokenUsage& operator+=(const TokenUsage& o) {
    input_tokens += o.input_tokens;
    cached_input_tokens += o.cached_input_tokens;
    output_tokens += o.output_tokens;
    reasoning_output_tokens += o.reasoning_output_tokens;
    total_tokens += o.total_tokens;
    cache_write_input_tokens += o.cache_write_input_tokens;
    return *this;
  }
  bool operator==(const TokenUsage&) const = default;
};

}  // namespace codex::core
