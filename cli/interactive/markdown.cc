#include "cli/interactive/markdown.h"

#include <cctype>

namespace codex::cli {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t'; }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

std::string_view TrimLeft(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  return s.substr(i);
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (IsSpace(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

int IndentOf(std::string_view s) {
  int n = 0;
  for (char c : s) {
    if (c == ' ') {
      ++n;
    } else if (c == '\t') {
      n += 4;
    } else {
      break;
    }
  }
  return n;
}

// "```" / "~~~" (3 or more) at the start of a trimmed line: the fence, else "".
std::string FenceOf(std::string_view trimmed) {
  if (trimmed.size() < 3) return "";
  char c = trimmed[0];
  if (c != '`' && c != '~') return "";
  size_t n = 0;
  while (n < trimmed.size() && trimmed[n] == c) ++n;
  if (n < 3) return "";
  return std::string(n, c);
}

bool IsRule(std::string_view trimmed) {
  if (trimmed.empty()) return false;
  char c = trimmed[0];
  if (c != '-' && c != '*' && c != '_') return false;
  int count = 0;
  for (char ch : trimmed) {
    if (ch == c) {
      ++count;
    } else if (!IsSpace(ch)) {
      return false;
    }
  }
  return count >= 3;
}

// Finds `delim` closing an emphasis opened just before `from`: the closing
// delimiter must follow a non-space character.
size_t FindClosing(std::string_view text, size_t from, std::string_view delim) {
  size_t pos = from;
  while (true) {
    pos = text.find(delim, pos);
    if (pos == std::string_view::npos) return pos;
    if (pos > from && !IsSpace(text[pos - 1]) && text[pos - 1] != '\\') return pos;
    ++pos;
  }
}

}  // namespace

std::string RenderInline(std::string_view text, const Style& style) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size() && std::ispunct(static_cast<unsigned char>(text[i + 1]))) {
      out += text[i + 1];
      i += 2;
      continue;
    }
    if (c == '`') {
      size_t n = 0;
      while (i + n < text.size() && text[i + n] == '`') ++n;
      std::string_view ticks = text.substr(i, n);
      size_t close = text.find(ticks, i + n);
      if (close != std::string_view::npos) {
        std::string_view code = text.substr(i + n, close - i - n);
        out += style.color() ? style.Cyan(code)
                             : std::string(ticks) + std::string(code) + std::string(ticks);
        i = close + n;
        continue;
      }
      out += ticks;
      i += n;
      continue;
    }
    if ((c == '*' || c == '_') && i + 1 < text.size() && text[i + 1] == c) {
      std::string_view delim = text.substr(i, 2);
      bool boundary = c == '*' || i == 0 || !IsAlnum(text[i - 1]);
      if (boundary && i + 2 < text.size() && !IsSpace(text[i + 2])) {
        size_t close = FindClosing(text, i + 2, delim);
        if (close != std::string_view::npos &&
            (c == '*' || close + 2 >= text.size() || !IsAlnum(text[close + 2]))) {
          out += style.Bold(RenderInline(text.substr(i + 2, close - i - 2), style));
          i = close + 2;
          continue;
        }
      }
      out += delim;
      i += 2;
      continue;
    }
    if (c == '*' || c == '_') {
      bool boundary = c == '*' || i == 0 || !IsAlnum(text[i - 1]);
      if (boundary && i + 1 < text.size() && !IsSpace(text[i + 1])) {
        size_t close = FindClosing(text, i + 1, text.substr(i, 1));
        if (close != std::string_view::npos &&
            (c == '*' || close + 1 >= text.size() || !IsAlnum(text[close + 1]))) {
          out += style.Italic(RenderInline(text.substr(i + 1, close - i - 1), style));
          i = close + 1;
          continue;
        }
      }
      out += c;
      ++i;
      continue;
    }
    if (c == '[') {
      size_t close = text.find("](", i + 1);
      size_t end = close == std::string_view::npos ? close : text.find(')', close + 2);
      if (end != std::string_view::npos &&
          text.substr(i + 1, close - i - 1).find('\n') == std::string_view::npos) {
        std::string_view label = text.substr(i + 1, close - i - 1);
        std::string_view url = text.substr(close + 2, end - close - 2);
        std::string rendered = RenderInline(label, style);
        if (url == label) {
          out += style.Underline(rendered);
        } else {
          out += style.Underline(rendered) + " (" + style.Blue(url) + ")";
        }
        i = end + 1;
        continue;
      }
    }
    out += c;
    ++i;
  }
  return out;
}

std::string MarkdownRenderer::RenderLine(std::string_view raw) {
  std::string_view line = TrimRight(raw);
  std::string_view trimmed = TrimLeft(line);
  std::string fence = FenceOf(trimmed);
  if (in_code_) {
    if (!fence.empty() && fence[0] == fence_[0] && fence.size() >= fence_.size() &&
        TrimLeft(trimmed.substr(fence.size())).empty()) {
      in_code_ = false;
      return "";
    }
    return "    " + style_.Yellow(line) + "\n";
  }
  if (!fence.empty()) {
    in_code_ = true;
    fence_ = fence;
    std::string_view lang = TrimLeft(trimmed.substr(fence.size()));
    return lang.empty() ? "" : "    " + style_.Dim(lang) + "\n";
  }
  if (trimmed.empty()) return "\n";

  // Headings.
  size_t hashes = 0;
  while (hashes < trimmed.size() && trimmed[hashes] == '#') ++hashes;
  if (hashes >= 1 && hashes <= 6 && (hashes == trimmed.size() || trimmed[hashes] == ' ')) {
    std::string_view title = TrimLeft(trimmed.substr(hashes));
    while (!title.empty() && title.back() == '#') title.remove_suffix(1);
    title = TrimRight(title);
    std::string text = RenderInline(title, style_);
    if (!style_.color()) {
      return WrapLine(std::string(hashes, '#') + " " + text, width_, "", "");
    }
    std::string styled = hashes == 1   ? style_.Bold(style_.Underline(text))
                         : hashes == 2 ? style_.Bold(text)
                                       : style_.Bold(style_.Italic(text));
    return WrapLine(styled, width_, "", "");
  }

  if (IsRule(trimmed)) {
    int w = width_ > 0 ? std::min(width_, 40) : 40;
    std::string rule;
    for (int k = 0; k < w; ++k) rule += "─";
    return style_.Dim(rule) + "\n";
  }

  int indent = IndentOf(line);
  std::string pad(static_cast<size_t>(indent), ' ');

  // Block quote.
  if (trimmed[0] == '>') {
    std::string_view body = TrimLeft(trimmed.substr(1));
    std::string bar = style_.Dim("│ ");
    return WrapLine(style_.Italic(RenderInline(body, style_)), width_, pad + bar, pad + bar);
  }

  // Bullet list item.
  if ((trimmed[0] == '-' || trimmed[0] == '*' || trimmed[0] == '+') && trimmed.size() > 1 &&
      trimmed[1] == ' ') {
    std::string_view body = TrimLeft(trimmed.substr(2));
    std::string bullet = indent >= 2 ? "◦ " : "• ";
    // Task list items: "- [ ] x" / "- [x] x".
    if (body.size() >= 3 && body[0] == '[' && body[2] == ']' &&
        (body[1] == ' ' || body[1] == 'x' || body[1] == 'X')) {
      bullet = body[1] == ' ' ? "☐ " : "☑ ";
      body = TrimLeft(body.substr(3));
    }
    return WrapLine(RenderInline(body, style_), width_, pad + style_.Dim(bullet),
                    pad + std::string(2, ' '));
  }

  // Numbered list item.
  size_t digits = 0;
  while (digits < trimmed.size() && std::isdigit(static_cast<unsigned char>(trimmed[digits]))) {
    ++digits;
  }
  if (digits > 0 && digits < 10 && digits + 1 < trimmed.size() &&
      (trimmed[digits] == '.' || trimmed[digits] == ')') && trimmed[digits + 1] == ' ') {
    std::string marker = std::string(trimmed.substr(0, digits + 1)) + " ";
    std::string_view body = TrimLeft(trimmed.substr(digits + 2));
    return WrapLine(RenderInline(body, style_), width_, pad + style_.Dim(marker),
                    pad + std::string(marker.size(), ' '));
  }

  // Table rows and other lines with a leading "|" are kept as typed.
  if (trimmed[0] == '|') return std::string(line) + "\n";

  return WrapLine(RenderInline(trimmed, style_), width_, pad, pad);
}

std::string MarkdownRenderer::Feed(std::string_view delta) {
  partial_.append(delta);
  std::string out;
  size_t start = 0;
  size_t nl;
  while ((nl = partial_.find('\n', start)) != std::string::npos) {
    out += RenderLine(std::string_view(partial_).substr(start, nl - start));
    start = nl + 1;
  }
  partial_.erase(0, start);
  return out;
}

std::string MarkdownRenderer::Finish() {
  std::string out;
  if (!partial_.empty()) out = RenderLine(partial_);
  partial_.clear();
  in_code_ = false;
  fence_.clear();
  return out;
}

std::string RenderMarkdown(std::string_view text, const Style& style, int width) {
  MarkdownRenderer renderer(style, width);
  std::string out = renderer.Feed(text);
  out += renderer.Finish();
  return out;
}

}  // namespace codex::cli
