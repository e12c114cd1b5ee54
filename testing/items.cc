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

}  // namespace codex::testing
