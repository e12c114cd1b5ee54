#include "sandbox/output_buffer.h"

#include <catch2/catch.hpp>
#include <string>

#include "sandbox/truncate.h"

using namespace codex::sandbox;

TEST_CASE("HeadTailBuffer keeps everything while it fits") {
  HeadTailBuffer b(4, 4);
  b.Append("ab");
  b.Append("");
  b.Append("cdef");
  CHECK(b.head() == "abcd");
  CHECK(b.tail() == "ef");
  CHECK(b.omitted_bytes() == 0);
  CHECK(b.total_bytes() == 6);
}

TEST_CASE("HeadTailBuffer keeps the head and the true tail of a long stream") {
  HeadTailBuffer b(5, 7);
  std::string all;
  // Chunks of every size relative to the ring, so the ring wraps at every
  // offset: smaller than it, exactly it, larger than it.
  for (int i = 0; i < 200; ++i) {
    std::string chunk;
    for (int k = 0; k < i % 11; ++k) chunk += static_cast<char>('a' + (i + k) % 26);
    if (i % 17 == 0) chunk += '\n';
    all += chunk;
    b.Append(chunk);
    INFO("after chunk " << i);
    REQUIRE(b.head() == all.substr(0, std::min<size_t>(5, all.size())));
    const size_t tail_len = std::min<size_t>(7, all.size() - b.head().size());
    REQUIRE(b.tail() == all.substr(all.size() - tail_len));
    REQUIRE(b.total_bytes() == static_cast<int64_t>(all.size()));
    REQUIRE(b.omitted_bytes() == static_cast<int64_t>(all.size() - b.head().size() - tail_len));
  }
  const std::string middle = all.substr(5, all.size() - 5 - 7);
  CHECK(b.omitted_lines() == std::count(middle.begin(), middle.end(), '\n'));
}

TEST_CASE("HeadTailBuffer with no room keeps nothing but counts") {
  HeadTailBuffer b(0, 0);
  b.Append("hello\nworld\n");
  CHECK(b.head().empty());
  CHECK(b.tail().empty());
  CHECK(b.omitted_bytes() == 12);
  CHECK(b.omitted_lines() == 2);
}

TEST_CASE("TruncateHeadTail with a capture gap shows the real last line and the count") {
  HeadTailBuffer b(1000, 1000);
  int64_t total = 0;
  for (int i = 1; i <= 500000; ++i) {
    std::string line = std::to_string(i) + "\n";
    total += static_cast<int64_t>(line.size());
    b.Append(line);
  }
  b.Append("ERROR-LINE\n");
  total += 11;
  const std::string text = b.head() + b.tail();
  const OutputGap gap{b.head().size(), b.omitted_bytes(), b.omitted_lines()};
  const std::string out = TruncateHeadTail(text, gap, 200);
  CHECK(out.rfind("1\n2\n3\n", 0) == 0);
  CHECK(out.size() >= 11);
  CHECK(out.substr(out.size() - 11) == "ERROR-LINE\n");
  CHECK(out.find("499999\n500000\nERROR-LINE\n") != std::string::npos);
  // Every byte is either shown or counted.
  const size_t marker = out.find("[... ");
  REQUIRE(marker != std::string::npos);
  const size_t bytes_end = out.find(" bytes", marker);
  const int64_t omitted = std::stoll(out.substr(marker + 5, bytes_end - marker - 5));
  const size_t marker_end = out.find("...]\n", marker) + 5;
  CHECK(static_cast<int64_t>(marker) + static_cast<int64_t>(out.size() - marker_end) + omitted ==
        total);
  // And every line: 500001 in all.
  const size_t lines_at = out.find(" (", marker);
  const int64_t omitted_lines = std::stoll(out.substr(lines_at + 2));
  const int64_t shown_lines = std::count(out.begin(), out.end(), '\n') - 1;  // minus the marker
  CHECK(omitted_lines + shown_lines == 500001);
}
