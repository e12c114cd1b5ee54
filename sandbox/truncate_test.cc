#include "sandbox/truncate.h"

#include <catch2/catch.hpp>

using namespace codex::sandbox;

namespace {

std::string Lines(int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

}  // namespace

TEST_CASE("TruncateHeadTail leaves short text alone") {
  CHECK(TruncateHeadTail("") == "");
  CHECK(TruncateHeadTail("hello\n") == "hello\n");
  std::string exact(100, 'x');
  CHECK(TruncateHeadTail(exact, 100) == exact);
}

TEST_CASE("TruncateHeadTail keeps head and tail lines and counts the rest") {
  std::string text = Lines(10000);
  std::string out = TruncateHeadTail(text, 1000);
  CHECK(out.size() < 1100);
  CHECK(out.rfind("line 0\nline 1\n", 0) == 0);
  CHECK(out.size() >= 20);
  CHECK(out.substr(out.size() - 10) == "line 9999\n");

  size_t marker = out.find("[... ");
  REQUIRE(marker != std::string::npos);
  size_t marker_end = out.find(" omitted ...]\n", marker);
  REQUIRE(marker_end != std::string::npos);
  // Head and tail end and start on line boundaries.
  CHECK(out[marker - 1] == '\n');
  std::string tail = out.substr(marker_end + 14);
  CHECK(tail.rfind("line ", 0) == 0);
  std::string head = out.substr(0, marker);

  size_t omitted_bytes = text.size() - head.size() - tail.size();
  size_t omitted_lines = 10000 - static_cast<size_t>(std::count(head.begin(), head.end(), '\n')) -
                         static_cast<size_t>(std::count(tail.begin(), tail.end(), '\n'));
  std::string expected = "[... " + std::to_string(omitted_bytes) + " bytes (" +
                         std::to_string(omitted_lines) + " lines) omitted ...]\n";
  CHECK(out.substr(marker, marker_end + 14 - marker) == expected);
  // Head + middle + tail reassemble the original.
  CHECK(text.substr(0, head.size()) == head);
  CHECK(text.substr(text.size() - tail.size()) == tail);
}

TEST_CASE("TruncateHeadTail cuts text without newlines at byte level") {
  std::string text(5000, 'a');
  text += std::string(5000, 'b');
  std::string out = TruncateHeadTail(text, 100);
  CHECK(out == std::string(50, 'a') + "\n[... 9900 bytes omitted ...]\n" + std::string(50, 'b'));
}

TEST_CASE("TruncateHeadTail never splits a UTF-8 sequence") {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "\xC3\xA9";  // é
  std::string out = TruncateHeadTail(text, 101);
  size_t marker = out.find("\n[... ");
  REQUIRE(marker != std::string::npos);
  std::string head = out.substr(0, marker);
  CHECK(head.size() % 2 == 0);
  size_t tail_at = out.find("...]\n") + 5;
  CHECK((out.size() - tail_at) % 2 == 0);
  CHECK(static_cast<unsigned char>(out[tail_at]) == 0xC3);
}

TEST_CASE("TruncateHeadTail adds bytes dropped earlier to the count") {
  CHECK(TruncateHeadTail("short\n", 100, 42) == "short\n[... 42 bytes omitted ...]\n");
  std::string out = TruncateHeadTail(std::string(300, 'x'), 100, 1000);
  CHECK(out.find("[... 1200 bytes omitted ...]") != std::string::npos);
}
