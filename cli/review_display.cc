#include "cli/review_display.h"

namespace codex::cli {

std::string ReviewShownText(std::string_view text) {
  return core::RenderReviewOutput(core::ParseReviewOutput(text));
}

void ReviewDisplayObserver::OnItemCompleted(const core::Item& item) {
  if (item.kind == core::ItemKind::kMessage && item.role == "assistant") {
    inner_.OnItemCompleted(core::AssistantMessage(ReviewShownText(core::MessageText(item))));
    return;
  }
  inner_.OnItemCompleted(item);
}

}  // namespace codex::cli
