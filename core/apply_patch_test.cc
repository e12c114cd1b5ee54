#include "core/apply_patch.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/apply_patch_tool.h"
#include "testing/files.h"
#include "testing/temp_dir.h"
#include "testing/test_data.h"

using namespace codex::core;
namespace fs = std::filesystem;

namespace {

using codex::testing::TempDir;

using codex::testing::ReadFile;
using codex::testing::WriteFile;

UpdateChunk Chunk(std::initializer_list<std::string> patch_lines,
                  std::vector<std::string> contexts = {}, bool eof = false) {
  UpdateChunk chunk;
  chunk.contexts = std::move(contexts);
  chunk.end_of_file = eof;
  for (const std::string& l : patch_lines) {
    PatchChunkLine line;
    line.kind = l[0] == '+'   ? PatchChunkLine::Kind::kAdd
                : l[0] == '-' ? PatchChunkLine::Kind::kRemove
                              : PatchChunkLine::Kind::kContext;
    line.text = l.substr(1);
    chunk.lines.push_back(line);
  }
  return chunk;
}

std::string Apply(const std::string& original, std::vector<UpdateChunk> chunks) {
  auto r = ApplyChunksToText(original, chunks, "f.txt");
  INFO(r.status().message());
  REQUIRE(r.ok());
  return *r;
}

}  // namespace

// ---------------------------------------------------------------------------
// Parser

TEST_CASE("ParsePatch reads add, delete, update and move hunks") {
  auto p = ParsePatch(
      "*** Begin Patch\n"
      "*** Add File: a/new.txt\n"
      "+hello\n"
      "+\n"
      "*** Delete File: gone.txt\n"
      "*** Update File: src/x.py\n"
      "*** Move to: src/y.py\n"
      "@@ def f():\n"
      " keep\n"
      "-old\n"
      "+new\n"
      "*** End Patch\n");
  REQUIRE(p.ok());
  REQUIRE(p->hunks.size() == 3);
  CHECK(p->hunks[0].kind == PatchHunkKind::kAdd);
  CHECK(p->hunks[0].path == "a/new.txt");
  CHECK(p->hunks[0].contents == "hello\n\n");
  CHECK(p->hunks[0].line_number == 2);
  CHECK(p->hunks[1].kind == PatchHunkKind::kDelete);
  CHECK(p->hunks[1].path == "gone.txt");
  CHECK(p->hunks[2].kind == PatchHunkKind::kUpdate);
  CHECK(p->hunks[2].move_path == "src/y.py");
  REQUIRE(p->hunks[2].chunks.size() == 1);
  const UpdateChunk& c = p->hunks[2].chunks[0];
  CHECK(c.contexts == std::vector<std::string>{"def f():"});
  CHECK(c.OldLines() == std::vector<std::string>{"keep", "old"});
  CHECK(c.NewLines() == std::vector<std::string>{"keep", "new"});
  CHECK_FALSE(c.end_of_file);
}

TEST_CASE("ParsePatch: first chunk may omit @@, later ones need it, blank lines between") {
  auto p = ParsePatch(
      "*** Begin Patch\n*** Update File: f\n-a\n+b\n\n@@\n-c\n+d\n*** End of File\n*** End Patch");
  REQUIRE(p.ok());
  REQUIRE(p->hunks[0].chunks.size() == 2);
  CHECK(p->hunks[0].chunks[0].contexts.empty());
  CHECK(p->hunks[0].chunks[1].end_of_file);

  auto bad =
      ParsePatch("*** Begin Patch\n*** Update File: f\n-a\n*** End of File\nx\n*** End Patch");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "Invalid patch hunk on line 5: Expected update hunk to start with a @@ context marker, "
        "got: 'x'");
}

TEST_CASE("ParsePatch: a blank line inside a chunk is an empty context line") {
  auto p = ParsePatch("*** Begin Patch\n*** Update File: f\n@@\n a\n\n b\n*** End Patch");
  REQUIRE(p.ok());
  CHECK(p->hunks[0].chunks[0].OldLines() == std::vector<std::string>{"a", "", "b"});
}

TEST_CASE("ParsePatch: consecutive @@ lines narrow step by step") {
  auto p = ParsePatch(
      "*** Begin Patch\n*** Update File: f\n@@ class A\n@@   def m():\n-x\n+y\n*** End Patch");
  REQUIRE(p.ok());
  CHECK(p->hunks[0].chunks[0].contexts == std::vector<std::string>{"class A", "  def m():"});
}

TEST_CASE("ParsePatch trims the text, markers and hunk headers; accepts CRLF") {
  CHECK(ParsePatch("\n\n  *** Begin Patch \n  *** Add File: x \n+1\n *** End Patch  \n\n").ok());
  auto crlf =
      ParsePatch("*** Begin Patch\r\n*** Update File: f\r\n@@\r\n-a\r\n+b\r\n*** End Patch\r\n");
  REQUIRE(crlf.ok());
  CHECK(crlf->hunks[0].path == "f");
  CHECK(crlf->hunks[0].chunks[0].NewLines() == std::vector<std::string>{"b"});
}

TEST_CASE("ParsePatch unwraps heredocs") {
  for (std::string opener : {"<<EOF", "<<'EOF'", "<<\"EOF\""}) {
    auto p = ParsePatch(opener + "\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n");
    INFO(opener);
    REQUIRE(p.ok());
    CHECK(p->hunks[0].contents == "x\n");
  }
  // Too short to be a heredoc: the ordinary error.
  auto p = ParsePatch("<<EOF\n*** Begin Patch\nEOF");
  CHECK(p.status().message() ==
        "Invalid patch: The first line of the patch must be '*** Begin Patch'");
}

TEST_CASE("ParsePatch error messages") {
  auto msg = [](std::string_view text) { return ParsePatch(text).status().message(); };
  CHECK(msg("") == "Invalid patch: The first line of the patch must be '*** Begin Patch'");
  CHECK(msg("hello") == "Invalid patch: The first line of the patch must be '*** Begin Patch'");
  CHECK(msg("*** Begin Patch") ==
        "Invalid patch: The last line of the patch must be '*** End Patch'");
  CHECK(msg("*** Begin Patch\n*** Add File: a\n+x") ==
        "Invalid patch: The last line of the patch must be '*** End Patch'");
  CHECK(msg("*** Begin Patch\n*** Update File: foo.txt\n*** End Patch") ==
        "Invalid patch hunk on line 2: Update file hunk for path 'foo.txt' is empty");
  CHECK(msg("*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch") ==
        "Invalid patch hunk on line 2: '*** Frobnicate File: foo' is not a valid hunk header. "
        "Valid hunk headers: '*** Add File: {path}', '*** Delete File: {path}', '*** Update "
        "File: {path}'");
  CHECK(msg("*** Begin Patch\n*** Update File: f\n@@\nbogus\n*** End Patch") ==
        "Invalid patch hunk on line 4: Unexpected line found in update hunk: 'bogus'. Every line "
        "should start with ' ' (context line), '+' (added line), or '-' (removed line)");
  CHECK(msg("*** Begin Patch\n*** Update File: f\n@@\n*** End of File\n*** End Patch") ==
        "Invalid patch hunk on line 4: Update hunk does not contain any lines");
  // An Add File ends at the first line without '+'.
  CHECK(msg("*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch")
            .starts_with("Invalid patch hunk on line 4: 'y' is not a valid hunk header."));
  auto empty = ParsePatch("*** Begin Patch\n*** End Patch");
  REQUIRE(empty.ok());
  CHECK(empty->hunks.empty());
}

// ---------------------------------------------------------------------------
// Applying chunks to text

TEST_CASE("ApplyChunksToText: exact match, and the result always ends with a newline") {
  CHECK(Apply("a\nb\nc\n", {Chunk({" a", "-b", "+B"})}) == "a\nB\nc\n");
  CHECK(Apply("no newline at end", {Chunk({"-no newline at end", "+first", "+second"})}) ==
        "first\nsecond\n");
  CHECK(Apply("a\nb\n", {Chunk({"-a", "-b"})}) == "");
}

TEST_CASE("ApplyChunksToText: fuzzy passes in order") {
  // Pass 2: trailing whitespace ignored; the file's own context text is kept.
  CHECK(Apply("x  \ny\n", {Chunk({" x", "-y", "+Y"})}) == "x  \nY\n");
  // Pass 3: leading and trailing whitespace ignored.
  CHECK(Apply("    indented\nz\n", {Chunk({"-indented", "+done"})}) == "done\nz\n");
  // Pass 4: Unicode punctuation folded to ASCII.
  CHECK(Apply("say \xE2\x80\x9Chi\xE2\x80\x9D \xE2\x80\x94 ok\xC2\xA0now\n",
              {Chunk({"-say \"hi\" - ok now", "+fixed"})}) == "fixed\n");
  // An exact match later in the file beats a loose match earlier.
  CHECK(Apply("foo  \nbar\nfoo\n", {Chunk({"-foo", "+FOO"})}) == "foo  \nbar\nFOO\n");
  // Nothing matches even loosely.
  auto r = ApplyChunksToText("a\n", {Chunk({"-b", "+c"})}, "/w/f.txt");
  CHECK(r.status().message() == "Failed to find expected lines in /w/f.txt:\nb");
}

TEST_CASE("ApplyChunksToText: @@ context narrows the search") {
  std::string text = "def a():\n  x = 1\ndef b():\n  x = 1\n";
  CHECK(Apply(text, {Chunk({"-  x = 1", "+  x = 2"}, {"def b():"})}) ==
        "def a():\n  x = 1\ndef b():\n  x = 2\n");
  CHECK(Apply(text, {Chunk({"-  x = 1", "+  x = 2"})}) == "def a():\n  x = 2\ndef b():\n  x = 1\n");
  auto r = ApplyChunksToText(text, {Chunk({"-  x = 1"}, {"def c():"})}, "p");
  CHECK(r.status().message() == "Failed to find context 'def c():' in p");
  // Two contexts in a row, each searched after the previous.
  std::string nested = "class A:\n def m():\n  v\nclass B:\n def m():\n  v\n";
  CHECK(Apply(nested, {Chunk({"-  v", "+  w"}, {"class B:", " def m():"})}) ==
        "class A:\n def m():\n  v\nclass B:\n def m():\n  w\n");
}

TEST_CASE("ApplyChunksToText: chunks apply in order, later ones searched after earlier ones") {
  CHECK(Apply("x\ny\nx\ny\n", {Chunk({"-x", "+1"}), Chunk({"-x", "+2"})}) == "1\ny\n2\ny\n");
}

TEST_CASE("ApplyChunksToText: End of File anchors the chunk at the end") {
  std::string text = "tail\nmid\ntail\n";
  CHECK(Apply(text, {Chunk({"-tail", "+end"}, {}, /*eof=*/true)}) == "tail\nmid\nend\n");
  CHECK(Apply(text, {Chunk({"-tail", "+end"})}) == "end\nmid\ntail\n");
  CHECK_FALSE(ApplyChunksToText(text, {Chunk({"-mid"}, {}, true)}, "p").ok());
}

TEST_CASE("ApplyChunksToText: pure additions go to the end") {
  CHECK(Apply("l1\nl2\n", {Chunk({"+a1", "+a2"})}) == "l1\nl2\na1\na2\n");
  CHECK(Apply("", {Chunk({"+only"})}) == "only\n");
}

TEST_CASE("ApplyChunksToText: a trailing blank line in the chunk may stand for the final newline") {
  CHECK(Apply("a\nb\n", {Chunk({" a", "-b", "+c", " "})}) == "a\nc\n");
}

TEST_CASE("ApplyChunksToText keeps line endings") {
  CHECK(Apply("one\r\ntwo\r\nthree\r\n",
              {Chunk({"-one", "+uno"}), Chunk({" two", "+", "+between", " three"})}) ==
        "uno\r\ntwo\r\n\r\nbetween\r\nthree\r\n");
  CHECK(Apply("same\r\nsame\n", {Chunk({"-same", " same"})}) == "same\n");
  CHECK(Apply("one\r\ntwo\nthree\r\nfour\n", {Chunk({" one", " two", "-three", "+THREE",
                                                     " four"})}) == "one\r\ntwo\nTHREE\r\nfour\n");
  CHECK(Apply("one\r\ntwo", {Chunk({"-one", "+ONE"})}) == "ONE\r\ntwo\r\n");
  CHECK(Apply("a\nb\nb\n", {Chunk({"-a", "-b", "+b", "+b", "+a"})}) == "b\nb\na\nb\n");
}

TEST_CASE("ApplyChunksToText preserves UTF-8") {
  CHECK(Apply("line1\nna\xC3\xAFve caf\xC3\xA9\nline3\n",
              {Chunk({" line1", "-na\xC3\xAFve caf\xC3\xA9",
                      "+na\xC3\xAFve caf\xC3\xA9 \xE2\x9C\x85"})}) ==
        "line1\nna\xC3\xAFve caf\xC3\xA9 \xE2\x9C\x85\nline3\n");
}

// ---------------------------------------------------------------------------
// Applying to a directory

TEST_CASE("ApplyPatch adds, updates, deletes and moves files, with a summary and diffs") {
  TempDir dir;
  WriteFile(dir.path() / "modify.txt", "line1\nline2\nline3\n");
  WriteFile(dir.path() / "delete.txt", "obsolete\n");
  WriteFile(dir.path() / "old/name.txt", "old content\n");
  ApplyPatchOptions opts{dir.str(), {}};
  auto r = ApplyPatch(
      "*** Begin Patch\n"
      "*** Add File: nested/deep/new.txt\n+created\n"
      "*** Delete File: delete.txt\n"
      "*** Update File: modify.txt\n@@\n line1\n-line2\n+changed\n"
      "*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-old content\n+new "
      "content\n"
      "*** End Patch",
      opts);
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(r->Summary() ==
        "Success. Updated the following files:\nA nested/deep/new.txt\nM modify.txt\nM "
        "renamed/dir/name.txt\nD delete.txt\n");
  CHECK(ReadFile(dir.path() / "nested/deep/new.txt") == "created\n");
  CHECK(ReadFile(dir.path() / "modify.txt") == "line1\nchanged\nline3\n");
  CHECK_FALSE(fs::exists(dir.path() / "delete.txt"));
  CHECK_FALSE(fs::exists(dir.path() / "old/name.txt"));
  CHECK(ReadFile(dir.path() / "renamed/dir/name.txt") == "new content\n");

  REQUIRE(r->changes.size() == 4);
  CHECK(r->changes[0].kind == FileChangeKind::kAdd);
  CHECK(r->changes[0].unified_diff == "@@ -0,0 +1 @@\n+created\n");
  CHECK(r->changes[1].kind == FileChangeKind::kDelete);
  CHECK(r->changes[1].unified_diff == "@@ -1 +0,0 @@\n-obsolete\n");
  CHECK(r->changes[2].kind == FileChangeKind::kUpdate);
  CHECK(r->changes[2].unified_diff == "@@ -1,3 +1,3 @@\n line1\n-line2\n+changed\n line3\n");
  CHECK(r->changes[2].new_content == "line1\nchanged\nline3\n");
  CHECK(r->changes[3].path == "old/name.txt");
  CHECK(r->changes[3].move_path == "renamed/dir/name.txt");
  CHECK(FileChangeKindName(r->changes[1].kind) == "delete");
}

TEST_CASE("Unified diffs keep three lines of context and split distant changes") {
  TempDir dir;
  std::string text;
  for (int i = 1; i <= 20; ++i) text += "l" + std::to_string(i) + "\n";
  WriteFile(dir.path() / "f", text);
  auto r =
      ApplyPatch("*** Begin Patch\n*** Update File: f\n@@\n-l2\n+L2\n@@\n-l18\n+L18\n*** End Patch",
                 {dir.str(), {}});
  REQUIRE(r.ok());
  CHECK(r->changes[0].unified_diff ==
        "@@ -1,5 +1,5 @@\n l1\n-l2\n+L2\n l3\n l4\n l5\n"
        "@@ -15,6 +15,6 @@\n l15\n l16\n l17\n-l18\n+L18\n l19\n l20\n");
}

TEST_CASE("ApplyPatch failures name the absolute path") {
  TempDir dir;
  fs::create_directory(dir.path() / "dir");
  WriteFile(dir.path() / "modify.txt", "line1\n");
  ApplyPatchOptions opts{dir.str(), {}};
  auto msg = [&](std::string_view patch) { return ApplyPatch(patch, opts).status().message(); };
  CHECK(msg("*** Begin Patch\n*** End Patch") == "No files were modified.");
  CHECK(msg("*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch") ==
        "Failed to delete file " + dir.str() + "/missing.txt");
  CHECK(msg("*** Begin Patch\n*** Delete File: dir\n*** End Patch") ==
        "Failed to delete file " + dir.str() + "/dir");
  CHECK(fs::is_directory(dir.path() / "dir"));
  CHECK(msg("*** Begin Patch\n*** Update File: missing.txt\n@@\n-a\n*** End Patch") ==
        "Failed to read file to update " + dir.str() +
            "/missing.txt: No such file or directory (os error 2)");
  CHECK(msg("*** Begin Patch\n*** Update File: modify.txt\n@@\n-missing\n+x\n*** End Patch") ==
        "Failed to find expected lines in " + dir.str() + "/modify.txt:\nmissing");
  CHECK(ReadFile(dir.path() / "modify.txt") == "line1\n");
}

TEST_CASE("ApplyPatch has no rollback: earlier hunks stay applied") {
  TempDir dir;
  auto r = ApplyPatch(
      "*** Begin Patch\n*** Add File: created.txt\n+hello\n*** Update File: missing.txt\n@@\n-old\n"
      "+new\n*** End Patch",
      {dir.str(), {}});
  REQUIRE_FALSE(r.ok());
  CHECK(ReadFile(dir.path() / "created.txt") == "hello\n");
}

TEST_CASE("ApplyPatch: Add overwrites, Move overwrites, later hunks see earlier ones") {
  TempDir dir;
  WriteFile(dir.path() / "dup.txt", "old\n");
  WriteFile(dir.path() / "src.txt", "from\n");
  WriteFile(dir.path() / "dst.txt", "existing\n");
  ::chmod((dir.path() / "src.txt").c_str(), 0750);
  auto r = ApplyPatch(
      "*** Begin Patch\n*** Add File: dup.txt\n+new\n*** Update File: dup.txt\n@@\n-new\n+newer\n"
      "*** Update File: src.txt\n*** Move to: dst.txt\n@@\n-from\n+moved\n*** End Patch",
      {dir.str(), {}});
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(ReadFile(dir.path() / "dup.txt") == "newer\n");
  CHECK(ReadFile(dir.path() / "dst.txt") == "moved\n");
  CHECK_FALSE(fs::exists(dir.path() / "src.txt"));
  struct stat st;
  REQUIRE(::stat((dir.path() / "dst.txt").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0750);
}

TEST_CASE("ApplyPatch: a move onto the same file keeps it") {
  TempDir dir;
  WriteFile(dir.path() / "a.txt", "x\n");
  auto r = ApplyPatch(
      "*** Begin Patch\n*** Update File: a.txt\n*** Move to: ./a.txt\n@@\n-x\n+y\n"
      "*** End Patch",
      {dir.str(), {}});
  REQUIRE(r.ok());
  CHECK(ReadFile(dir.path() / "a.txt") == "y\n");
}

TEST_CASE("PreviewPatch computes the outcome without writing") {
  TempDir dir;
  WriteFile(dir.path() / "a.txt", "1\n");
  auto parsed = ParsePatch(
      "*** Begin Patch\n*** Add File: b.txt\n+b\n*** Update File: b.txt\n@@\n-b\n+c\n"
      "*** Delete File: a.txt\n*** End Patch");
  REQUIRE(parsed.ok());
  auto r = PreviewPatch(*parsed, {dir.str(), {}});
  INFO(r.status().message());
  REQUIRE(r.ok());
  CHECK(r->changes[1].new_content == "c\n");
  CHECK(r->changes[2].unified_diff == "@@ -1 +0,0 @@\n-1\n");
  CHECK_FALSE(fs::exists(dir.path() / "b.txt"));
  CHECK(fs::exists(dir.path() / "a.txt"));
  // The same failures as a real run.
  auto again =
      ParsePatch("*** Begin Patch\n*** Delete File: a.txt\n*** Delete File: a.txt\n*** End Patch");
  REQUIRE(again.ok());
  CHECK(PreviewPatch(*again, {dir.str(), {}}).status().message() ==
        "Failed to delete file " + dir.str() + "/a.txt");
}

// ---------------------------------------------------------------------------
// Workspace safety

TEST_CASE("ApplyPatch refuses absolute paths and .. escapes before writing anything") {
  TempDir outer;
  fs::create_directory(outer.path() / "ws");
  std::string ws = (outer.path() / "ws").string();
  auto run = [&](const std::string& body) {
    return ApplyPatch("*** Begin Patch\n*** Add File: first.txt\n+1\n" + body + "*** End Patch",
                      {ws, {}});
  };
  auto abs = run("*** Add File: " + outer.str() + "/evil.txt\n+x\n");
  REQUIRE_FALSE(abs.ok());
  CHECK(
      abs.status().message().starts_with("Refusing absolute path '" + outer.str() + "/evil.txt'"));
  auto dotdot = run("*** Add File: ../evil.txt\n+x\n");
  REQUIRE_FALSE(dotdot.ok());
  CHECK(dotdot.status().message() == "Refusing to touch '../evil.txt': it resolves to " +
                                         outer.str() + "/evil.txt, outside the writable roots (" +
                                         ws + "); use a path inside the workspace");
  CHECK_FALSE(run("*** Update File: a/../../evil.txt\n@@\n+x\n").ok());
  CHECK_FALSE(run("*** Delete File: ../ws/../x\n").ok());
  CHECK_FALSE(
      run("*** Add File: ok.txt\n+x\n*** Update File: ok.txt\n*** Move to: ../moved\n@@\n+y\n")
          .ok());
  CHECK_FALSE(fs::exists(outer.path() / "evil.txt"));
  CHECK_FALSE(fs::exists(outer.path() / "ws/first.txt"));  // refused as a whole
  // `..` that stays inside is fine.
  fs::create_directory(outer.path() / "ws/sub");
  auto inside = run("*** Add File: sub/../inside.txt\n+x\n");
  INFO(inside.status().message());
  CHECK(inside.ok());
  CHECK(fs::exists(outer.path() / "ws/inside.txt"));
}

TEST_CASE("ApplyPatch refuses symlinks that lead out of the workspace") {
  TempDir outer;
  fs::create_directory(outer.path() / "ws");
  fs::create_directory(outer.path() / "secret");
  WriteFile(outer.path() / "secret/passwd", "root\n");
  std::string ws = (outer.path() / "ws").string();
  fs::create_directory_symlink(outer.path() / "secret", outer.path() / "ws/linkdir");
  fs::create_symlink(outer.path() / "secret/passwd", outer.path() / "ws/linkfile");
  fs::create_symlink("../secret/new.txt", outer.path() / "ws/dangling");
  auto run = [&](const std::string& body) {
    return ApplyPatch("*** Begin Patch\n" + body + "*** End Patch", {ws, {}});
  };
  auto via_dir = run("*** Add File: linkdir/x.txt\n+x\n");
  REQUIRE_FALSE(via_dir.ok());
  CHECK(via_dir.status().message().find("through a symlink") != std::string::npos);
  CHECK_FALSE(run("*** Update File: linkfile\n@@\n-root\n+pwned\n").ok());
  CHECK_FALSE(run("*** Add File: linkfile\n+pwned\n").ok());
  CHECK_FALSE(run("*** Add File: dangling\n+pwned\n").ok());
  CHECK_FALSE(run("*** Update File: linkdir/passwd\n@@\n-root\n+pwned\n").ok());
  CHECK(ReadFile(outer.path() / "secret/passwd") == "root\n");
  CHECK_FALSE(fs::exists(outer.path() / "secret/new.txt"));
  CHECK_FALSE(fs::exists(outer.path() / "secret/x.txt"));

  // Deleting the link removes the link, never its target.
  auto del = run("*** Delete File: linkfile\n");
  INFO(del.status().message());
  REQUIRE(del.ok());
  CHECK_FALSE(fs::is_symlink(outer.path() / "ws/linkfile"));
  CHECK(ReadFile(outer.path() / "secret/passwd") == "root\n");

  // A symlink that stays inside the workspace is followed.
  WriteFile(outer.path() / "ws/real.txt", "a\n");
  fs::create_symlink("real.txt", outer.path() / "ws/alias.txt");
  auto inside = run("*** Update File: alias.txt\n@@\n-a\n+b\n");
  INFO(inside.status().message());
  REQUIRE(inside.ok());
  CHECK(ReadFile(outer.path() / "ws/real.txt") == "b\n");
  CHECK(fs::is_symlink(outer.path() / "ws/alias.txt"));
}

TEST_CASE("ApplyPatch honours writable roots") {
  TempDir outer;
  fs::create_directory(outer.path() / "ws");
  fs::create_directory(outer.path() / "extra");
  fs::create_directory(outer.path() / "other");
  std::string ws = (outer.path() / "ws").string();
  std::string extra = (outer.path() / "extra").string();
  ApplyPatchOptions opts{ws, {ws, extra}};
  auto ok = ApplyPatch("*** Begin Patch\n*** Add File: ../extra/e.txt\n+e\n*** End Patch", opts);
  INFO(ok.status().message());
  REQUIRE(ok.ok());
  CHECK(ReadFile(outer.path() / "extra/e.txt") == "e\n");
  auto refused =
      ApplyPatch("*** Begin Patch\n*** Add File: ../other/o.txt\n+o\n*** End Patch", opts);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("outside the writable roots (" + ws + ", " + extra + ")") !=
        std::string::npos);
  // Writable roots that exclude the cwd make the cwd itself read-only.
  ApplyPatchOptions only_extra{ws, {extra}};
  CHECK_FALSE(
      ApplyPatch("*** Begin Patch\n*** Add File: w.txt\n+w\n*** End Patch", only_extra).ok());
  CHECK_FALSE(fs::exists(outer.path() / "ws/w.txt"));
}

TEST_CASE("ApplyPatch never creates a missing writable root or anything above it") {
  TempDir outer;
  fs::create_directory(outer.path() / "ws");
  std::string ws = (outer.path() / "ws").string();
  std::string missing = (outer.path() / "missing").string();
  ApplyPatchOptions opts{ws, {ws, missing}};
  auto r = ApplyPatch("*** Begin Patch\n*** Add File: ../missing/x.txt\n+x\n*** End Patch", opts);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "Failed to create parent directories for " + ws +
                                    "/../missing/x.txt: No such file or directory (os error 2)");
  CHECK_FALSE(fs::exists(outer.path() / "missing"));
}

TEST_CASE("ApplyPatch: a missing working directory is reported") {
  auto r = ApplyPatch("*** Begin Patch\n*** Add File: a\n+a\n*** End Patch",
                      {"/nonexistent/apply_patch_test_dir", {}});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("/nonexistent/apply_patch_test_dir") != std::string::npos);
}

// ---------------------------------------------------------------------------
// Shell interception

TEST_CASE("MatchShellApplyPatch recognises direct and heredoc invocations") {
  const std::string patch = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n";
  auto direct = MatchShellApplyPatch({"apply_patch", patch});
  REQUIRE(direct.ok());
  REQUIRE(direct->has_value());
  CHECK((*direct)->patch == patch);
  CHECK((*direct)->workdir.empty());
  CHECK(MatchShellApplyPatch({"applypatch", patch})->has_value());

  for (std::string delim : {"EOF", "'EOF'", "\"EOF\"", "'PATCH'"}) {
    std::string bare =
        delim[0] == '\'' || delim[0] == '"' ? delim.substr(1, delim.size() - 2) : delim;
    auto h = MatchShellApplyPatch(
        {"bash", "-lc", "apply_patch <<" + delim + "\n" + patch + bare + "\n"});
    INFO(delim);
    REQUIRE(h.ok());
    REQUIRE(h->has_value());
    CHECK((*h)->patch == patch);
  }
  auto cd = MatchShellApplyPatch(
      {"/bin/bash", "-lc", "cd 'sub dir' && apply_patch <<'EOF'\n" + patch + "EOF"});
  REQUIRE(cd.ok());
  REQUIRE(cd->has_value());
  CHECK((*cd)->workdir == "sub dir");
  CHECK((*cd)->patch == patch);
  auto zsh = MatchShellApplyPatch({"zsh", "-c", "cd src && applypatch << EOF\n" + patch + "EOF\n"});
  REQUIRE(zsh.ok());
  REQUIRE(zsh->has_value());
  CHECK((*zsh)->workdir == "src");
  // The directory is read by the shell lexer (sandbox/shell_lexer.h), so it
  // means what bash would make of it; a CRLF script keeps its quoted delimiter.
  auto escaped = MatchShellApplyPatch(
      {"bash", "-lc", "cd \"a \\\"b\\\"\" && apply_patch <<'EOF'\r\n" + patch + "EOF\r\n"});
  REQUIRE(escaped.ok());
  REQUIRE(escaped->has_value());
  CHECK((*escaped)->workdir == "a \"b\"");
}

TEST_CASE("MatchShellApplyPatch ignores other commands and reports bad patches") {
  const std::string patch = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n";
  auto none = [](std::vector<std::string> argv) {
    auto r = MatchShellApplyPatch(argv);
    return r.ok() && !r->has_value();
  };
  CHECK(none({"ls", "-la"}));
  CHECK(none({"apply_patch"}));
  CHECK(none({"apply_patch", patch, "extra"}));
  CHECK(none({"bash", "-lc", "echo hi"}));
  CHECK(none({"python", "-c", "apply_patch <<EOF\n" + patch + "EOF"}));
  CHECK(none({"bash", "-lc", "apply_patch <<EOF\n" + patch + "EOF\necho done"}));
  CHECK(none({"bash", "-lc", "apply_patch <<EOF\n" + patch}));  // no terminator
  CHECK(none({"bash", "-lc", "cd $HOME && apply_patch <<EOF\n" + patch + "EOF"}));
  CHECK(none({"bash", "-lc", "cd \"$HOME\" && apply_patch <<EOF\n" + patch + "EOF"}));
  CHECK(none({"bash", "-lc", "cd `pwd` && apply_patch <<EOF\n" + patch + "EOF"}));
  CHECK(none({"bash", "-lc", "cd ~/x && apply_patch <<EOF\n" + patch + "EOF"}));
  CHECK(none({"bash", "-lc", "cd src; apply_patch <<EOF\n" + patch + "EOF"}));
  auto bad = MatchShellApplyPatch({"apply_patch", "not a patch"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "Invalid patch: The first line of the patch must be '*** Begin Patch'");
  CHECK_FALSE(MatchShellApplyPatch({"bash", "-lc", "apply_patch <<'EOF'\nnope\nEOF"}).ok());
}

// ---------------------------------------------------------------------------
// Tool definitions

namespace {

// A matcher for the Lark subset the grammar uses (rules, alternatives,
// "literals", the /(.*)/ and /(.+)/ terminals matched greedily like a lexer, groups, ? * +,
// `-> alias`, %import common.LF), so the test checks the grammar text itself.
class MiniLark {
 public:
  explicit MiniLark(std::string_view grammar) {
    std::istringstream in{std::string(grammar)};
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      if (line.starts_with("%import common.LF")) {
        rules_["LF"] = Node{Node::kLit, "\n", {}, 0};
        continue;
      }
      size_t colon = line.find(": ");
      REQUIRE(colon != std::string::npos);
      std::string body = line.substr(colon + 2);
      size_t pos = 0;
      rules_[line.substr(0, colon)] = ParseAlt(body, pos);
      REQUIRE(pos == body.size());
    }
  }

  bool Accepts(const std::string& text) {
    text_ = text;
    memo_.clear();
    return Match(rules_.at("start"), 0).count(text.size()) > 0;
  }

 private:
  struct Node {
    enum Kind { kLit, kRegex, kRef, kAlt, kSeq } kind;
    std::string text;
    std::vector<Node> kids;
    char rep;  // 0, '?', '*', '+'
  };

  static void SkipSpaces(const std::string& s, size_t& p) {
    while (p < s.size() && s[p] == ' ') ++p;
  }

  Node ParseAlt(const std::string& s, size_t& p) {
    Node alt{Node::kAlt, "", {}, 0};
    alt.kids.push_back(ParseSeq(s, p));
    while (p < s.size() && s[p] == '|') {
      ++p;
      alt.kids.push_back(ParseSeq(s, p));
    }
    return alt;
  }

  Node ParseSeq(const std::string& s, size_t& p) {
    Node seq{Node::kSeq, "", {}, 0};
    for (;;) {
      SkipSpaces(s, p);
      if (p >= s.size() || s[p] == '|' || s[p] == ')') break;
      if (s.compare(p, 2, "->") == 0) {  // alias: ignore the rest of the alternative
        while (p < s.size() && s[p] != '|' && s[p] != ')') ++p;
        break;
      }
      Node item{Node::kLit, "", {}, 0};
      if (s[p] == '"') {
        size_t end = s.find('"', p + 1);
        item = Node{Node::kLit, s.substr(p + 1, end - p - 1), {}, 0};
        p = end + 1;
      } else if (s[p] == '/') {
        size_t end = s.find('/', p + 1);
        item = Node{Node::kRegex, s.substr(p + 1, end - p - 1), {}, 0};
        p = end + 1;
      } else if (s[p] == '(') {
        ++p;
        item = ParseAlt(s, p);
        REQUIRE(s[p] == ')');
        ++p;
      } else {
        size_t end = p;
        while (end < s.size() &&
               (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '_')) {
          ++end;
        }
        REQUIRE(end > p);
        item = Node{Node::kRef, s.substr(p, end - p), {}, 0};
        p = end;
      }
      if (p < s.size() && (s[p] == '?' || s[p] == '*' || s[p] == '+')) item.rep = s[p++];
      seq.kids.push_back(std::move(item));
    }
    return seq;
  }

  std::set<size_t> MatchOnce(const Node& n, size_t pos) {
    switch (n.kind) {
      case Node::kLit:
        if (text_.compare(pos, n.text.size(), n.text) == 0) return {pos + n.text.size()};
        return {};
      case Node::kRegex: {
        // The grammar's terminals are /(.*)/ and /(.+)/: the rest of the line, greedily
        // ('.' excludes line breaks), empty or not.
        REQUIRE((n.text == "(.*)" || n.text == "(.+)"));
        size_t end = text_.find_first_of("\r\n", pos);
        if (end == std::string::npos) end = text_.size();
        if (n.text == "(.+)" && end == pos) return {};
        return {end};
      }
      case Node::kRef: {
        auto key = std::make_pair(n.text, pos);
        if (auto it = memo_.find(key); it != memo_.end()) return it->second;
        std::set<size_t> ends = Match(rules_.at(n.text), pos);
        memo_[key] = ends;
        return ends;
      }
      case Node::kAlt: {
        std::set<size_t> ends;
        for (const Node& k : n.kids) ends.merge(Match(k, pos));
        return ends;
      }
      case Node::kSeq: {
        std::set<size_t> cur{pos};
        for (const Node& k : n.kids) {
          std::set<size_t> next;
          for (size_t p : cur) next.merge(Match(k, p));
          cur = std::move(next);
        }
        return cur;
      }
    }
    return {};
  }

  std::set<size_t> Match(const Node& n, size_t pos) {
    if (n.rep == 0) return MatchOnce(n, pos);
    std::set<size_t> result = MatchOnce(n, pos);  // one repetition
    if (n.rep != '+') result.insert(pos);         // zero repetitions
    if (n.rep == '?') return result;
    std::set<size_t> frontier = result;  // more repetitions, until no new end appears
    while (!frontier.empty()) {
      std::set<size_t> next;
      for (size_t p : frontier) {
        for (size_t e : MatchOnce(n, p)) {
          if (result.insert(e).second) next.insert(e);
        }
      }
      frontier = std::move(next);
    }
    return result;
  }

  std::map<std::string, Node> rules_;
  std::map<std::pair<std::string, size_t>, std::set<size_t>> memo_;
  std::string text_;
};

}  // namespace

TEST_CASE("The freeform tool definition carries the Lark grammar") {
  nlohmann::ordered_json tool = ApplyPatchToolDefinition(ApplyPatchToolType::kFreeform);
  CHECK(ApplyPatchToolJson(ApplyPatchToolType::kFreeform) == tool.dump());
  std::vector<std::string> keys;
  for (const auto& [k, v] : tool.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"type", "name", "description", "format"});
  CHECK(tool["type"] == "custom");
  CHECK(tool["name"] == "apply_patch");
  CHECK_FALSE(tool["description"].get<std::string>().empty());
  CHECK(tool["format"].dump() ==
        nlohmann::ordered_json({{"type", "grammar"},
                                {"syntax", "lark"},
                                {"definition", std::string(ApplyPatchLarkGrammar())}})
            .dump());
}

TEST_CASE("The function tool definition takes the patch in `input`") {
  std::string json = ApplyPatchToolJson(ApplyPatchToolType::kFunction);
  nlohmann::ordered_json tool = nlohmann::ordered_json::parse(json);
  std::vector<std::string> keys;
  for (const auto& [k, v] : tool.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"type", "name", "description", "parameters", "strict"});
  CHECK(tool["type"] == "function");
  CHECK(tool["name"] == "apply_patch");
  CHECK(tool["strict"] == false);
  CHECK(tool["description"].get<std::string>().find("*** Begin Patch") != std::string::npos);
  const auto& params = tool["parameters"];
  CHECK(params["type"] == "object");
  CHECK(params["required"] == nlohmann::ordered_json::array({"input"}));
  CHECK(params["additionalProperties"] == false);
  CHECK(params["properties"]["input"]["type"] == "string");
  CHECK(params["properties"].size() == 1);
}

TEST_CASE("The Lark grammar accepts exactly the canonical patches the parser accepts") {
  MiniLark lark(ApplyPatchLarkGrammar());
  const std::vector<std::string> valid = {
      "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch\n",
      "*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch",
      "*** Begin Patch\n*** Add File: empty.txt\n*** Delete File: b\n*** End Patch\n",
      "*** Begin Patch\n*** Update File: f\n-a\n+b\n*** End Patch\n",
      "*** Begin Patch\n*** Update File: f\n*** Move to: g\n@@\n a\n-b\n+c\n*** End Patch\n",
      "*** Begin Patch\n*** Update File: f\n@@ class A\n@@  def m():\n-x\n+y\n@@\n-z\n*** End of "
      "File\n*** Delete File: d\n*** End Patch\n",
      "*** Begin Patch\n*** Update File: f\n-a\n@@ ctx\n+b\n*** End Patch\n",
  };
  for (const std::string& p : valid) {
    INFO(p);
    CHECK(ParsePatch(p).ok());
    CHECK(lark.Accepts(p));
  }
  const std::vector<std::string> invalid = {
      "*** Begin Patch\n*** End Patch\n",                                 // no file operation
      "*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch\n",       // unknown header
      "*** Begin Patch\n*** Update File: f\n*** End Patch\n",             // update without changes
      "*** Begin Patch\n*** Update File: f\n@@\nbogus\n*** End Patch\n",  // line without marker
      "*** Begin Patch\n*** Update File: f\n@@\n*** End of File\n*** End Patch\n",
      "*** Begin Patch\n*** Add File: a\n+x\n",                // no end marker
      "*** Add File: a\n+x\n*** End Patch\n",                  // no begin marker
      "*** Begin Patch\n*** Add File: \n+x\n*** End Patch\n",  // no path
  };
  for (const std::string& p : invalid) {
    INFO(p);
    CHECK_FALSE(lark.Accepts(p));
    auto parsed = ParsePatch(p);
    CHECK((!parsed.ok() || parsed->hunks.empty()));
  }
}

TEST_CASE("The Lark grammar agrees with the parser on the upstream scenarios") {
  namespace fs = std::filesystem;
  const fs::path dir = codex::testing::TestData("conformance/apply_patch/scenarios");
  MiniLark lark(ApplyPatchLarkGrammar());
  int accepted = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_directory()) continue;
    std::string patch = ReadFile(entry.path() / "patch.txt");
    auto parsed = ParsePatch(patch);
    // The grammar describes the canonical form: marker lines without padding.
    bool canonical = true;
    std::istringstream lines(patch);
    for (std::string line; std::getline(lines, line);) {
      size_t first = line.find_first_not_of(" \t");
      if (first != std::string::npos && line.compare(first, 3, "***") == 0 &&
          (first != 0 || line.back() == ' ')) {
        canonical = false;
      }
    }
    INFO(entry.path().filename().string());
    if (!parsed.ok() || parsed->hunks.empty()) {
      CHECK_FALSE(lark.Accepts(patch));
    } else if (canonical) {
      CHECK(lark.Accepts(patch));
      ++accepted;
    }
  }
  CHECK(accepted >= 10);
}
