#include "core/sse_parser.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace codex::core {
namespace {

struct Got {
  std::string event;
  std::string data;
  std::string id;
  bool operator==(const Got&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Got& g) {
  return os << "{event=" << g.event << " data=" << g.data << " id=" << g.id << "}";
}

// Parses `stream` fed in pieces of `piece` bytes (0 = all at once).
std::vector<Got> Parse(std::string_view stream, size_t piece = 0) {
  std::vector<Got> got;
  SseParser parser([&](const SseEvent& e) {
    got.push_back({std::string(e.event), std::string(e.data), std::string(e.id)});
    return OkStatus();
  });
  if (piece == 0) {
    REQUIRE(parser.Feed(stream).ok());
  } else {
    for (size_t i = 0; i < stream.size(); i += piece) {
      REQUIRE(parser.Feed(stream.substr(i, piece)).ok());
    }
  }
  REQUIRE(parser.Finish().ok());
  return got;
}

TEST_CASE("SseParser: events with event and data fields") {
  auto got = Parse("event: a\ndata: {\"x\":1}\n\nevent: b\ndata: two\n\n");
  REQUIRE(got == std::vector<Got>{{"a", "{\"x\":1}", ""}, {"b", "two", ""}});
}

TEST_CASE("SseParser: the event name defaults to message and resets per event") {
  auto got = Parse("event: a\ndata: 1\n\ndata: 2\n\n");
  REQUIRE(got == std::vector<Got>{{"a", "1", ""}, {"message", "2", ""}});
}

TEST_CASE("SseParser: CRLF, CR and LF line ends, mixed") {
  const std::string expected_data = "x";
  for (std::string_view stream :
       {"data: x\r\n\r\n", "data: x\r\r", "data: x\n\n", "data: x\r\n\n", "data: x\n\r"}) {
    INFO(stream);
    REQUIRE(Parse(stream) == std::vector<Got>{{"message", "x", ""}});
  }
}

TEST_CASE("SseParser: a CR and its LF split across chunks make one line end") {
  std::vector<Got> got;
  SseParser parser([&](const SseEvent& e) {
    got.push_back({std::string(e.event), std::string(e.data), std::string(e.id)});
    return OkStatus();
  });
  REQUIRE(parser.Feed("data: a\r").ok());
  REQUIRE(parser.Feed("").ok());  // an empty read must not lose the pending LF skip
  REQUIRE(parser.Feed("\ndata: b\r").ok());
  REQUIRE(parser.Feed("\n\r").ok());
  REQUIRE(parser.Feed("\n").ok());
  REQUIRE(parser.Finish().ok());
  // "a\r\n" + "b\r\n" + "\r\n": one event with two data lines.
  REQUIRE(got == std::vector<Got>{{"message", "a\nb", ""}});
}

TEST_CASE("SseParser: comments are ignored") {
  auto got = Parse(": keep-alive\n\n:another\ndata: v\n: inside\n\n");
  REQUIRE(got == std::vector<Got>{{"message", "v", ""}});
}

TEST_CASE("SseParser: multi-line data is joined with newlines") {
  auto got = Parse("data: one\ndata:two\ndata:\ndata:  four\n\n");
  REQUIRE(got == std::vector<Got>{{"message", "one\ntwo\n\n four", ""}});
}

TEST_CASE("SseParser: a field name alone is a field with an empty value") {
  auto got = Parse("data\n\ndata\ndata\n\n");
  REQUIRE(got == std::vector<Got>{{"message", "", ""}, {"message", "\n", ""}});
}

TEST_CASE("SseParser: an event without data is not dispatched") {
  auto got = Parse("event: response.created\n\nevent: x\nid: 1\n\ndata: d\n\n");
  REQUIRE(got == std::vector<Got>{{"message", "d", "1"}});
}

TEST_CASE("SseParser: id persists across events and ignores values with NUL") {
  std::string stream = "id: 7\ndata: a\n\ndata: b\n\nid: 8";
  stream += '\0';
  stream += "\ndata: c\n\nid\ndata: d\n\n";
  auto got = Parse(stream);
  REQUIRE(got == std::vector<Got>{{"message", "a", "7"},
                                  {"message", "b", "7"},
                                  {"message", "c", "7"},
                                  {"message", "d", ""}});
}

TEST_CASE("SseParser: retry takes only all-digit values") {
  SseParser parser([](const SseEvent&) { return OkStatus(); });
  REQUIRE(parser.Feed("retry: 1500\n").ok());
  REQUIRE(parser.retry_ms() == 1500);
  REQUIRE(parser.Feed("retry: 15x\nretry:\nretry: -1\n").ok());
  REQUIRE(parser.retry_ms() == 1500);
  REQUIRE(parser.Feed("retry:20\n").ok());
  REQUIRE(parser.retry_ms() == 20);
}

TEST_CASE("SseParser: unknown fields are ignored") {
  auto got = Parse("foo: bar\ndata: x\nDATA: y\n\n");
  REQUIRE(got == std::vector<Got>{{"message", "x", ""}});
}

TEST_CASE("SseParser: Finish dispatches a final event without a blank line") {
  REQUIRE(Parse("data: a\n\ndata: last") ==
          std::vector<Got>{{"message", "a", ""}, {"message", "last", ""}});
  REQUIRE(Parse("event: e\ndata: last\n") == std::vector<Got>{{"e", "last", ""}});
  REQUIRE(Parse("data: a\n\n: trailing comment").size() == 1);
}

TEST_CASE("SseParser: a leading BOM is skipped, also when split") {
  const std::string stream =
      "\xEF\xBB\xBF"
      "data: x\n\n";
  REQUIRE(Parse(stream) == std::vector<Got>{{"message", "x", ""}});
  REQUIRE(Parse(stream, 1) == std::vector<Got>{{"message", "x", ""}});
  // Only at the very start: a second BOM is part of the field name.
  REQUIRE(Parse("\xEF\xBB\xBF\xEF\xBB\xBF"
                "data: x\n\n")
              .empty());
}

TEST_CASE("SseParser: any split of a stream gives the same events") {
  const std::string stream =
      "\xEF\xBB\xBF: hello\r\nevent: response.created\r\ndata: {\"type\":\"a\"}\r\n\r\n"
      "id: 42\rdata: line1\rdata: line2\r\rretry: 10\nevent:x\ndata:{}\n\n"
      "data: unterminated";
  const auto whole = Parse(stream);
  REQUIRE(whole == std::vector<Got>{{"response.created", "{\"type\":\"a\"}", ""},
                                    {"message", "line1\nline2", "42"},
                                    {"x", "{}", "42"},
                                    {"message", "unterminated", "42"}});
  for (size_t piece : {1, 2, 3, 5, 7, 13}) {
    INFO("piece " << piece);
    REQUIRE(Parse(stream, piece) == whole);
  }
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    INFO("cut " << cut);
    std::vector<Got> got;
    SseParser parser([&](const SseEvent& e) {
      got.push_back({std::string(e.event), std::string(e.data), std::string(e.id)});
      return OkStatus();
    });
    REQUIRE(parser.Feed(std::string_view(stream).substr(0, cut)).ok());
    REQUIRE(parser.Feed(std::string_view(stream).substr(cut)).ok());
    REQUIRE(parser.Finish().ok());
    REQUIRE(got == whole);
  }
}

TEST_CASE("SseParser: a callback error stops the parser") {
  int calls = 0;
  SseParser parser([&](const SseEvent&) {
    ++calls;
    return DataLossError("stop here");
  });
  Status s = parser.Feed("data: 1\n\ndata: 2\n\n");
  REQUIRE(s.code() == StatusCode::kDataLoss);
  REQUIRE(calls == 1);
  REQUIRE(parser.Feed("data: 3\n\n").code() == StatusCode::kDataLoss);
  REQUIRE(parser.Finish().code() == StatusCode::kDataLoss);
  REQUIRE(calls == 1);
}

TEST_CASE("SseParser: events larger than the limit are refused") {
  SseParser parser([](const SseEvent&) { return OkStatus(); }, 16);
  REQUIRE(parser.Feed("data: 0123456789\n").ok());
  Status s = parser.Feed("data: 0123456789\n");
  REQUIRE(s.code() == StatusCode::kResourceExhausted);

  SseParser long_line([](const SseEvent&) { return OkStatus(); }, 16);
  REQUIRE(long_line.Feed("data: 0123456").ok());
  REQUIRE(long_line.Feed("789abcdef").code() == StatusCode::kResourceExhausted);

  // The same limit holds for a complete line and for any field, whole or split.
  for (size_t piece : {1, 100}) {
    SseParser limited([](const SseEvent&) { return OkStatus(); }, 16);
    const std::string stream = "event: 0123456789abcdef\n";
    Status last;
    for (size_t i = 0; i < stream.size() && last.ok(); i += piece) {
      last = limited.Feed(std::string_view(stream).substr(i, piece));
    }
    REQUIRE(last.code() == StatusCode::kResourceExhausted);
  }
}

TEST_CASE("SseParser: large data survives arbitrary chunking") {
  std::string big(100'000, 'q');
  big[5000] = 'Z';
  const std::string stream = "data: " + big + "\n\n";
  for (size_t piece : {1000, 4096, 65536}) {
    auto got = Parse(stream, piece);
    REQUIRE(got.size() == 1);
    REQUIRE(got[0].data == big);
  }
}

}  // namespace
}  // namespace codex::core
