#include "storage/search_text.h"

#include <utf8proc.h>

#include <nlohmann/json.hpp>

#include "core/transcript.h"
#include "storage/fts_tokenizer.h"
#include "storage/packed_text.h"

namespace codex::storage {

namespace {

void AppendLine(std::string& out, std::string_view text) {
  if (text.empty()) return;
  if (!out.empty()) out += '\n';
  out += text;
}

// Every string leaf of `j`, in document order, one per line (keys skipped).
void AppendStrings(std::string& out, const nlohmann::json& j) {
  if (j.is_string()) {
    AppendLine(out, j.get_ref<const std::string&>());
  } else if (j.is_array() || j.is_object()) {
    for (const auto& v : j) AppendStrings(out, v);
  } else if (j.is_number() || j.is_boolean()) {
    AppendLine(out, j.dump());
  }
}

// A command array as one shell-like line: ["bash","-lc","ls -la"] -> "bash -lc ls -la".
std::string JoinCommand(const nlohmann::json& argv) {
  std::string line;
  for (const auto& a : argv) {
    if (!a.is_string()) continue;
    if (!line.empty()) line += ' ';
    line += a.get_ref<const std::string&>();
  }
  return line;
}

// Text parts of a content/output array ({"text": ...} objects), or the string itself.
void AppendContent(std::string& out, const nlohmann::json& content) {
  if (content.is_string()) {
    AppendLine(out, content.get_ref<const std::string&>());
    return;
  }
  if (!content.is_array()) return;
  for (const auto& part : content) {
    if (part.is_object()) {
      auto t = part.find("text");
      if (t != part.end() && t->is_string()) AppendLine(out, t->get_ref<const std::string&>());
    } else if (part.is_string()) {
      AppendLine(out, part.get_ref<const std::string&>());
    }
  }
}

// A tool's arguments (a JSON text): the command line when there is one,
// then every other string value.
void AppendArguments(std::string& out, const std::string& arguments) {
  const nlohmann::json args = nlohmann::json::parse(arguments, nullptr, false);
  if (args.is_discarded()) {
    AppendLine(out, arguments);
    return;
  }
  if (!args.is_object()) {
    AppendStrings(out, args);
    return;
  }
  for (const auto& [key, value] : args.items()) {
    if ((key == "command" || key == "cmd") && value.is_array()) {
      AppendLine(out, JoinCommand(value));
    } else {
      AppendStrings(out, value);
    }
  }
}

// A tool output: a string (possibly the JSON {"output": ..., "metadata": ...}
// the shell tool returns) or an array of content parts.
void AppendOutput(std::string& out, const nlohmann::json& output) {
  if (output.is_string()) {
    const std::string& s = output.get_ref<const std::string&>();
    if (!s.empty() && s.front() == '{') {
      const nlohmann::json inner = nlohmann::json::parse(s, nullptr, false);
      if (inner.is_object()) {
        auto o = inner.find("output");
        if (o != inner.end() && o->is_string()) {
          AppendLine(out, o->get_ref<const std::string&>());
          return;
        }
      }
    }
    AppendLine(out, s);
    return;
  }
  AppendContent(out, output);
}

}  // namespace

std::string SearchText(const core::Item& item) {
  using core::ItemKind;
  switch (item.kind) {
    case ItemKind::kMessage:
      if (item.role == "user" && !IsRealUserMessage(item)) return {};
      if (item.role != "user" && item.role != "assistant") return {};
      break;
    case ItemKind::kReasoning:
    case ItemKind::kFunctionCall:
    case ItemKind::kFunctionCallOutput:
    case ItemKind::kCustomToolCall:
    case ItemKind::kCustomToolCallOutput:
    case ItemKind::kLocalShellCall:
    case ItemKind::kLocalShellCallOutput:
      break;
    default:
      return {};
  }
  const nlohmann::json body = nlohmann::json::parse(item.body, nullptr, false);
  if (!body.is_object()) return {};
  std::string out;
  auto field = [&](const char* name) -> const nlohmann::json* {
    auto it = body.find(name);
    return it == body.end() ? nullptr : &*it;
  };
  switch (item.kind) {
    case ItemKind::kMessage:
      if (const nlohmann::json* c = field("content")) AppendContent(out, *c);
      break;
    case ItemKind::kReasoning:
      if (const nlohmann::json* s = field("summary")) AppendContent(out, *s);
      break;
    case ItemKind::kFunctionCall:
      if (const nlohmann::json* n = field("name"); n && n->is_string()) {
        AppendLine(out, n->get_ref<const std::string&>());
      }
      if (const nlohmann::json* a = field("arguments"); a && a->is_string()) {
        AppendArguments(out, a->get_ref<const std::string&>());
      }
      break;
    case ItemKind::kCustomToolCall:
      if (const nlohmann::json* n = field("name"); n && n->is_string()) {
        AppendLine(out, n->get_ref<const std::string&>());
      }
      if (const nlohmann::json* in = field("input"); in && in->is_string()) {
        AppendLine(out, in->get_ref<const std::string&>());
      }
      break;
    case ItemKind::kLocalShellCall:
      if (const nlohmann::json* a = field("action"); a && a->is_object()) {
        auto c = a->find("command");
        if (c != a->end() && c->is_array()) AppendLine(out, JoinCommand(*c));
      }
      break;
    default:  // the outputs
      if (const nlohmann::json* o = field("output")) AppendOutput(out, *o);
      break;
  }
  return out;
}

void RegisterSearchTextFunction(sqlite3* db) {
  auto fn = [](sqlite3_context* ctx, int argc, sqlite3_value** argv) {
    if (argc != 3) return;
    auto text = [&](int i) -> std::string {
      const unsigned char* p = sqlite3_value_text(argv[i]);
      return p ? std::string(reinterpret_cast<const char*>(p),
                             static_cast<size_t>(sqlite3_value_bytes(argv[i])))
               : std::string();
    };
    core::Item item;
    item.kind = core::ItemKindFromName(text(0));
    item.role = text(1);
    if (sqlite3_value_type(argv[2]) == SQLITE_BLOB) {
      auto body = UnpackText(std::string_view(static_cast<const char*>(sqlite3_value_blob(argv[2])),
                                              static_cast<size_t>(sqlite3_value_bytes(argv[2]))));
      if (!body.ok()) {
        sqlite3_result_error(ctx, body.status().message().c_str(), -1);
        return;
      }
      item.body = std::move(body).value();
    } else {
      item.body = text(2);
    }
    const std::string t = SearchText(item);
    if (t.empty()) {
      sqlite3_result_null(ctx);
    } else {
      sqlite3_result_text(ctx, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
    }
  };
  sqlite3_create_function(db, "codex_search_text", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                          fn, nullptr, nullptr);
}

Result<std::vector<SearchTerm>> ParseSearchQuery(std::string_view query) {
  // Before anything else: a byte that is no text would otherwise separate
  // words silently ("bo\xFFdy" searching for "bo" and "dy").
  for (size_t i = 0; i < query.size();) {
    if (query[i] == '\0') {
      return InvalidArgumentError("search text has a NUL byte (byte " + std::to_string(i + 1) +
                                  "); remove it and search again");
    }
    utf8proc_int32_t c = -1;
    const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(query.data()) + i,
                                    static_cast<utf8proc_ssize_t>(query.size() - i), &c);
    if (n <= 0) {
      return InvalidArgumentError("search text is not valid UTF-8 (byte " + std::to_string(i + 1) +
                                  "); type the words again as text");
    }
    i += static_cast<size_t>(n);
  }
  std::vector<SearchTerm> terms;
  size_t i = 0;
  // White space of any script separates terms (an ideographic space between
  // Japanese words, a no-break space pasted from a page): the bytes of the
  // one at `at`, 0 when none. The query is valid UTF-8 here.
  const auto space_at = [&](size_t at) -> size_t {
    utf8proc_int32_t c = -1;
    const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(query.data()) + at,
                                    static_cast<utf8proc_ssize_t>(query.size() - at), &c);
    if (n <= 0) return 0;
    const bool white = (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0x2028 || c == 0x2029 ||
                       utf8proc_category(c) == UTF8PROC_CATEGORY_ZS;
    return white ? static_cast<size_t>(n) : 0;
  };
  while (i < query.size()) {
    while (i < query.size() && space_at(i) > 0) i += space_at(i);
    if (i >= query.size()) break;
    if (query[i] == '"') {
      const size_t end = query.find('"', i + 1);
      if (end == std::string_view::npos) {
        return InvalidArgumentError("search text has an unbalanced \" : close the phrase with \"");
      }
      std::string_view phrase = query.substr(i + 1, end - i - 1);
      if (phrase.find_first_not_of(" \t\r\n") != std::string_view::npos) {
        terms.push_back({std::string(phrase), false});
      }
      i = end + 1;
      continue;
    }
    size_t j = i;
    while (j < query.size() && space_at(j) == 0 && query[j] != '"') ++j;
    std::string_view word = query.substr(i, j - i);
    i = j;
    bool prefix = false;
    if (word.back() == '*') {
      word.remove_suffix(1);
      prefix = true;
      if (word.empty()) {
        return InvalidArgumentError(
            "search text has a bare '*'; a prefix query needs a word before it, e.g. 'build*'");
      }
    }
    if (word.find('*') != std::string_view::npos) {
      return InvalidArgumentError("'*' may only end a word (a prefix query such as 'build*')");
    }
    terms.push_back({std::string(word), prefix});
  }
  if (terms.empty()) {
    return InvalidArgumentError("search text is empty; give one or more words or a \"phrase\"");
  }
  return terms;
}

Result<std::vector<std::vector<QueryToken>>> QueryTokensFromUser(std::string_view query) {
  ASSIGN_OR_RETURN(std::vector<SearchTerm> terms, ParseSearchQuery(query));
  std::vector<std::vector<QueryToken>> out;
  for (const SearchTerm& term : terms) {
    const std::vector<FtsToken> tokens = FtsTokens(term.text, TokenizeMode::kQuery);
    std::vector<QueryToken> phrase;
    for (size_t k = 0; k < tokens.size(); ++k) {
      const FtsToken& t = tokens[k];
      if (t.folded.size() > kMaxTokenBytes) {
        return InvalidArgumentError("a search word is " + std::to_string(t.folded.size()) +
                                    " bytes long; words over " + std::to_string(kMaxTokenBytes) +
                                    " bytes are not indexed, search for a shorter word near it");
      }
      const bool last = k + 1 == tokens.size();
      // A lone character of a run (a query's last run keeps no trailing
      // character of its own, so this one stands alone) starts bigrams.
      const bool lone_char = t.cjk && t.folded.size() <= 4;
      phrase.push_back({t.folded, last && (term.prefix || lone_char)});
    }
    if (!phrase.empty()) out.push_back(std::move(phrase));
  }
  size_t tokens = 0;
  for (const auto& phrase : out) tokens += phrase.size();
  if (tokens > kMaxSearchTokens) {
    // (PostgreSQL's tsquery parser runs out of stack on a phrase of ~20,000.)
    return InvalidArgumentError("search text has " + std::to_string(tokens) + " words; at most " +
                                std::to_string(kMaxSearchTokens) +
                                " are looked for at once: search for a shorter passage");
  }
  if (out.size() > kMaxSearchTerms) {
    return InvalidArgumentError("search text has " + std::to_string(out.size()) +
                                " words or phrases; at most " + std::to_string(kMaxSearchTerms) +
                                " are looked for at once: keep the rarest");
  }
  if (out.empty()) {
    return InvalidArgumentError(
        "search text has no word to look for: punctuation is not indexed; search for words, "
        "numbers or emoji");
  }
  return out;
}

Result<std::string> FtsQueryFromUser(std::string_view query) {
  ASSIGN_OR_RETURN(auto terms, QueryTokensFromUser(query));
  std::string out;
  for (const std::vector<QueryToken>& phrase : terms) {
    if (!out.empty()) out += ' ';
    for (size_t k = 0; k < phrase.size(); ++k) {
      if (k) out += " + ";
      // Folded tokens hold no '"' (punctuation separates words).
      out += '"' + phrase[k].word + '"';
      if (phrase[k].prefix) out += '*';
    }
  }
  return out;
}

}  // namespace codex::storage
