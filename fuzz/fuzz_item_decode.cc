// libFuzzer target: core::DecodeItem over arbitrary bytes.
//
// Checks, beyond the sanitizers: decoding is idempotent (a decoded body
// decodes to itself with the same kind, role and call id), and the helpers
// that read a body (MessageText, WireBody, EstimateItemTokens) accept any
// decoded item.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/context_budget.h"
#include "core/item.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto item = codex::core::DecodeItem(input);
  if (!item.ok()) {
    if (item.status().message().empty()) __builtin_trap();
    return 0;
  }
  auto again = codex::core::DecodeItem(item->body);
  if (!again.ok()) __builtin_trap();
  if (again->body != item->body || again->kind != item->kind || again->role != item->role ||
      again->call_id != item->call_id) {
    __builtin_trap();
  }
  (void)codex::core::MessageText(*item);
  (void)codex::core::WireBody(*item, /*send_item_ids=*/true);
  (void)codex::core::EstimateItemTokens(*item);
  (void)codex::core::ItemKindName(item->kind);
  return 0;
}
