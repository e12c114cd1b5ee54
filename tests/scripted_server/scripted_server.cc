#include "tests/scripted_server/scripted_server.h"

#include <fnmatch.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "base/json.h"
#include "base/strings.h"
#include "tests/scripted_server/invariants.h"
#include "tests/scripted_server/render.h"

namespace codex::testing {

namespace {

// Enough workers that many concurrent (possibly stalled) streams never starve
// a new request; httplib's default is 8.
constexpr size_t kWorkerThreads = 32;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Json RecordedRequest::ToJson() const {
  Json j = {{"method", method}, {"path", path},     {"headers", headers},
            {"body", body},     {"status", status}, {"outcome", outcome}};
  if (!error.empty()) j["error"] = error;
  return j;
}

Result<RecordedRequest> RecordedRequest::FromJson(const Json& record) {
  if (!record.is_object() || !record.contains("path") || !record["path"].is_string()) {
    return InvalidArgumentError("request record is not an object with a \"path\"");
  }
  RecordedRequest r;
  r.method = record.value("method", "POST");
  r.path = record["path"].get<std::string>();
  if (record.contains("headers") && record["headers"].is_object()) {
    for (const auto& [k, v] : record["headers"].items()) {
      if (v.is_string()) r.headers[k] = v.get<std::string>();
    }
  }
  r.body = record.value("body", Json());
  r.body_bytes = r.body.is_string() ? r.body.get<std::string>().size() : Dump(r.body).size();
  r.status = record.value("status", 0);
  r.outcome = record.value("outcome", "");
  r.error = record.value("error", "");
  return r;
}

Json RecordedRequest::InputItems() const {
  if (body.is_object() && body.contains("input") && body["input"].is_array()) return body["input"];
  return Json::array();
}

namespace {

// Whether a user message of `input` has `text` in one of its text parts.
bool HasUserText(const Json& input, const std::string& text) {
  if (!input.is_array()) return false;
  for (const Json& item : input) {
    if (!item.is_object() || item.value("role", "") != "user") continue;
    const Json content = item.value("content", Json());
    if (content.is_string() && content.get<std::string>().find(text) != std::string::npos) {
      return true;
    }
    if (!content.is_array()) continue;
    for (const Json& part : content) {
      if (part.is_object() && part.value("text", Json()).is_string() &&
          part["text"].get<std::string>().find(text) != std::string::npos) {
        return true;
      }
    }
  }
  return false;
}

// Replaces each {{output:CALL_ID:FIELD}} in the strings of `value` with
// FIELD of the JSON output of call CALL_ID in `input` (a sub-agent's id that
// spawn_agent returned, say); "" when there is none.
Json FillOutputRefs(const Json& value, const Json& input) {
  if (value.is_object()) {
    Json out = Json::object();
    for (const auto& [k, v] : value.items()) out[k] = FillOutputRefs(v, input);
    return out;
  }
  if (value.is_array()) {
    Json out = Json::array();
    for (const auto& v : value) out.push_back(FillOutputRefs(v, input));
    return out;
  }
  if (!value.is_string()) return value;
  std::string text = value.get<std::string>();
  for (size_t at = text.find("{{output:"); at != std::string::npos;
       at = text.find("{{output:", at)) {
    const size_t end = text.find("}}", at);
    if (end == std::string::npos) break;
    const std::string ref = text.substr(at + 9, end - at - 9);
    const size_t colon = ref.find(':');
    std::string found;
    if (colon != std::string::npos && input.is_array()) {
      const std::string call_id = ref.substr(0, colon);
      const std::string field = ref.substr(colon + 1);
      for (const Json& item : input) {
        if (!item.is_object() || item.value("call_id", "") != call_id ||
            !item.value("output", Json()).is_string()) {
          continue;
        }
        const Json parsed = Json::parse(item["output"].get<std::string>(), nullptr, false);
        if (parsed.is_object() && parsed.value(field, Json()).is_string()) {
          found = parsed[field].get<std::string>();
        }
      }
    }
    text.replace(at, end + 2 - at, found);
    at += found.size();
  }
  return text;
}

}  // namespace

struct ScriptedServer::Impl {
  Script script;
  ServerOptions options;
  httplib::Server http;
  std::thread thread;
  int port = 0;
  std::atomic<bool> stopping{false};

  mutable std::mutex mu;  // guards everything below
  std::condition_variable stop_cv;
  IssuedState issued;
  uint64_t next_response_entry = 0;
  uint64_t default_uses = 0;
  uint64_t responses_served = 0;
  uint64_t next_compact_entry = 0;
  uint64_t compactions_served = 0;
  std::vector<uint64_t> route_next;  // per route: its next entry
  std::vector<RecordedRequest> records;
  std::ofstream record_file;

  // Sleeps up to `ms`; false when the server is stopping.
  bool SleepUnlessStopping(int64_t ms) {
    if (ms <= 0) return !stopping;
    std::unique_lock<std::mutex> lock(mu);
    stop_cv.wait_for(lock, std::chrono::milliseconds(ms), [&] { return stopping.load(); });
    return !stopping;
  }

  RecordedRequest MakeRecord(const httplib::Request& req, const Json& parsed, bool is_json) {
    RecordedRequest rec;
    rec.method = req.method;
    rec.path = req.path;
    rec.remote_port = req.remote_port;
    for (const auto& [name, value] : req.headers) {
      // httplib adds the peer address as pseudo-headers; they were not sent.
      if (name == "REMOTE_ADDR" || name == "REMOTE_PORT" || name == "LOCAL_ADDR" ||
          name == "LOCAL_PORT") {
        continue;
      }
      std::string key = Lower(name);
      rec.headers[key] = key == "authorization" ? "<redacted>" : value;
    }
    rec.body = is_json ? parsed : Json(req.body);
    rec.body_bytes = req.body.size();
    return rec;
  }

  // Called with `mu` held.
  void Record(RecordedRequest rec, const Reply& reply, const Verdict& rejection) {
    rec.status = reply.status;
    rec.outcome = reply.outcome;
    if (rejection) rec.error = rejection->message;
    if (record_file.is_open()) {
      record_file << Dump(rec.ToJson()) << '\n';
      record_file.flush();
    }
    if (options.log_requests) {
      std::cerr << "scripted-server: " << rec.method << ' ' << rec.path << " -> " << rec.status
                << ' ' << rec.outcome << (rec.error.empty() ? "" : ": " + rec.error) << std::endl;
    }
    records.push_back(std::move(rec));
  }

  static Reply Rejection(const Violation& violation) {
    return ErrorReply(400, "invalid_request_error", violation.code, violation.message);
  }

  // Chooses the answer for a /responses request. Called with `mu` held.
  Reply AnswerResponses(const Json& body, size_t body_bytes, Verdict* rejection) {
    InvariantOptions inv{script.allow_item_ids()};
    *rejection = CheckResponsesRequest(body, issued, inv);
    if (*rejection) return Rejection(**rejection);
    RequestInfo info{&body, body_bytes};
    int64_t tokens = EstimateTokens(body_bytes);
    if (script.max_input_tokens() && tokens > *script.max_input_tokens()) {
      return RenderContextLengthExceeded(info, tokens, *script.max_input_tokens(), issued);
    }
    const Json& input = body.contains("input") ? body["input"] : Json();
    if (input.is_array() && !input.empty() && input.back().is_object() &&
        input.back().value("type", "") == "compaction_trigger") {
      if (!script.inline_compaction()) {
        *rejection =
            Violation{"invalid_value",
                      "Invalid value: 'compaction_trigger'. Supported values are: 'message', "
                      "'reasoning', 'function_call', 'function_call_output', 'compaction', ..."};
        return Rejection(**rejection);
      }
      // Inline compaction: answered from the `compact` list (or the built-in
      // default), not from `responses`.
      std::optional<Script::EntryRef> compact_ref = script.Compact(next_compact_entry);
      ++compactions_served;
      if (!compact_ref) return RenderInlineCompaction(nullptr, info, issued);
      ++next_compact_entry;
      Json entry = Substitute(*compact_ref->entry,
                              {compact_ref->n, static_cast<int64_t>(compactions_served)});
      return RenderInlineCompaction(&entry, info, issued);
    }
    std::optional<Script::EntryRef> ref;
    for (size_t r = 0; r < script.route_count() && !ref; ++r) {
      if (route_next.size() <= r) route_next.resize(r + 1, 0);
      if (!HasUserText(input, script.route_text(r))) continue;
      ref = script.RouteResponse(r, route_next[r]);
      if (ref) ++route_next[r];
    }
    if (ref) {
    } else if ((ref = script.Response(next_response_entry))) {
      ++next_response_entry;
    } else if (script.default_entry() != nullptr) {
      ref = Script::EntryRef{script.default_entry(), static_cast<int64_t>(++default_uses)};
    } else {
      *rejection =
          Violation{"script_exhausted",
                    "scripted server: the script has no answer for request #" +
                        std::to_string(responses_served + 1) + " (it has " +
                        std::to_string(script.response_count()) +
                        " entries and no \"default\"); add entries or a \"default\" to the script"};
      return Rejection(**rejection);
    }
    ++responses_served;
    Json entry = FillOutputRefs(
        Substitute(*ref->entry, {ref->n, static_cast<int64_t>(responses_served)}), input);
    return RenderResponse(entry, info, issued);
  }

  // Chooses the answer for a /responses/compact request. Called with `mu` held.
  Reply AnswerCompact(const Json& body, size_t body_bytes, Verdict* rejection) {
    InvariantOptions inv{script.allow_item_ids()};
    *rejection = CheckCompactRequest(body, issued, inv);
    if (*rejection) return Rejection(**rejection);
    RequestInfo info{&body, body_bytes};
    int64_t tokens = EstimateTokens(body_bytes);
    if (script.max_input_tokens() && tokens > *script.max_input_tokens()) {
      return ErrorReply(400, "invalid_request_error", "context_length_exceeded",
                        "Your input exceeds the context window of this model (" +
                            std::to_string(tokens) + " estimated tokens > max_input_tokens " +
                            std::to_string(*script.max_input_tokens()) +
                            "). Please adjust your input and try again.");
    }
    std::optional<Script::EntryRef> ref = script.Compact(next_compact_entry);
    ++compactions_served;
    if (!ref) return RenderCompact(nullptr, info, issued);
    ++next_compact_entry;
    Json entry = Substitute(*ref->entry, {ref->n, static_cast<int64_t>(compactions_served)});
    return RenderCompact(&entry, info, issued);
  }

  enum class Endpoint { kResponses, kCompact, kUnknown };

  void Handle(Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
    Json body = Json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    bool is_json = !body.is_discarded();
    RecordedRequest rec = MakeRecord(req, body, is_json);
    Reply reply;
    Verdict rejection;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (endpoint == Endpoint::kUnknown) {
        rejection =
            Violation{"not_found", "scripted server: no endpoint " + req.method + " " + req.path +
                                       "; use POST .../responses or POST "
                                       ".../responses/compact"};
        reply = ErrorReply(404, "invalid_request_error", "not_found", rejection->message);
      } else if (!is_json) {
        rejection = Violation{"invalid_json", "the request body is not valid JSON"};
        reply = Rejection(*rejection);
      } else if (endpoint == Endpoint::kResponses) {
        reply = AnswerResponses(body, req.body.size(), &rejection);
      } else {
        reply = AnswerCompact(body, req.body.size(), &rejection);
      }
      Record(std::move(rec), reply, rejection);
    }
    Send(std::move(reply), res);
  }

  // Waits until `path` exists (30 s at most); false when it did not or the
  // server is stopping.
  // Whether `path` exists; a last component with `*` is a pattern
  // (fnmatch), matched by a non-empty file in that directory (a file a
  // client makes empty first and fills later, e.g. a shell snapshot).
  static bool FileThere(const std::string& path) {
    std::error_code ec;
    const std::filesystem::path p(path);
    const std::string pattern = p.filename().string();
    if (pattern.find('*') == std::string::npos) return std::filesystem::exists(p, ec);
    for (const auto& e : std::filesystem::directory_iterator(p.parent_path(), ec)) {
      if (::fnmatch(pattern.c_str(), e.path().filename().c_str(), 0) == 0 &&
          e.is_regular_file(ec) && e.file_size(ec) > 0) {
        return true;
      }
    }
    return false;
  }

  bool WaitForFile(const std::string& path) {
    for (int i = 0; i < 3000; ++i) {
      if (FileThere(path)) return !stopping;
      if (!SleepUnlessStopping(10)) return false;
    }
    return false;
  }

  void Send(Reply reply, httplib::Response& res) {
    if (!reply.wait_for_file.empty() && !WaitForFile(reply.wait_for_file)) {
      // Not a status codex retries: the script's premise failed.
      res.status = 400;
      res.set_content("{\"error\": {\"message\": \"scripted server: " + reply.wait_for_file +
                          " did not appear within 30 s\"}}",
                      "application/json");
      return;
    }
    if (!SleepUnlessStopping(reply.header_delay_ms)) {
      res.status = 503;
      return;
    }
    res.status = reply.status;
    for (const auto& [k, v] : reply.headers) res.set_header(k, v);
    if (!reply.streaming) {
      res.set_content(reply.body, reply.content_type);
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    auto plan = std::make_shared<Reply>(std::move(reply));
    res.set_chunked_content_provider(
        plan->content_type,
        [this, plan](size_t /*offset*/, httplib::DataSink& sink) { return StreamTo(*plan, sink); });
  }

  // Writes the whole stream in one provider call. Returning false makes
  // httplib close the connection without the final chunk: a dropped stream.
  bool StreamTo(const Reply& plan, httplib::DataSink& sink) {
    if (!SleepUnlessStopping(plan.delay_ms)) return false;
    for (size_t i = 0; i < plan.chunks.size(); ++i) {
      int64_t sent = static_cast<int64_t>(i);
      if (plan.stop_after >= 0 && sent >= plan.stop_after) break;
      if (i > 0 && !SleepUnlessStopping(plan.event_delay_ms)) return false;
      if (plan.pause_after >= 0 && sent == plan.pause_after &&
          !SleepUnlessStopping(plan.pause_ms)) {
        return false;
      }
      if (!sink.is_writable()) return false;
      const std::string& chunk = plan.chunks[i];
      if (!sink.write(chunk.data(), chunk.size())) return false;
    }
    if (plan.stop_after >= 0 && static_cast<size_t>(plan.stop_after) < plan.chunks.size() &&
        plan.stop_mode == Reply::StopMode::kDrop) {
      return false;
    }
    sink.done();
    return true;
  }
};

ScriptedServer::ScriptedServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ScriptedServer::~ScriptedServer() { Stop(); }

Result<std::unique_ptr<ScriptedServer>> ScriptedServer::Start(std::string_view script_json,
                                                              const ServerOptions& options) {
  ASSIGN_OR_RETURN(Script script, Script::Parse(script_json));
  return Start(std::move(script), options);
}

Result<std::unique_ptr<ScriptedServer>> ScriptedServer::Start(Script script,
                                                              const ServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->script = std::move(script);
  impl->options = options;
  if (!options.record_path.empty()) {
    impl->record_file.open(options.record_path, std::ios::app | std::ios::binary);
    if (!impl->record_file) {
      return NotFoundError("cannot open record file " + options.record_path +
                           " for appending; check that its directory exists");
    }
  }
  Impl* p = impl.get();
  httplib::Server& http = impl->http;
  http.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  // One request per connection ("Connection: close"): an idle pooled
  // connection would delay Stop() by httplib's keep-alive timeout, and a
  // client could race the server closing it.
  // ServerOptions::keep_alive_max_count > 1 allows reuse (for keep-alive
  // tests), with a short idle timeout so Stop() stays quick.
  http.set_keep_alive_max_count(std::max<size_t>(1, options.keep_alive_max_count));
  if (options.keep_alive_max_count > 1) http.set_keep_alive_timeout(1);
  http.set_tcp_nodelay(true);
  // Routes are tried in order; full-match regexes, so any base_url prefix works.
  http.Post(R"(.*/responses/compact)", [p](const httplib::Request& req, httplib::Response& res) {
    p->Handle(Impl::Endpoint::kCompact, req, res);
  });
  http.Post(R"(.*/responses)", [p](const httplib::Request& req, httplib::Response& res) {
    p->Handle(Impl::Endpoint::kResponses, req, res);
  });
  auto unknown = [p](const httplib::Request& req, httplib::Response& res) {
    p->Handle(Impl::Endpoint::kUnknown, req, res);
  };
  http.Post(".*", unknown);
  http.Get(".*", unknown);
  http.Put(".*", unknown);
  http.Delete(".*", unknown);

  if (options.port == 0) {
    impl->port = http.bind_to_any_port("127.0.0.1");
    if (impl->port <= 0) return UnavailableError("cannot bind 127.0.0.1 on any port");
  } else {
    if (options.port < 0 || options.port > 65535) {
      return InvalidArgumentError("port " + std::to_string(options.port) +
                                  " is out of range; use 1..65535 or 0 for any free port");
    }
    if (!http.bind_to_port("127.0.0.1", options.port)) {
      return UnavailableError("cannot bind 127.0.0.1:" + std::to_string(options.port) +
                              " (in use?); pick another port or 0 for any free port");
    }
    impl->port = options.port;
  }
  // The socket is bound and listening, so connections queue in the backlog
  // until the thread starts accepting: no readiness race for callers.
  impl->thread = std::thread([p] { p->http.listen_after_bind(); });
  // httplib's stop() does nothing until the listening loop has started
  // (is_running): a test that stops the server at once would then wait for
  // the thread forever. Start returns once the loop runs.
  for (int i = 0; i < 10'000 && !impl->http.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::unique_ptr<ScriptedServer>(new ScriptedServer(std::move(impl)));
}

void ScriptedServer::Stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->stop_cv.notify_all();
  impl_->http.stop();
  impl_->thread.join();
}

int ScriptedServer::port() const { return impl_->port; }

std::string ScriptedServer::base_url() const {
  return "http://127.0.0.1:" + std::to_string(impl_->port) + "/v1";
}

std::vector<RecordedRequest> ScriptedServer::requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->records;
}

std::vector<RecordedRequest> ScriptedServer::requests_to(std::string_view suffix) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<RecordedRequest> out;
  for (const auto& r : impl_->records) {
    if (EndsWith(r.path, suffix)) out.push_back(r);
  }
  return out;
}

uint64_t ScriptedServer::responses_served() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->responses_served;
}

uint64_t ScriptedServer::compactions_served() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->compactions_served;
}

}  // namespace codex::testing
