// ScriptedServer: a fake Responses API on 127.0.0.1 for tests and the demo.
//
// It answers POST .../responses with SSE streams generated from a Script (one
// entry per request, handed out in arrival order), POST .../responses/compact
// with JSON, records every request, and rejects requests that break the
// stateless wire invariants with HTTP 400 (invariants.h). The format of
// scripts is documented in tests/scripted_server/README.md.
//
// Ownership: Start() returns the only owner; destroying it stops the server
// and joins its threads (streams in progress are cut). All public methods are
// thread-safe; several client processes may share one server.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tests/scripted_server/script.h"

namespace codex::testing {

struct ServerOptions {
  int port = 0;               // 0 = pick a free port
  std::string record_path;    // append each request as one JSON line; "" = keep in memory only
  bool log_requests = false;  // one line per request on stderr
  // Requests one connection may carry; 1 = "Connection: close" after each.
  size_t keep_alive_max_count = 1;
};

// One request as the server saw it.
struct RecordedRequest {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // lowercased names; authorization "<redacted>"
  Json body;              // the parsed JSON body, or the raw text as a JSON string
  size_t body_bytes = 0;  // size of the body as received
  int status = 0;         // HTTP status answered
  std::string outcome;    // "completed", "failed:<code>", "error:<code>", "compact", ...
  std::string error;      // why the request was rejected, "" otherwise
  int remote_port = 0;    // the client's port: equal ports = one reused connection

  // The record as written to the --record file:
  // {"method","path","headers","body","status","outcome"[,"error"]}.
  Json ToJson() const;
  // Inverse of ToJson (used for --record files); kInvalidArgument on a bad line.
  static Result<RecordedRequest> FromJson(const Json& record);
  // body["input"] when it is an array, else an empty array.
  Json InputItems() const;
};

class ScriptedServer {
 public:
  // Parses `script_json` (kInvalidArgument naming the problem) and starts serving.
  static Result<std::unique_ptr<ScriptedServer>> Start(std::string_view script_json,
                                                       const ServerOptions& options = {});
  static Result<std::unique_ptr<ScriptedServer>> Start(Script script,
                                                       const ServerOptions& options = {});

  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;
  ~ScriptedServer();

  // Stops accepting, cuts streams in progress, joins all threads. Idempotent.
  void Stop();

  int port() const;
  // "http://127.0.0.1:PORT/v1", the base_url for a provider config.
  std::string base_url() const;

  // Every request received so far, in arrival order.
  std::vector<RecordedRequest> requests() const;
  // Only the requests whose path ends with `suffix` (e.g. "/responses", "/responses/compact").
  std::vector<RecordedRequest> requests_to(std::string_view suffix) const;
  // How many /responses answers came from the script so far (default uses included).
  uint64_t responses_served() const;
  // How many /responses/compact answers were given so far.
  uint64_t compactions_served() const;

 private:
  struct Impl;
  explicit ScriptedServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace codex::testing
