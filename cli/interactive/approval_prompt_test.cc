// request_user_input's questions as the interactive UI puts them
// (cli/interactive/approval_prompt.h): the form drawn terminal-safe, and the
// line prompt's answers (a number, free text, EOF).
#include "cli/interactive/approval_prompt.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <vector>

namespace codex::cli {
namespace {

std::vector<core::UserInputQuestion> Questions() {
  return {{"db",
           "Database",
           "Which \x1b[2Jdatabase?",
           {{"SQLite (Recommended)", "One file."},
            {"Postgre\x1b]0;pwned\x07SQL", "A \x1b[31mserver."}}},
          {"name", "Name", "Called?", {{"items", "d"}}}};
}

TEST_CASE("request_user_input form: options, None of the above, the model's text inert") {
  const Style plain(Color::kDisabled);
  const std::vector<core::UserInputQuestion> q = Questions();
  std::string form = DescribeUserInputQuestion(q, 0, 1, false, "", plain);
  CHECK(form.find('\x1b') == std::string::npos);
  CHECK(form.find('\x07') == std::string::npos);
  CHECK(form.find("Question 1/2 (2 unanswered)") != std::string::npos);
  CHECK(form.find("Which ^[[2Jdatabase?") != std::string::npos);
  CHECK(form.find("  › 2. Postgre^[]0;pwned^GSQL") != std::string::npos);
  CHECK(form.find("A ^[[31mserver.") != std::string::npos);
  CHECK(form.find("3. None of the above") != std::string::npos);
  CHECK(form.find("enter to submit answer | esc to interrupt") != std::string::npos);
  // The last question submits all; open notes show what is typed, inert too.
  form = DescribeUserInputQuestion(q, 1, 1, true, "my \x1b[2J note", plain);
  CHECK(form.find("Question 2/2 (1 unanswered)") != std::string::npos);
  CHECK(form.find("› my ^[[2J note") != std::string::npos);
  CHECK(form.find("enter to submit all") != std::string::npos);
  const std::string summary = DescribeUserInputAnswers(
      q, {{"db", q[0].options[1].label, ""}, {"name", "None of the above", "x\x1b[2J"}}, plain);
  CHECK(summary.find('\x1b') == std::string::npos);
  CHECK(summary.find("Questions 2/2 answered") != std::string::npos);
  CHECK(summary.find("answer: Postgre^[]0;pwned^GSQL") != std::string::npos);
  CHECK(summary.find("note: x^[[2J") != std::string::npos);
}

TEST_CASE(
    "request_user_input on plain stdin: a number picks, other words are the note, EOF stops") {
  auto ask = [](const std::string& typed) {
    std::string in_text = typed;
    std::FILE* in = fmemopen(in_text.data(), in_text.size(), "r");
    char* err_buf = nullptr;
    size_t err_size = 0;
    std::FILE* err = open_memstream(&err_buf, &err_size);
    LineApprovalPrompt prompt(in, err);
    auto answers = prompt.AskUserInput(Questions(), core::CancelToken());
    std::fclose(in);
    std::fclose(err);
    std::string shown(err_buf, err_size);
    std::free(err_buf);
    CHECK(shown.find('\x1b') == std::string::npos);
    return answers;
  };
  auto answered = ask("2\n call it orders \n");
  REQUIRE(answered.ok());
  REQUIRE(answered->has_value());
  CHECK(core::UserInputAnswersJson(**answered) ==
        R"({"answers":{"db":{"answers":["Postgre\u001b]0;pwned\u0007SQL"]},)"
        R"("name":{"answers":["None of the above","user_note: call it orders"]}}})");
  // The number of "None of the above": no note.
  answered = ask("1\n2\n");
  REQUIRE(answered.ok());
  CHECK(
      core::UserInputAnswersJson(**answered) ==
      R"~({"answers":{"db":{"answers":["SQLite (Recommended)"]},"name":{"answers":["None of the above"]}}})~");
  auto stopped = ask("1\n");
  REQUIRE_FALSE(stopped.ok());
  CHECK(stopped.status().code() == StatusCode::kCancelled);
}

}  // namespace
}  // namespace codex::cli
