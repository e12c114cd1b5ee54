// request_user_input, Codex 0.169's tool for asking the user one to three
// short questions mid-turn: the questions as the model sent them, the user's
// answers, and the output the model gets back. What is offered is
// core/tool_schemas.h, the arguments' decoding core/tool_args.h, the asking
// itself the Approver (core/approval.h; the interactive UI's question form,
// cli/interactive/approval_prompt.h). As in Codex: unless
// `features.default_mode_request_user_input` is on, every call answers
// kUserInputUnavailable (this codex has only Codex's Default mode); with it,
// `codex exec` (no one to ask) answers {"answers":{}}, and the interactive
// UI asks, each question's options plus a free-form "None of the above",
// with optional notes. Pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace codex::core {

// Codex 0.169's output for a call while the feature is off.
inline constexpr std::string_view kUserInputUnavailable =
    "request_user_input is unavailable in Default mode";
// The option the client adds to every question (Codex's words).
inline constexpr std::string_view kUserInputOtherLabel = "None of the above";
// The prefix of the user's notes in an answer (Codex's).
inline constexpr std::string_view kUserInputNotePrefix = "user_note: ";

struct UserInputOption {
  std::string label;
  std::string description;
};

struct UserInputQuestion {
  std::string id;
  std::string header;
  std::string question;
  std::vector<UserInputOption> options;
};

// The answer to one question: the chosen option's label (or
// kUserInputOtherLabel), and the notes typed beside it ("" = none).
struct UserInputAnswer {
  std::string id;
  std::string label;
  std::string note;
};

// The function_call_output text: {"answers":{ID:{"answers":[LABEL,
// "user_note: NOTE"?]},…}} in question order (Codex's map has no fixed
// order); an empty list is {"answers":{}}.
std::string UserInputAnswersJson(const std::vector<UserInputAnswer>& answers);

}  // namespace codex::core
