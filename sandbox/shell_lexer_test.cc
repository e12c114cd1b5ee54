#include "sandbox/shell_lexer.h"

#include <catch2/catch.hpp>

#include "base/shell.h"

using codex::StatusCode;
using namespace codex::sandbox;
using codex::ShellJoin;
using codex::ShellQuote;
using Words = std::vector<std::string>;

namespace {

// The words of a script that must be a single simple command.
Words WordsOf(const std::string& script) {
  auto list = ParseCommandList(script);
  if (!list.ok()) FAIL(list.status().message());
  REQUIRE(list->commands.size() == 1);
  return list->commands[0];
}

std::string RefusalOf(const std::string& script) {
  auto list = ParseCommandList(script);
  REQUIRE_FALSE(list.ok());
  CHECK(list.status().code() == StatusCode::kInvalidArgument);
  return list.status().message();
}

}  // namespace

TEST_CASE("Blanks separate words") {
  CHECK(WordsOf("ls") == Words{"ls"});
  CHECK(WordsOf("  ls \t -la   src  ") == Words{"ls", "-la", "src"});
}

TEST_CASE("Single quotes keep everything literally") {
  CHECK(WordsOf("echo 'a b' 'x\"y' '$HOME' '`id`' '*' '>'") ==
        Words{"echo", "a b", "x\"y", "$HOME", "`id`", "*", ">"});
  CHECK(WordsOf("echo ''") == Words{"echo", ""});
  CHECK(WordsOf("echo 'multi\nline'") == Words{"echo", "multi\nline"});
  CHECK(WordsOf("echo a'b'c") == Words{"echo", "abc"});
}

TEST_CASE("Double quotes allow only \\ escapes of $ ` \" \\ and newline") {
  CHECK(WordsOf(R"(echo "a b" "it's" "q\"q" "back\\slash" "d\$x" "keep\n")") ==
        Words{"echo", "a b", "it's", "q\"q", "back\\slash", "d$x", "keep\\n"});
  CHECK(WordsOf("echo \"line\\\ncont\"") == Words{"echo", "linecont"});
  CHECK(WordsOf("echo \"\"") == Words{"echo", ""});
  CHECK(WordsOf("echo \"*?[ ~ > | ; &\"") == Words{"echo", "*?[ ~ > | ; &"});
}

TEST_CASE("Backslash escapes outside quotes") {
  CHECK(WordsOf(R"(echo a\ b \$HOME \* \> \' \")") ==
        Words{"echo", "a b", "$HOME", "*", ">", "'", "\""});
  CHECK(WordsOf("echo a\\\nb") == Words{"echo", "ab"});
  CHECK(WordsOf("ls \\\n -la") == Words{"ls", "-la"});
}

TEST_CASE("Comments start only at a word boundary") {
  CHECK(WordsOf("echo a#b # a comment; rm -rf /") == Words{"echo", "a#b"});
  CHECK(WordsOf("echo '#x'") == Words{"echo", "#x"});
}

TEST_CASE("Commands are split at && || ; | and newlines") {
  auto list = ParseCommandList("git status && git diff | head -5 || echo no; ls\npwd");
  REQUIRE(list.ok());
  CHECK(list->commands ==
        std::vector<Words>{
            {"git", "status"}, {"git", "diff"}, {"head", "-5"}, {"echo", "no"}, {"ls"}, {"pwd"}});
  CHECK(list->operators == std::vector<ShellOperator>{ShellOperator::kAnd, ShellOperator::kPipe,
                                                      ShellOperator::kOr, ShellOperator::kSequence,
                                                      ShellOperator::kSequence});
  auto tight = ParseCommandList("a&&b||c|d;e");
  REQUIRE(tight.ok());
  CHECK(tight->commands.size() == 5);
}

TEST_CASE("Trailing separators and blank lines are fine, dangling operators are not") {
  CHECK(ParseCommandList("ls;")->commands == std::vector<Words>{{"ls"}});
  CHECK(ParseCommandList("\n\nls\n\n")->commands == std::vector<Words>{{"ls"}});
  CHECK(ParseCommandList("ls &&\n  pwd")->commands == std::vector<Words>{{"ls"}, {"pwd"}});
  RefusalOf("");
  RefusalOf("   ");
  RefusalOf("# only a comment");
  CHECK(RefusalOf("ls &&") == "unsupported shell syntax: the script ends with '&&'");
  CHECK(RefusalOf("| ls") == "unsupported shell syntax: '|' without a command before it");
  RefusalOf("ls ; ; pwd");
  RefusalOf("ls || && pwd");
  RefusalOf(";");
}

TEST_CASE("The lexer refuses what it does not understand") {
  CHECK(RefusalOf("echo hi > out") == "unsupported shell syntax: a redirection '>' at offset 8");
  RefusalOf("cat < in");
  RefusalOf("cat <<EOF\nx\nEOF");
  RefusalOf("ls 2>/dev/null");
  RefusalOf("ls &> log");
  RefusalOf("ls >| f");
  RefusalOf("sleep 1 &");
  RefusalOf("ls |& cat");
  RefusalOf("case x in x) ;; esac");
  RefusalOf("(ls)");
  RefusalOf("{ ls; }");
  RefusalOf("echo $HOME");
  RefusalOf("echo ${HOME}");
  RefusalOf("echo $(id)");
  RefusalOf("echo $((1+2))");
  RefusalOf("echo $'a'");
  RefusalOf("echo \"$HOME\"");
  RefusalOf("echo \"$(id)\"");
  RefusalOf("echo `id`");
  RefusalOf("echo \"`id`\"");
  RefusalOf("cat <(ls)");
  RefusalOf("ls *.txt");
  RefusalOf("ls file?");
  RefusalOf("ls [ab]");
  RefusalOf("echo {a,b}");
  RefusalOf("cat ~/.bashrc");
  RefusalOf("echo 'unterminated");
  RefusalOf("echo \"unterminated");
  RefusalOf("echo trailing\\");
  RefusalOf(std::string("echo a\0b", 8));
  RefusalOf(std::string("echo 'a\0b'", 10));
  RefusalOf("echo a\rb");
  RefusalOf("echo \x1b[31m");
}

TEST_CASE("Characters that are only special elsewhere stay literal") {
  CHECK(WordsOf("echo a~b x=y ! % ^ , : @ + -") ==
        Words{"echo", "a~b", "x=y", "!", "%", "^", ",", ":", "@", "+", "-"});
  CHECK(WordsOf("git log --format=%H%n") == Words{"git", "log", "--format=%H%n"});
}

TEST_CASE("ShellQuote round-trips through the lexer") {
  CHECK(ShellQuote("plain-word_1.txt") == "plain-word_1.txt");
  CHECK(ShellQuote("") == "''");
  CHECK(ShellQuote("a b") == "'a b'");
  CHECK(ShellQuote("it's") == "'it'\\''s'");
  CHECK(ShellQuote("X=1") == "'X=1'");
  const Words words = {"echo", "",   "a b",  "it's", "$HOME", "`x`", "*",  "~",
                       "\"",   "\\", "a\nb", "{}",   "x=y",   ";",   "&&", "#c"};
  CHECK(ShellJoin({"ls", "-la", "my dir"}) == "ls -la 'my dir'");
  CHECK(WordsOf(ShellJoin(words)) == words);
}

TEST_CASE("ReadShellWord reads one word by the lexer's rules and stops before what follows") {
  auto read = [](std::string_view s,
                 size_t start) -> std::pair<std::optional<std::string>, size_t> {
    size_t pos = start;
    std::optional<std::string> w = ReadShellWord(s, &pos);
    return {w, pos};
  };
  CHECK(read("cd src && x", 3) == std::pair{std::optional<std::string>("src"), size_t{6}});
  CHECK(read("cd 'sub dir'&&x", 3) == std::pair{std::optional<std::string>("sub dir"), size_t{12}});
  CHECK(read("\"a\\\"b\" c", 0) == std::pair{std::optional<std::string>("a\"b"), size_t{6}});
  CHECK(read("my\\ dir rest", 0) == std::pair{std::optional<std::string>("my dir"), size_t{7}});
  CHECK(read("a'b'\"c\";", 0) == std::pair{std::optional<std::string>("abc"), size_t{7}});
  CHECK(read("'EOF'\r\nbody", 0) == std::pair{std::optional<std::string>("EOF"), size_t{5}});
  CHECK(read("''", 0) == std::pair{std::optional<std::string>(""), size_t{2}});
  // No word here, or one the lexer refuses: nullopt and the position is kept.
  for (std::string_view s : {"", " x", "&& x", "|x", "<x", "#c", "$HOME", "a$b", "\"$x\"", "`id`",
                             "*.c", "~/x", "{a,b}", "'open", "\"open",
                             "a\x01"
                             "b"}) {
    INFO(s);
    CHECK(read(s, 0) == std::pair{std::optional<std::string>(), size_t{0}});
  }
  CHECK(read("x", 5).first == std::nullopt);  // past the end
}
