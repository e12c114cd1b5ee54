#include "cli/viewer/markdown_html.h"

#include <catch2/catch.hpp>

using codex::cli::viewer::HtmlEscape;
using codex::cli::viewer::MarkdownToSafeHtml;

TEST_CASE("Markdown renders; raw HTML in a message stays text") {
  const std::string html = MarkdownToSafeHtml("# Title\n\n**bold** <script>alert(1)</script>\n");
  CHECK(html.find("<h1>Title</h1>") != std::string::npos);
  CHECK(html.find("<strong>bold</strong>") != std::string::npos);
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  const std::string block = MarkdownToSafeHtml("<img src=x onerror=alert(1)>\n");
  CHECK(block.find("<img") == std::string::npos);
}

TEST_CASE("Only http(s), mailto and relative addresses survive in links and images") {
  CHECK(MarkdownToSafeHtml("[a](https://example.org/x)").find("href=\"https://example.org/x\"") !=
        std::string::npos);
  CHECK(MarkdownToSafeHtml("[a](docs/x.md)").find("href=\"docs/x.md\"") != std::string::npos);
  for (const char* hostile :
       {"[a](javascript:alert(1))", "[a](JavaScript:alert(1))", "[a](&#106;avascript:alert(1))",
        "[a](data:text/html,<script>alert(1)</script>)", "![i](vbscript:x)"}) {
    const std::string html = MarkdownToSafeHtml(hostile);
    INFO(hostile << " -> " << html);
    CHECK(html.find("script:") == std::string::npos);
    CHECK(html.find("data:") == std::string::npos);
    CHECK((html.find("href=\"#\"") != std::string::npos ||
           html.find("src=\"#\"") != std::string::npos));
  }
}

TEST_CASE("HtmlEscape covers the characters that end text or an attribute") {
  CHECK(HtmlEscape("<a href=\"x\" title='y'>&</a>") ==
        "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
}
