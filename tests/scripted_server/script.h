// The script of a ScriptedServer: which answer each request gets (README.md
// in this folder documents the format with examples).
//
// A script is JSON: either an array of response entries, or an object
// {"responses":[...], "default":entry, "compact":[...], "allow_item_ids":bool,
// "max_input_tokens":int}. `repeat` nodes expand lazily, so a script of a few
// lines can describe thousands of requests. Parse() validates every entry up
// front and names the offending path in its error. A Script is immutable
// after parsing and therefore safe to read from several threads.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace codex::testing {

using Json = nlohmann::ordered_json;

// Values substituted into the strings of an entry when it is used.
struct Substitutions {
  int64_t n = 1;        // {{n}}: 1-based iteration of the innermost repeat (or default use)
  int64_t request = 1;  // {{request}}: 1-based number of the request being answered
};

// Replaces {{n}}, {{i}} (= n - 1) and {{request}} in every string value of
// `value`, recursively. Object keys are left alone.
Json Substitute(const Json& value, const Substitutions& subs);

class Script {
 public:
  // One entry of a list, with the {{n}} value it was reached with.
  struct EntryRef {
    const Json* entry;
    int64_t n;
  };

  // kInvalidArgument naming the JSON path of the first problem.
  static Result<Script> Parse(std::string_view json_text);
  // Reads and parses a file; kNotFound when it cannot be read.
  static Result<Script> LoadFile(const std::string& path);

  bool allow_item_ids() const { return allow_item_ids_; }
  // Whether /responses accepts a {"type":"compaction_trigger"} input item
  // (default true); false answers it HTTP 400 like a server without it.
  bool inline_compaction() const { return inline_compaction_; }
  // Simulated context window in tokens (request bytes / 4); nullopt = none.
  std::optional<int64_t> max_input_tokens() const { return max_input_tokens_; }

  // Number of /responses entries after expanding repeats (default excluded).
  uint64_t response_count() const { return responses_.length; }
  uint64_t compact_count() const { return compact_.length; }
  // The k-th (0-based) entry; nullopt past the end of the list.
  std::optional<EntryRef> Response(uint64_t k) const { return Find(responses_, k, 1); }
  std::optional<EntryRef> Compact(uint64_t k) const { return Find(compact_, k, 1); }
  // `routes`: lists answering the requests one of whose user messages
  // contains a text (sub-agents' requests, which arrive in any order with
  // their parent's). The first route whose text a request's user message
  // holds and that has an entry left answers it; else `responses` does.
  size_t route_count() const { return routes_.size(); }
  const std::string& route_text(size_t r) const { return routes_[r].when; }
  std::optional<EntryRef> RouteResponse(size_t r, uint64_t k) const {
    return Find(routes_[r].responses, k, 1);
  }
  // The entry used once `responses` is exhausted; nullptr when the script has none.
  const Json* default_entry() const { return has_default_ ? &default_ : nullptr; }

 private:
  // A leaf entry, or a repeated sequence of children.
  struct Node {
    Json entry;  // leaf only
    bool is_leaf = true;
    bool is_repeat = false;  // an explicit `repeat` node sets {{n}} for its children
    int64_t repeat = 1;
    std::vector<Node> children;
    uint64_t length = 1;  // number of leaf entries this node expands to
  };

  static std::optional<EntryRef> Find(const Node& node, uint64_t k, int64_t n);

  bool allow_item_ids_ = false;
  bool inline_compaction_ = true;
  std::optional<int64_t> max_input_tokens_;
  Node responses_;
  struct Route {
    std::string when;
    Node responses;
  };
  std::vector<Route> routes_;
  Node compact_;
  Json default_;
  bool has_default_ = false;

  friend class ScriptParser;
};

}  // namespace codex::testing
