// Markdown to safe HTML for the session viewer (cli/viewer/): md4c-html with
// raw HTML turned off (a `<script>` in a message is text, shown as written),
// GitHub tables, strikethrough and task lists, and every link or image
// address that is not http(s), mailto or relative replaced by "#"
// (`javascript:` never reaches an href). The page's Content-Security-Policy
// is the second layer. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace codex::cli::viewer {

std::string MarkdownToSafeHtml(std::string_view markdown);

// `text` with & < > " ' replaced by entities: safe in element content and in
// quoted attributes.
std::string HtmlEscape(std::string_view text);

}  // namespace codex::cli::viewer
