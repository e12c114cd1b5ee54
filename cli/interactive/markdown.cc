#include "cli/interactive/markdown.h"

#include <md4c.h>

#include <algorithm>
#include <optional>

#include "base/strings.h"
#include "cli/interactive/code_highlight.h"

namespace codex::cli {

namespace {

// One container a line of output sits in: a block quote or a list item.
// `first` is drawn on the container's first line (the bullet), `rest` on
// the others.
struct Frame {
  std::string first;
  std::string rest;
  bool first_used = false;
};

struct ListState {
  bool ordered = false;
  unsigned next = 1;
};

struct Cell {
  std::string text;
  MD_ALIGN align = MD_ALIGN_DEFAULT;
};

std::string AttributeText(const MD_ATTRIBUTE& a) { return std::string(a.text, a.size); }

// A link target that names a local file: "/abs/path", "file:///abs/path" or a
// relative path, with an optional ":LINE[:COL]" or "#LLINE". Sets `path` and
// `line` (0 when none); false for URLs (a scheme), mailto: and #anchors.
bool LocalFileTarget(std::string_view href, std::string& path, int& line) {
  if (href.rfind("file://", 0) == 0) {
    href.remove_prefix(7);
  } else if (href.empty() || href.front() == '#' || href.find("://") != std::string_view::npos ||
             href.rfind("mailto:", 0) == 0) {
    return false;
  }
  line = 0;
  auto digits = [](std::string_view d) {
    return !d.empty() && d.size() < 9 &&
           std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (size_t h = href.rfind("#L"); h != std::string_view::npos && digits(href.substr(h + 2))) {
    line = std::stoi(std::string(href.substr(h + 2)));
    href = href.substr(0, h);
  } else {
    for (int part = 0; part < 2; ++part) {  // ":LINE" or ":LINE:COL": the first number wins
      const size_t c = href.rfind(':');
      if (c == std::string_view::npos || !digits(href.substr(c + 1))) break;
      line = std::stoi(std::string(href.substr(c + 1)));
      href = href.substr(0, c);
    }
  }
  if (href.empty() || href.find(':') != std::string_view::npos) return false;
  path = std::string(href);
  return true;
}

// The text of an entity ("&amp;", "&#233;", "&#x1F600;"); unknown ones stay as written.
std::string DecodeEntity(std::string_view e) {
  static const std::pair<std::string_view, std::string_view> kNamed[] = {
      {"&amp;", "&"},  {"&lt;", "<"},   {"&gt;", ">"},    {"&quot;", "\""}, {"&apos;", "'"},
      {"&nbsp;", " "}, {"&copy;", "©"}, {"&mdash;", "—"}, {"&ndash;", "–"}, {"&hellip;", "…"},
      {"&rarr;", "→"}, {"&larr;", "←"}, {"&times;", "×"},
  };
  for (const auto& [name, text] : kNamed) {
    if (e == name) return std::string(text);
  }
  if (e.size() > 3 && e[1] == '#') {
    bool hex = e[2] == 'x' || e[2] == 'X';
    std::string digits(e.substr(hex ? 3 : 2, e.size() - (hex ? 4 : 3)));
    char32_t c = 0;
    try {
      c = static_cast<char32_t>(std::stoul(digits, nullptr, hex ? 16 : 10));
    } catch (...) {
      return std::string(e);
    }
    if (c == 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    std::string out;
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
    return out;
  }
  return std::string(e);
}

// Pads styled `text` to `width` columns as `align` says.
std::string Pad(const std::string& text, int width, MD_ALIGN align) {
  int room = std::max(0, width - DisplayWidth(text));
  if (align == MD_ALIGN_RIGHT) return std::string(static_cast<size_t>(room), ' ') + text;
  if (align == MD_ALIGN_CENTER) {
    int left = room / 2;
    return std::string(static_cast<size_t>(left), ' ') + text +
           std::string(static_cast<size_t>(room - left), ' ');
  }
  return text + std::string(static_cast<size_t>(room), ' ');
}

// Appends WrapLine's output to `out`, a line an element.
void AppendLines(const std::string& wrapped, std::vector<std::string>* out) {
  for (const std::string_view line : SplitLines(wrapped)) out->emplace_back(line);
}

// The md4c callbacks' state: builds the output lines block by block.
class Builder {
 public:
  Builder(const Style& style, int width) : style_(style), width_(width) {}

  std::vector<std::string> lines;
  long open_table = -1;

  int EnterBlock(MD_BLOCKTYPE type, void* detail) {
    // The text of a tight list item comes without a paragraph: it ends
    // where a nested block starts.
    if (type != MD_BLOCK_TH && type != MD_BLOCK_TD) FlushInline();
    switch (type) {
      case MD_BLOCK_DOC:
        break;
      case MD_BLOCK_QUOTE:
        StartBlock();
        frames_.push_back({style_.Dim("│ "), style_.Dim("│ ")});
        break;
      case MD_BLOCK_UL:
      case MD_BLOCK_OL: {
        if (item_depth_ == 0) StartBlock();
        ListState list;
        if (type == MD_BLOCK_OL) {
          list.ordered = true;
          list.next = static_cast<MD_BLOCK_OL_DETAIL*>(detail)->start;
        }
        lists_.push_back(list);
        break;
      }
      case MD_BLOCK_LI: {
        auto* li = static_cast<MD_BLOCK_LI_DETAIL*>(detail);
        ListState& list = lists_.back();
        std::string marker;
        if (li->is_task) {
          marker = li->task_mark == ' ' ? "☐ " : style_.Green("☑") + " ";
        } else if (list.ordered) {
          marker = std::to_string(list.next++) + ". ";
        } else {
          static const char* kBullets[] = {"• ", "◦ ", "▪ "};
          size_t depth = 0;  // among the bullet lists it sits in
          for (const auto& l : lists_) depth += l.ordered ? 0 : 1;
          marker = kBullets[std::min<size_t>(depth - 1, 2)];
        }
        int w = DisplayWidth(marker);
        frames_.push_back({marker, std::string(static_cast<size_t>(w), ' ')});
        ++item_depth_;
        break;
      }
      case MD_BLOCK_HR:
        StartBlock();
        break;
      case MD_BLOCK_H:
        StartBlock();
        heading_ = static_cast<int>(static_cast<MD_BLOCK_H_DETAIL*>(detail)->level);
        inline_.clear();
        break;
      case MD_BLOCK_CODE: {
        StartBlock();
        auto* code = static_cast<MD_BLOCK_CODE_DETAIL*>(detail);
        code_lang_ = AttributeText(code->lang);
        code_.clear();
        in_code_block_ = true;
        break;
      }
      case MD_BLOCK_HTML:  // not produced: MD_FLAG_NOHTML
        break;
      case MD_BLOCK_P:
        if (item_depth_ == 0) StartBlock();  // in a list item it follows the bullet
        inline_.clear();
        break;
      case MD_BLOCK_TABLE:
        StartBlock();
        table_start_ = static_cast<long>(lines.size());
        rows_.clear();
        header_rows_ = 0;
        break;
      case MD_BLOCK_THEAD:
        in_head_ = true;
        break;
      case MD_BLOCK_TBODY:
        break;
      case MD_BLOCK_TR:
        rows_.emplace_back();
        break;
      case MD_BLOCK_TH:
      case MD_BLOCK_TD:
        inline_.clear();
        cell_align_ = static_cast<MD_BLOCK_TD_DETAIL*>(detail)->align;
        break;
    }
    return 0;
  }

  int LeaveBlock(MD_BLOCKTYPE type) {
    switch (type) {
      case MD_BLOCK_DOC:
        break;
      case MD_BLOCK_QUOTE:
        frames_.pop_back();
        EndBlock();
        break;
      case MD_BLOCK_UL:
      case MD_BLOCK_OL:
        lists_.pop_back();
        if (item_depth_ == 0) EndBlock();
        break;
      case MD_BLOCK_LI:
        FlushInline();
        if (!frames_.back().first_used) Emit("");  // an empty item
        frames_.pop_back();
        --item_depth_;
        break;
      case MD_BLOCK_HR: {
        int room = width_ > 0 ? std::max(3, width_ - PrefixWidth()) : 40;
        std::string rule;
        for (int i = 0; i < std::min(40, room); ++i) rule += "─";
        Emit(style_.Dim(rule));
        EndBlock();
        break;
      }
      case MD_BLOCK_H: {
        std::string text = inline_;
        if (!style_.color()) text = std::string(static_cast<size_t>(heading_), '#') + " " + text;
        heading_ = 0;
        inline_.clear();
        EmitWrapped(text);
        EndBlock();
        break;
      }
      case MD_BLOCK_CODE: {
        in_code_block_ = false;
        if (code_.empty()) {  // nothing yet (a fence just opened) or an empty block
          EndBlock();
          break;
        }
        if (!code_lang_.empty()) Emit("    " + style_.Dim(code_lang_));
        if (!code_.empty() && code_.back() == '\n') code_.pop_back();
        std::vector<std::string> plain;
        size_t pos = 0;
        while (pos <= code_.size()) {
          size_t nl = code_.find('\n', pos);
          if (nl == std::string::npos) nl = code_.size();
          std::string line;
          for (char c : std::string_view(code_).substr(pos, nl - pos)) {
            if (c == '\t') {
              line += "    ";
            } else if (c != '\r') {
              line += c;
            }
          }
          plain.push_back(std::move(line));
          pos = nl + 1;
        }
        std::string joined;
        for (size_t k = 0; k < plain.size(); ++k) joined += (k ? "\n" : "") + plain[k];
        // Colours by the fence's language (code_highlight.h); a language it
        // does not know keeps the one colour of code.
        std::optional<std::vector<std::string>> coloured;
        if (style_.color()) coloured = HighlightCode(joined, code_lang_);
        if (coloured && coloured->size() != plain.size()) coloured.reset();
        for (size_t k = 0; k < plain.size(); ++k) {
          const std::string& line = plain[k];
          std::string shown = coloured ? (*coloured)[k] : line.empty() ? line : style_.Yellow(line);
          EmitCodeLine(shown, line);
        }
        EndBlock();
        break;
      }
      case MD_BLOCK_HTML:
        break;
      case MD_BLOCK_P:
        EmitWrapped(inline_);
        inline_.clear();
        if (item_depth_ == 0) EndBlock();
        break;
      case MD_BLOCK_TABLE:
        EmitTable();
        EndBlock();
        open_table = item_depth_ == 0 && frames_.empty() ? table_start_ : -1;
        return 0;
      case MD_BLOCK_THEAD:
        in_head_ = false;
        break;
      case MD_BLOCK_TBODY:
        break;
      case MD_BLOCK_TR:
        if (in_head_) ++header_rows_;
        break;
      case MD_BLOCK_TH:
      case MD_BLOCK_TD:
        rows_.back().push_back({inline_, cell_align_});
        inline_.clear();
        break;
    }
    if (type != MD_BLOCK_DOC) open_table = -1;
    return 0;
  }

  int EnterSpan(MD_SPANTYPE type, void* detail) {
    spans_.push_back(type);
    if (type == MD_SPAN_A) {
      auto* a = static_cast<MD_SPAN_A_DETAIL*>(detail);
      links_.push_back({AttributeText(a->href), inline_.size()});
    }
    if (type == MD_SPAN_CODE && !style_.color()) inline_ += '`';
    if (type == MD_SPAN_DEL && !style_.color()) inline_ += "~~";
    return 0;
  }

  int LeaveSpan(MD_SPANTYPE type) {
    if (!spans_.empty()) spans_.pop_back();
    if (type == MD_SPAN_CODE && !style_.color()) inline_ += '`';
    if (type == MD_SPAN_DEL && !style_.color()) inline_ += "~~";
    if (type == MD_SPAN_A && !links_.empty()) {
      auto [href, start] = links_.back();
      links_.pop_back();
      std::string shown = StripAnsi(std::string_view(inline_).substr(start));
      std::string bare = href;
      if (bare.rfind("mailto:", 0) == 0) bare = bare.substr(7);
      if (!href.empty() && shown != href && shown != bare && "http://" + shown != href &&
          "https://" + shown != href) {
        inline_ += " " + style_.Dim("(" + href + ")");
      }
      std::string path;
      int line = 0;
      if (style_.color() && style_.file_links() && LocalFileTarget(href, path, line)) {
        // file_opener: the text shown (as without it) becomes a hyperlink
        // to the file for the editor.
        std::string text = inline_.substr(start);
        inline_.resize(start);
        inline_ += style_.FileLink(path, line, text);
      }
    }
    return 0;
  }

  int Text(MD_TEXTTYPE type, std::string_view text) {
    if (in_code_block_) {
      code_.append(text);
      return 0;
    }
    switch (type) {
      case MD_TEXT_NULLCHAR:
        AddInline("\xEF\xBF\xBD");
        break;
      case MD_TEXT_BR:
      case MD_TEXT_SOFTBR:
        // A source line break stays one: streamed lines never re-flow.
        inline_ += '\n';
        break;
      case MD_TEXT_ENTITY:
        AddInline(DecodeEntity(text));
        break;
      default:
        AddCitations(text);
        break;
    }
    return 0;
  }

 private:
  // Codex's file citations, "【F:path†L12】" or "【F:path†L12-L20】", become
  // "path:12" linked with the file_opener (kept as written without one).
  void AddCitations(std::string_view text) {
    static constexpr std::string_view kOpen = "\u3010F:";   // 【F:
    static constexpr std::string_view kDagger = "\u2020L";  // †L
    static constexpr std::string_view kClose = "\u3011";    // 】
    while (style_.file_links()) {
      const size_t open = text.find(kOpen);
      if (open == std::string_view::npos) break;
      const size_t dagger = text.find(kDagger, open);
      const size_t close = text.find(kClose, open);
      if (dagger == std::string_view::npos || close == std::string_view::npos || dagger > close) {
        break;
      }
      const std::string path(text.substr(open + kOpen.size(), dagger - open - kOpen.size()));
      std::string_view range =
          text.substr(dagger + kDagger.size(), close - dagger - kDagger.size());
      size_t n = 0;
      while (n < range.size() && n < 8 && range[n] >= '0' && range[n] <= '9') ++n;
      if (path.empty() || n == 0 || path.find('\n') != std::string::npos) break;
      const int line = std::stoi(std::string(range.substr(0, n)));
      AddInline(text.substr(0, open));
      const size_t at = inline_.size();
      AddInline(path + ":" + std::to_string(line));
      std::string label = inline_.substr(at);
      inline_.resize(at);
      inline_ += style_.FileLink(path, line, style_.Underline(label));
      text.remove_prefix(close + kClose.size());
    }
    AddInline(text);
  }

  void AddInline(std::string_view raw) {
    std::string s;
    for (char c : raw) s += c == '\t' ? ' ' : c;
    bool code = false;
    bool strong = false;
    bool em = false;
    bool del = false;
    bool link = false;
    for (MD_SPANTYPE t : spans_) {
      code |= t == MD_SPAN_CODE;
      strong |= t == MD_SPAN_STRONG;
      em |= t == MD_SPAN_EM;
      del |= t == MD_SPAN_DEL;
      link |= t == MD_SPAN_A;
    }
    if (code) s = style_.Cyan(s);
    if (em) s = style_.Italic(s);
    if (del) s = style_.Dim(s);
    if (link) s = style_.Underline(s);
    if (strong || heading_ > 0) s = style_.Bold(s);
    inline_ += s;
  }

  void FlushInline() {
    if (inline_.empty() || heading_ > 0) return;
    EmitWrapped(inline_);
    inline_.clear();
  }

  int PrefixWidth() const {
    int w = 0;
    for (const auto& f : frames_) w += DisplayWidth(f.first_used ? f.rest : f.first);
    return w;
  }

  // The prefix of the next line; the first one of a container uses its marker.
  std::string Prefix(bool consume) {
    std::string p;
    for (auto& f : frames_) {
      p += f.first_used ? f.rest : f.first;
      if (consume) f.first_used = true;
    }
    return p;
  }

  void Emit(const std::string& content) {
    std::string p = Prefix(true);
    std::string line = p + content;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(std::move(line));
  }

  // One line of a code block, indented; a line wider than the block wraps
  // inside it (cut between grapheme clusters, never back at column 0), its
  // continuation rows indented like the line itself. Colours open at a cut
  // are closed at the row's end and opened again on the next row.
  void EmitCodeLine(const std::string& shown, const std::string& plain) {
    const size_t lead = std::min(plain.find_first_not_of(' '), plain.size());
    const int room = width_ - PrefixWidth() - 4;
    if (width_ <= 0 || room < 8 || DisplayWidth(shown) <= room) {
      Emit("    " + shown);
      return;
    }
    const int indent = std::min(static_cast<int>(lead), room / 2);
    std::string row;
    std::string active;  // the SGR sequence in effect, "" after a reset
    int col = 0;
    bool first = true;
    size_t i = 0;
    while (i < shown.size()) {
      if (shown[i] == '\x1b') {
        size_t end = SkipEscape(shown, i);
        std::string esc = shown.substr(i, end - i);
        if (!esc.empty() && esc.back() == 'm') {
          active = esc == "\x1b[m" || esc == "\x1b[0m" || esc == "\x1b[39m" ? "" : esc;
        }
        row += esc;
        i = end;
        continue;
      }
      size_t probe = i;
      const int w = CodePointWidth(DecodeUtf8(shown, &probe));
      const size_t next = std::max(probe, NextGrapheme(shown, i));
      if (col + w > room && col > (first ? 0 : indent)) {
        Emit("    " + row + (active.empty() ? "" : "\x1b[m"));
        first = false;
        row = std::string(static_cast<size_t>(indent), ' ') + active;
        col = indent;
      }
      row.append(shown, i, next - i);
      col += w;
      i = next;
    }
    Emit("    " + row);
  }

  // Wraps inline text (its "\n" are line breaks) under the current prefix.
  void EmitWrapped(const std::string& text) {
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) nl = text.size();
      std::string first = Prefix(true);
      std::string rest = Prefix(false);
      std::string wrapped =
          WrapLine(std::string_view(text).substr(pos, nl - pos), width_, first, rest);
      std::vector<std::string> out;
      AppendLines(wrapped, &out);
      for (auto& l : out) {
        while (!l.empty() && l.back() == ' ') l.pop_back();
        lines.push_back(std::move(l));
      }
      pos = nl + 1;
    }
  }

  // A blank line before a block that follows another one (list items do
  // not get one, so a list reads the same tight or loose).
  void StartBlock() {
    if (!need_blank_) return;
    need_blank_ = false;
    // The blank line keeps the quote bars it sits in.
    std::string p;
    for (const auto& f : frames_) p += f.rest;
    while (!p.empty() && p.back() == ' ') p.pop_back();
    lines.push_back(StripAnsi(p).find_first_not_of(' ') == std::string::npos ? "" : p);
  }
  void EndBlock() { need_blank_ = true; }

  void EmitTable() {
    size_t columns = 0;
    for (const auto& row : rows_) columns = std::max(columns, row.size());
    if (columns == 0) return;
    std::vector<int> widths(columns, 1);
    for (const auto& row : rows_) {
      for (size_t c = 0; c < row.size(); ++c) {
        widths[c] = std::max(widths[c], DisplayWidth(row[c].text));
      }
    }
    const int separators = 3 * static_cast<int>(columns - 1);
    if (width_ > 0) {
      int room = width_ - PrefixWidth() - separators;
      int total = 0;
      for (int w : widths) total += w;
      while (total > room) {
        auto widest = std::max_element(widths.begin(), widths.end());
        if (*widest <= 3) break;
        --*widest;
        --total;
      }
    }
    const std::string bar = style_.Dim(" │ ");
    auto emit_row = [&](const std::vector<Cell>& row, bool header) {
      std::vector<std::vector<std::string>> cells(columns);
      size_t height = 1;
      for (size_t c = 0; c < columns; ++c) {
        std::string text = c < row.size() ? row[c].text : "";
        std::string one_line;
        for (char ch : text) one_line += ch == '\n' ? ' ' : ch;
        if (header) one_line = style_.Bold(one_line);
        AppendLines(WrapLine(one_line, widths[c], "", ""), &cells[c]);
        height = std::max(height, cells[c].size());
      }
      for (size_t r = 0; r < height; ++r) {
        std::string line;
        for (size_t c = 0; c < columns; ++c) {
          if (c > 0) line += bar;
          MD_ALIGN align = c < row.size() ? row[c].align : MD_ALIGN_DEFAULT;
          line += Pad(r < cells[c].size() ? cells[c][r] : "", widths[c], align);
        }
        Emit(line);
      }
    };
    for (size_t i = 0; i < rows_.size(); ++i) {
      emit_row(rows_[i], i < header_rows_);
      if (i + 1 == header_rows_) {
        std::string rule;
        for (size_t c = 0; c < columns; ++c) {
          if (c > 0) rule += "─┼─";
          for (int k = 0; k < widths[c]; ++k) rule += "─";
        }
        Emit(style_.Dim(rule));
      }
    }
  }

  Style style_;
  int width_;
  std::vector<Frame> frames_;
  std::vector<ListState> lists_;
  int item_depth_ = 0;
  std::vector<MD_SPANTYPE> spans_;
  std::vector<std::pair<std::string, size_t>> links_;  // href, start of the link text
  std::string inline_;
  int heading_ = 0;
  bool in_code_block_ = false;
  std::string code_;
  std::string code_lang_;
  bool need_blank_ = false;
  std::vector<std::vector<Cell>> rows_;
  size_t header_rows_ = 0;
  bool in_head_ = false;
  MD_ALIGN cell_align_ = MD_ALIGN_DEFAULT;
  long table_start_ = -1;
};

int OnEnterBlock(MD_BLOCKTYPE type, void* detail, void* user) {
  return static_cast<Builder*>(user)->EnterBlock(type, detail);
}
int OnLeaveBlock(MD_BLOCKTYPE type, void*, void* user) {
  return static_cast<Builder*>(user)->LeaveBlock(type);
}
int OnEnterSpan(MD_SPANTYPE type, void* detail, void* user) {
  return static_cast<Builder*>(user)->EnterSpan(type, detail);
}
int OnLeaveSpan(MD_SPANTYPE type, void*, void* user) {
  return static_cast<Builder*>(user)->LeaveSpan(type);
}
int OnText(MD_TEXTTYPE type, const MD_CHAR* text, MD_SIZE size, void* user) {
  return static_cast<Builder*>(user)->Text(type, std::string_view(text, size));
}

// Whether the inline markup of a partial line might still change how it
// renders: an unclosed code span, emphasis, strikethrough or link.
bool InlineOpen(std::string_view partial) {
  // Delimiter runs: "**" and "*" (likewise "__"/"_", "~~"/"~") open and close
  // separately, so each is counted on its own.
  size_t doubles[3] = {0, 0, 0};
  size_t singles[3] = {0, 0, 0};
  size_t ticks = 0;
  long brackets = 0;
  long parens = 0;
  for (size_t i = 0; i < partial.size();) {
    char c = partial[i];
    int kind = c == '*' ? 0 : c == '_' ? 1 : c == '~' ? 2 : -1;
    if (kind >= 0) {
      size_t run = 0;
      while (i < partial.size() && partial[i] == c) {
        ++run;
        ++i;
      }
      doubles[kind] += run / 2;
      singles[kind] += run % 2;
      continue;
    }
    ticks += c == '`';
    brackets += c == '[' ? 1 : (c == ']' ? -1 : 0);
    parens += c == '(' ? 1 : (c == ')' ? -1 : 0);
    ++i;
  }
  for (int k = 0; k < 3; ++k) {
    if (doubles[k] % 2 || singles[k] % 2) return true;
  }
  return ticks % 2 || brackets > 0 || parens > 0 || partial.find('<') != std::string_view::npos ||
         partial.find('&') != std::string_view::npos;
}

}  // namespace

std::vector<std::string> RenderMarkdownLines(std::string_view text, const Style& style, int width,
                                             long* open_table) {
  Builder builder(style, width);
  MD_PARSER parser{};
  parser.flags = MD_DIALECT_GITHUB | MD_FLAG_NOHTML;
  parser.enter_block = OnEnterBlock;
  parser.leave_block = OnLeaveBlock;
  parser.enter_span = OnEnterSpan;
  parser.leave_span = OnLeaveSpan;
  parser.text = OnText;
  md_parse(text.data(), static_cast<MD_SIZE>(text.size()), &parser, &builder);
  if (open_table) *open_table = builder.open_table;
  return std::move(builder.lines);
}

std::string RenderMarkdown(std::string_view text, const Style& style, int width) {
  std::string out;
  for (const auto& line : RenderMarkdownLines(text, style, width)) out += line + "\n";
  return out;
}

std::string MarkdownRenderer::Emit(const std::vector<std::string>& lines, size_t stable) {
  std::string out;
  for (; emitted_ < std::min(stable, lines.size()); ++emitted_) out += lines[emitted_] + "\n";
  return out;
}

namespace {

// Whether nothing after `head` (text ending at a blank line) can continue its
// last block: no fence left open, and the last block is a paragraph or a
// heading, not a list item, a quote, indented code or a table that a later
// block could extend across the blank line.
bool ClosedAtBlankLine(std::string_view head) {
  int fences = 0;
  std::string_view last;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t nl = head.find('\n', pos);
    if (nl == std::string_view::npos) nl = head.size();
    std::string_view line = head.substr(pos, nl - pos);
    pos = nl + 1;
    const size_t lead = line.find_first_not_of(' ');
    if (lead == std::string_view::npos) continue;
    std::string_view body = line.substr(lead);
    if (lead < 4 && (body.starts_with("```") || body.starts_with("~~~"))) ++fences;
    last = line;
  }
  if (fences % 2 != 0 || last.empty()) return false;
  const size_t lead = last.find_first_not_of(' ');
  if (lead >= 4 || last[0] == '\t') return false;
  std::string_view body = last.substr(lead);
  if (body[0] == '>' || last.find('|') != std::string_view::npos) return false;
  if ((body[0] == '-' || body[0] == '*' || body[0] == '+') && body.size() > 1 && body[1] == ' ') {
    return false;
  }
  size_t digits = 0;
  while (digits < body.size() && digits < 9 && body[digits] >= '0' && body[digits] <= '9') ++digits;
  if (digits > 0 && digits + 1 < body.size() && (body[digits] == '.' || body[digits] == ')') &&
      body[digits + 1] == ' ') {
    return false;
  }
  return true;
}

std::vector<std::string> Trimmed(std::vector<std::string> lines) {
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

}  // namespace

std::string MarkdownRenderer::SwitchWidth() {
  const size_t nl = source_.rfind('\n');
  if (nl == std::string::npos) return "";
  const std::string_view complete = std::string_view(source_).substr(0, nl + 1);
  // The last block boundary (a blank line) all of whose lines before it
  // have been returned.
  size_t cut = complete.rfind("\n\n");
  std::vector<std::string> head_lines;
  while (cut != std::string_view::npos) {
    head_lines = Trimmed(RenderMarkdownLines(complete.substr(0, cut + 2), style_, width_));
    if (head_lines.size() <= emitted_) break;
    cut = cut == 0 ? std::string_view::npos : complete.rfind("\n\n", cut - 1);
  }
  if (cut == std::string_view::npos) return "";
  const std::string_view head = complete.substr(0, cut + 2);
  const std::string_view rest = complete.substr(cut + 2);
  if (rest.find_first_not_of(" \n") == std::string_view::npos) {
    // Nothing of the next block yet: only where no block can go on.
    if (!ClosedAtBlankLine(head)) return "";
  } else {
    // Splitting the source there must not change what it renders (a list
    // or a fenced block can span a blank line).
    std::vector<std::string> joined = head_lines;
    joined.push_back("");
    for (auto& line : Trimmed(RenderMarkdownLines(rest, style_, width_))) {
      joined.push_back(std::move(line));
    }
    if (joined != Trimmed(RenderMarkdownLines(complete, style_, width_))) return "";
  }
  // The lines before the boundary all returned, none after it.
  if (emitted_ < head_lines.size() || emitted_ > head_lines.size() + 1) return "";
  std::string out = emitted_ == head_lines.size() ? "\n" : "";  // the blank line between
  source_.erase(0, cut + 2);
  emitted_ = 0;
  width_ = next_width_;
  next_width_ = -1;
  return out;
}

std::string MarkdownRenderer::Feed(std::string_view delta) {
  source_.append(delta);
  // A new width starts at a block boundary: the blank line before it, if
  // not printed yet, comes first.
  std::string switched;
  bool now_switched = false;
  if (next_width_ >= 0 && next_width_ != width_) {
    switched = SwitchWidth();
    now_switched = next_width_ < 0;
  }
  size_t nl = source_.rfind('\n');
  std::string_view all(source_);
  std::string_view complete = nl == std::string::npos ? std::string_view() : all.substr(0, nl + 1);
  std::string_view partial = all.substr(complete.size());
  // Re-render only when something can have become stable: a line ended, or
  // the partial line grew by a word.
  bool line_ended = delta.find('\n') != std::string_view::npos;
  bool word_ended = delta.find(' ') != std::string_view::npos;
  if (!line_ended && !word_ended && !now_switched) return switched;

  long table = -1;
  std::vector<std::string> lines = RenderMarkdownLines(complete, style_, width_, &table);
  size_t stable = lines.size();
  if (table >= 0) {
    stable = static_cast<size_t>(table);
  } else if (!complete.empty()) {
    // A line with a '|' may turn out to be a table's header row.
    size_t start = complete.rfind('\n', complete.size() - 2);
    start = start == std::string_view::npos ? 0 : start + 1;
    if (complete.substr(start).find('|') != std::string_view::npos) {
      stable =
          std::min(stable, RenderMarkdownLines(complete.substr(0, start), style_, width_).size());
    }
  }
  std::string out;
  // A partial line wider than the screen: its wrapped lines but the last.
  bool long_partial = width_ > 0 && DisplayWidth(partial) > width_;
  if (stable == lines.size() && long_partial && !InlineOpen(partial) &&
      partial.find('|') == std::string_view::npos) {
    long full_table = -1;
    std::vector<std::string> full = RenderMarkdownLines(all, style_, width_, &full_table);
    if (full_table < 0 && full.size() > lines.size() + 1) {
      return switched + Emit(full, full.size() - 1);
    }
  }
  return switched + Emit(lines, stable);
}

std::string MarkdownRenderer::Finish() {
  std::string out = Emit(RenderMarkdownLines(source_, style_, width_), static_cast<size_t>(-1));
  source_.clear();
  emitted_ = 0;
  return out;
}

}  // namespace codex::cli
