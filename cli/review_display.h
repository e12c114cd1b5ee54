// How a review's answer reaches the user: the model answers in the review
// JSON (core/review.h); every renderer (the stderr progress, `--json` events,
// the interactive screen) shows it as Codex does, rendered by
// core::RenderReviewOutput. ReviewDisplayObserver sits in front of the
// renderer: it forwards everything, except that an assistant message is
// passed on rendered and its streamed text deltas (raw JSON) are held back.
// The stored transcript keeps the model's own message.
#pragma once

#include <string>
#include <string_view>

#include "core/review.h"
#include "core/turn_observer.h"

namespace codex::cli {

// The text a review shows for the model's final message `text`.
std::string ReviewShownText(std::string_view text);

class ReviewDisplayObserver : public core::TurnObserver {
 public:
  explicit ReviewDisplayObserver(core::TurnObserver& inner) : inner_(inner) {}

  void OnTurnStarted(std::string_view turn_id) override { inner_.OnTurnStarted(turn_id); }
  void OnTextDelta(std::string_view) override {}
  void OnReasoningDelta(std::string_view delta) override { inner_.OnReasoningDelta(delta); }
  void OnRawReasoningDelta(std::string_view delta) override { inner_.OnRawReasoningDelta(delta); }
  void OnItemCompleted(const core::Item& item) override;
  void OnToolStarted(const core::ToolActivity& a) override { inner_.OnToolStarted(a); }
  void OnToolOutput(std::string_view call_id, std::string_view chunk) override {
    inner_.OnToolOutput(call_id, chunk);
  }
  void OnToolCompleted(const core::ToolActivity& a) override { inner_.OnToolCompleted(a); }
  void OnCompaction(const core::CompactionNotice& n) override { inner_.OnCompaction(n); }
  void OnTurnCompleted(const core::TokenUsage& usage, int left) override {
    inner_.OnTurnCompleted(usage, left);
  }
  void OnTurnFailed(const Status& status) override { inner_.OnTurnFailed(status); }
  void OnNotice(std::string_view message) override { inner_.OnNotice(message); }
  void OnRetry(std::string_view message) override { inner_.OnRetry(message); }

 private:
  core::TurnObserver& inner_;
};

}  // namespace codex::cli
