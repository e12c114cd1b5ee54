#include "cli/viewer/viewer_api.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "base/json.h"
#include "base/path.h"
#include "base/strings.h"
#include "cli/session_json.h"
#include "cli/viewer/markdown_html.h"
#include "core/transcript.h"
#include "storage/search_text.h"

namespace codex::cli::viewer {

namespace {

using Json = nlohmann::ordered_json;

std::string Param(const Params& params, const std::string& key) {
  auto it = params.find(key);
  return it == params.end() ? std::string() : it->second;
}

Result<int> LimitParam(const Params& params, int fallback) {
  const std::string text = Param(params, "limit");
  if (text.empty()) return fallback;
  int n = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || n > 10'000) {
      return InvalidArgumentError("limit must be a number from 1 to 200");
    }
    n = n * 10 + (c - '0');
  }
  if (n < 1 || n > 200) return InvalidArgumentError("limit must be a number from 1 to 200");
  return n;
}

std::optional<std::string> CwdParam(const Params& params) {
  std::string cwd = Param(params, "cwd");
  if (cwd.empty()) return std::nullopt;
  return CanonicalPath(cwd);  // as sessions record it: a symlinked directory finds its sessions
}

// The snippet (matched terms wrapped in [ ]) as parts, a part marked "hit"
// when it was wrapped and its text is one the query matches: a bracket the
// text itself holds is not mistaken for a match.
Json SnippetParts(const std::string& snippet, const std::vector<storage::SearchTerm>& terms) {
  std::vector<std::pair<std::string, bool>> words;  // lower-cased query words, prefix?
  for (const auto& t : terms) {
    std::string word;
    for (char c : t.text + " ") {
      if (std::isspace(static_cast<unsigned char>(c))) {
        if (!word.empty()) words.emplace_back(Lower(word), t.prefix);
        word.clear();
      } else {
        word += c;
      }
    }
  }
  auto matches = [&](std::string_view inner) {
    const std::string w = Lower(inner);
    for (const auto& [q, prefix] : words) {
      if (w == q || (prefix && w.rfind(q, 0) == 0) || w.find(q) != std::string::npos) return true;
    }
    return false;
  };
  Json parts = Json::array();
  std::string plain;
  size_t i = 0;
  while (i < snippet.size()) {
    if (snippet[i] == '[') {
      const size_t close = snippet.find(']', i + 1);
      if (close != std::string::npos && close > i + 1 &&
          matches(std::string_view(snippet).substr(i + 1, close - i - 1))) {
        if (!plain.empty()) parts.push_back({{"text", plain}, {"hit", false}});
        plain.clear();
        parts.push_back({{"text", snippet.substr(i + 1, close - i - 1)}, {"hit", true}});
        i = close + 1;
        continue;
      }
    }
    plain += snippet[i++];
  }
  if (!plain.empty()) parts.push_back({{"text", plain}, {"hit", false}});
  return parts;
}

std::string BodyString(const Json& body, const char* key) {
  return body.is_object() && body.contains(key) && body[key].is_string()
             ? body[key].get<std::string>()
             : std::string();
}

// Long tool outputs are cut: the page is for reading, `sessions show --full`
// and export have the rest.
constexpr size_t kMaxText = 64 * 1024;

std::string Cut(std::string text) {
  if (text.size() <= kMaxText) return text;
  size_t end = kMaxText;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  const size_t rest = text.size() - end;
  text.resize(end);
  return text + "\n… (" + std::to_string(rest) + " more bytes; codex sessions show --full)";
}

// One transcript entry: "type" is message | context | reasoning | call |
// output | compaction | checkpoint | other.
Json ItemJson(const core::StoredItem& stored, const std::string& session_id) {
  const core::Item& item = stored.item;
  const Json body = Json::parse(item.body, nullptr, false);
  Json j;
  j["id"] = stored.id;
  j["inherited"] = stored.session_id != session_id;  // from the session it was forked from
  j["call_id"] = item.call_id;
  switch (item.kind) {
    case core::ItemKind::kMessage: {
      const std::string text = core::MessageText(item);
      j["role"] = item.role;
      if (core::IsContextItem(item)) {
        j["type"] = "context";
        j["text"] = Cut(text);
      } else {
        j["type"] = "message";
        j["summary"] = core::IsSummaryMessage(item);
        j["text"] = Cut(text);
        j["html"] = MarkdownToSafeHtml(Cut(text));
      }
      break;
    }
    case core::ItemKind::kReasoning:
      j["type"] = "reasoning";
      j["text"] = Cut(storage::SearchText(item));
      break;
    case core::ItemKind::kFunctionCall:
    case core::ItemKind::kCustomToolCall:
    case core::ItemKind::kLocalShellCall: {
      j["type"] = "call";
      const std::string name =
          item.kind == core::ItemKind::kLocalShellCall ? "local_shell" : BodyString(body, "name");
      j["name"] = name;
      std::string text = item.kind == core::ItemKind::kCustomToolCall ? BodyString(body, "input")
                                                                      : storage::SearchText(item);
      if (text.rfind(name + "\n", 0) == 0) text.erase(0, name.size() + 1);
      j["text"] = Cut(text);
      // apply_patch input is a patch: the page colours its lines.
      j["patch"] = text.rfind("*** Begin Patch", 0) == 0;
      break;
    }
    case core::ItemKind::kFunctionCallOutput:
    case core::ItemKind::kCustomToolCallOutput:
    case core::ItemKind::kLocalShellCallOutput:
      j["type"] = "output";
      j["text"] = Cut(body.is_object() ? storage::SearchText(item) : item.body);
      break;
    case core::ItemKind::kCompaction:
      j["type"] = "compaction";
      break;
    case core::ItemKind::kCompactionCheckpoint:
      j["type"] = "checkpoint";
      j["replacement_items"] = storage::CheckpointReplacementItems(item).value_or(0);
      break;
    case core::ItemKind::kOther:
      j["type"] = "other";
      j["text"] = BodyString(body, "type");
      break;
  }
  return j;
}

}  // namespace

Result<std::string> ViewerApi::Sessions(const Params& params) {
  core::ListQuery q;
  q.cwd = CwdParam(params);
  q.archived = Param(params, "archived") == "1";
  ASSIGN_OR_RETURN(q.limit, LimitParam(params, 50));
  q.cursor = Param(params, "cursor");
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto page, store_.ListSessions(q));
  Json out;
  Json list = Json::array();
  for (const auto& s : page.sessions) list.push_back(SessionJson(s));
  out["sessions"] = std::move(list);
  out["next_cursor"] = page.next_cursor;
  return Dump(out);
}

Result<std::string> ViewerApi::Search(const Params& params) {
  storage::SearchQuery q;
  q.text = Param(params, "q");
  q.cwd = CwdParam(params);
  ASSIGN_OR_RETURN(q.limit, LimitParam(params, 50));
  ASSIGN_OR_RETURN(auto terms, storage::ParseSearchQuery(q.text));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto hits, store_.Search(q));
  Json out;
  out["query"] = q.text;
  Json list = Json::array();
  for (const auto& h : hits) {
    Json hit;
    hit["item_id"] = h.item_id;
    hit["kind"] = h.kind;
    hit["role"] = h.role;
    hit["parts"] = SnippetParts(h.snippet, terms);
    Json where = Json::array();
    for (const auto& w : h.sessions) {
      Json s = SessionJson(w.session);
      s["turn"] = w.turn;
      where.push_back(std::move(s));
    }
    hit["sessions"] = std::move(where);
    list.push_back(std::move(hit));
  }
  out["hits"] = std::move(list);
  return Dump(out);
}

Result<std::string> ViewerApi::Session(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto found, store_.FindSession(id));
  ASSIGN_OR_RETURN(auto d, store_.Show(found.id));
  Json out;
  out["session"] = SessionJson(d.session);
  Json forks = Json::array();
  for (const auto& f : d.forks) forks.push_back(SessionJson(f));
  out["forks"] = std::move(forks);
  const std::vector<size_t> starts = storage::TurnStartIndexes(d.history);
  Json items = Json::array();
  size_t next = 0;
  for (size_t i = 0; i < d.history.size(); ++i) {
    while (next < starts.size() && starts[next] <= i) ++next;
    Json j = ItemJson(d.history[i], d.session.id);
    j["turn"] = next;
    j["turn_start"] = next > 0 && starts[next - 1] == i;
    items.push_back(std::move(j));
  }
  out["items"] = std::move(items);
  Json turns = Json::array();
  for (const auto& t : d.turns) turns.push_back(TurnJson(t));
  out["turns"] = std::move(turns);
  return Dump(out);
}

Result<std::string> ViewerApi::Tree(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(auto found, store_.FindSession(id));
  ASSIGN_OR_RETURN(auto nodes, store_.Tree(found.id));
  Json out;
  out["current"] = found.id;
  Json list = Json::array();
  for (const auto& node : nodes) {
    Json j = SessionJson(node.session);
    j["depth"] = node.depth;
    list.push_back(std::move(j));
  }
  out["nodes"] = std::move(list);
  return Dump(out);
}

}  // namespace codex::cli::viewer
