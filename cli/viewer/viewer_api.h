// The JSON the session viewer's page reads (docs/viewer.md lists the routes):
// one method per API route, each a bounded query on the store, so the
// viewer stays fast on a store of any size (a page of sessions, a limited
// number of search hits, one session, one fork tree).
//
// Strings from the store go out as JSON strings, for the page script to
// place with textContent; the one HTML the API sends is a message's
// Markdown rendered by MarkdownToSafeHtml (markdown_html.h), under the key
// "html". Thread-safe: the store object is used under a mutex (the HTTP
// server calls from several threads). `store` must outlive this object.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "base/status.h"
#include "storage/session_database.h"

namespace codex::cli::viewer {

// A route's query parameters (already percent-decoded).
using Params = std::multimap<std::string, std::string>;

class ViewerApi {
 public:
  explicit ViewerApi(storage::SessionDatabase& store) : store_(store) {}

  // GET api/sessions?cwd=DIR&archived=1&limit=N&cursor=C (ListQuery):
  // {"sessions":[...], "next_cursor":"C"|""}. Without cwd: every directory.
  Result<std::string> Sessions(const Params& params);
  // GET api/search?q=TEXT&cwd=DIR&limit=N (SearchQuery): {"query", "hits":
  // [{"item_id","kind","role","parts":[{"text","hit"}],"sessions":[{session...,"turn"}]}]}.
  Result<std::string> Search(const Params& params);
  // GET api/session/ID: {"session", "forks", "items":[...], "turns":[...]}.
  Result<std::string> Session(const std::string& id);
  // GET api/tree/ID: {"current":ID, "nodes":[{session..., "depth", "fork_turn"}]}.
  Result<std::string> Tree(const std::string& id);

 private:
  storage::SessionDatabase& store_;
  std::mutex mu_;
};

}  // namespace codex::cli::viewer
