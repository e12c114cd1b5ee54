#include "testing/items.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace codex::testing {

core::Item Decoded(std::string_view json) {
  auto item = core::DecodeItem(json);
  if (!item.ok()) {
    std::fprintf(stderr, "error: a test's item does not decode (%s): %s\n",
                 item.status().ToString().c_str(), std::string(json).c_str());
    std::abort();
  }
  return *std::move(item);
}

std::vector<core::Item> MinimalInitialContext(std::string_view approval_policy) {
  return {core::DeveloperMessage("<permissions instructions>" + std::string(approval_policy) +
                                 "</permissions instructions>"),
          core::UserMessage("<environment_context>\n  <cwd>/p</cwd>\n</environment_context>")};
}

bool CallsPairedInOrder(const std::vector<core::Item>& items) {
  for (size_t i = 0; i < items.size(); ++i) {
    const bool call = core::IsCall(items[i].kind);
    const bool output = core::IsCallOutput(items[i].kind);
    if (!call && !output) continue;
    int partners = 0;
    for (size_t k = 0; k < items.size(); ++k) {
      if (k == i || items[k].call_id != items[i].call_id) continue;
      if (call && k > i && core::IsCallOutput(items[k].kind)) ++partners;
      if (output && k < i && core::IsCall(items[k].kind)) ++partners;
    }
    if (partners != 1) return false;
  }
  return true;
}

}  // namespace codex::testing
