#include "cli/interactive/output_view.h"

#include <catch2/catch.hpp>
#include <string>

namespace codex::cli {
namespace {

TEST_CASE("the live rows are the last lines, the unfinished one included, across chunks") {
  OutputView v;
  CHECK(v.empty());
  CHECK(v.LiveRows(80, "> ", "  ").empty());
  v.Feed("one\ntw");
  v.Feed("o\nthr");
  CHECK(v.lines() == 3);
  CHECK(v.LiveRows(80, "> ", "  ") == "> one\n  two\n  thr\n");
  for (int i = 4; i <= 9; ++i) v.Feed("line" + std::to_string(i) + "\n");
  CHECK(v.LiveRows(80, "", "") == "line5\nline6\nline7\nline8\nline9\n");
}

TEST_CASE("a lone carriage return starts the line over; CRLF ends it") {
  OutputView v;
  v.Feed("progress 10%\rprogress 50%\r");
  v.Feed("progress 100%\r");
  v.Feed("\ndone\r\nnext");
  CHECK(v.LiveRows(80, "", "") == "progress 100%\ndone\nnext\n");
  CHECK(v.lines() == 3);
}

TEST_CASE("live rows are cut to the width and neutralised; tabs are expanded") {
  OutputView v;
  v.Feed(std::string(200, 'x') + "\n\x1b[31mred\ta\n日本語日本語\n");
  std::string rows = v.LiveRows(12, "└ ", "  ");
  CHECK(rows == "└ xxxxxxxxx…\n  ^[[31mred…\n  日本語日…\n");
  // Never wider than asked: every row fits 12 columns.
  OutputView w;
  w.Feed("a\tb\n");
  CHECK(w.LiveRows(40, "", "") == "a       b\n");
}

TEST_CASE("the excerpt is every line when few, else head, a count and tail") {
  OutputView few;
  few.Feed("a\nb\nc");
  CHECK(few.Excerpt("└ ", "  ") == "└ a\n  b\n  c\n");
  OutputView many;
  for (int i = 1; i <= 1000; ++i) many.Feed("line" + std::to_string(i) + "\n");
  many.Feed("partial");
  CHECK(many.Excerpt("└ ", "  ") ==
        "└ line1\n  line2\n  … +996 lines\n  line999\n  line1000\n  partial\n");
}

TEST_CASE("memory stays bounded: a huge line is cut, lines are not all kept") {
  OutputView v;
  std::string chunk(65536, 'y');
  for (int i = 0; i < 64; ++i) v.Feed(chunk);  // 4 MiB without a newline
  v.Feed("\n");
  std::string rows = v.LiveRows(100000, "", "");
  CHECK(rows.size() == OutputView::kMaxLineBytes + 1);
  CHECK(v.lines() == 1);
}

}  // namespace
}  // namespace codex::cli
