#include "cli/terminal_text.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

using codex::cli::IsTerminal;
using codex::cli::NeutralizeControls;
using codex::cli::PrintF;
using codex::cli::PrintText;
using codex::cli::TextForStream;

TEST_CASE("NeutralizeControls keeps printable text, newlines and tabs") {
  CHECK(NeutralizeControls("") == "");
  CHECK(NeutralizeControls("hello\tworld\nnext line\n") == "hello\tworld\nnext line\n");
  CHECK(NeutralizeControls("héllo → ✓ 日本 🙂") == "héllo → ✓ 日本 🙂");
}

TEST_CASE("NeutralizeControls renders every escape and control harmless") {
  // Set the window title (OSC), clear the screen (CSI), move the cursor home.
  CHECK(NeutralizeControls("\x1b]0;pwned\x07") == "^[]0;pwned^G");
  CHECK(NeutralizeControls("\x1b[2J\x1b[H") == "^[[2J^[[H");
  CHECK(NeutralizeControls("\x1b"
                           "c") == "^[c");              // full reset
  CHECK(NeutralizeControls("ok\rEVIL") == "ok^MEVIL");  // overwrite the line
  CHECK(NeutralizeControls("a\bb") == "a^Hb");
  CHECK(NeutralizeControls(std::string("x\0y", 3)) == "x^@y");
  CHECK(NeutralizeControls("\x7f") == "^?");
  // C1 controls as UTF-8 (U+009B is CSI, U+009D is OSC) and as raw bytes.
  CHECK(NeutralizeControls("\xc2\x9b"
                           "2J") == "<U+009B>2J");
  CHECK(NeutralizeControls("\xc2\x9d"
                           "0;t\xc2\x9c") == "<U+009D>0;t<U+009C>");
  CHECK(NeutralizeControls("\x9b"
                           "2J") == "\\x9B2J");
  // Invalid UTF-8: truncated, overlong, surrogate.
  CHECK(NeutralizeControls("\xe2\x82") == "\\xE2\\x82");
  CHECK(NeutralizeControls("\xc0\x9b") == "\\xC0\\x9B");
  CHECK(NeutralizeControls("\xed\xa0\x80") == "\\xED\\xA0\\x80");
  // Bidirectional overrides that reorder what the user reads.
  CHECK(NeutralizeControls("a\xe2\x80\xae"
                           "b") == "a<U+202E>b");
  CHECK(NeutralizeControls("\xe2\x81\xa6") == "<U+2066>");
  // Nothing of the output may contain an ESC, a C0/C1 control or DEL.
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  const std::string safe = NeutralizeControls(all);
  for (char ch : safe) {
    const auto c = static_cast<unsigned char>(ch);
    CHECK((c == '\n' || c == '\t' || (c >= 0x20 && c < 0x7F)));
  }
}

TEST_CASE("TextForStream: neutralised on a terminal, byte-exact on a pipe or file") {
  const std::string text = "title \x1b]0;x\x07 red \x1b[31mR\r\n\xff end\n";
  CHECK(TextForStream(text, true) == NeutralizeControls(text));
  CHECK(TextForStream(text, true).find('\x1b') == std::string::npos);
  CHECK(TextForStream(text, false) == text);
  CHECK(TextForStream("plain\n", true) == "plain\n");
}

TEST_CASE("NeutralizeControls marks direction marks and line separators too") {
  CHECK(NeutralizeControls("a\xe2\x80\x8e"
                           "b") == "a<U+200E>b");  // LRM
  CHECK(NeutralizeControls("a\xe2\x80\x8f"
                           "b") == "a<U+200F>b");  // RLM
  CHECK(NeutralizeControls("a\xd8\x9c"
                           "b") == "a<U+061C>b");  // Arabic letter mark
  CHECK(NeutralizeControls("a\xe2\x80\xa8"
                           "b") == "a<U+2028>b");  // line separator
  CHECK(NeutralizeControls("a\xe2\x81\xa9"
                           "b") == "a<U+2069>b");  // pop directional isolate
  // Neighbours that only look alike stay as they are.
  CHECK(NeutralizeControls("\xe2\x80\x8d") == "\xe2\x80\x8d");  // ZWJ (emoji sequences)
  CHECK(NeutralizeControls("\xc3\xa9") == "\xc3\xa9");
}

TEST_CASE("PrintText and PrintF write exact bytes to a file, the rule to a terminal") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  CHECK_FALSE(IsTerminal(f));
  const std::string text =
      "name \x1b]0;t\x07 \xc2\x9b"
      "2J\n";
  CHECK(PrintText(f, text));
  CHECK(PrintF(f, "%s|%d\n", "\x1b[2K", 7));
  std::rewind(f);
  std::string back;
  int c;
  while ((c = std::fgetc(f)) != EOF) back.push_back(static_cast<char>(c));
  std::fclose(f);
  CHECK(back == text + "\x1b[2K|7\n");
}
