#include "cli/viewer/markdown_html.h"

#include <md4c-html.h>
#include <md4c.h>

#include <cctype>

#include "base/strings.h"

namespace codex::cli::viewer {

namespace {

void Append(const MD_CHAR* text, MD_SIZE size, void* userdata) {
  static_cast<std::string*>(userdata)->append(text, size);
}

// Addresses a click or an image load may follow. md4c-html has already
// percent-escaped spaces and control characters and decoded entities, so
// the scheme is what a browser would read.
bool SafeAddress(std::string_view url) {
  const size_t colon = url.find(':');
  const size_t stop = url.find_first_of("/?#");
  if (colon == std::string_view::npos || (stop != std::string_view::npos && stop < colon)) {
    return true;  // relative: no scheme
  }
  std::string scheme;
  for (char c : url.substr(0, colon)) {
    scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return scheme == "http" || scheme == "https" || scheme == "mailto";
}

// Replaces the value of every href="..." and src="..." that is not SafeAddress.
// Text content never holds a literal `="`: md4c-html escapes quotes there.
std::string FilterAddresses(std::string html) {
  for (std::string_view attr : {std::string_view("href=\""), std::string_view("src=\"")}) {
    size_t pos = 0;
    while ((pos = html.find(attr, pos)) != std::string::npos) {
      const size_t start = pos + attr.size();
      const size_t end = html.find('"', start);
      if (end == std::string::npos) break;
      if (!SafeAddress(std::string_view(html).substr(start, end - start))) {
        html.replace(start, end - start, "#");
      }
      pos = start;
    }
  }
  return html;
}

}  // namespace

std::string MarkdownToSafeHtml(std::string_view markdown) {
  std::string html;
  const unsigned parser_flags = MD_DIALECT_GITHUB | MD_FLAG_NOHTML;
  if (md_html(markdown.data(), static_cast<MD_SIZE>(markdown.size()), Append, &html, parser_flags,
              0) != 0) {
    return "<pre>" + HtmlEscape(markdown) + "</pre>";
  }
  return FilterAddresses(std::move(html));
}

std::string HtmlEscape(std::string_view text) { return EscapeMarkup(text, /*quotes=*/true); }

}  // namespace codex::cli::viewer
