// Tests of the scripted Responses server over real loopback HTTP
// (httplib::Client), and of its standalone executable.
#include "tests/scripted_server/scripted_server.h"

#include <httplib.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "tests/e2e_support.h"
#include "tests/scripted_server/render.h"

namespace codex::testing {
namespace {

std::unique_ptr<ScriptedServer> StartOrDie(std::string_view script,
                                           const ServerOptions& options = {}) {
  auto server = ScriptedServer::Start(script, options);
  INFO(server.status().ToString());
  REQUIRE(server.ok());
  return std::move(*server);
}

Json Request(Json input) {
  return {{"model", "gpt-test"},
          {"instructions", "be brief"},
          {"input", std::move(input)},
          {"tools", Json::array()},
          {"tool_choice", "auto"},
          {"parallel_tool_calls", false},
          {"store", false},
          {"stream", true},
          {"include", Json::array({"reasoning.encrypted_content"})}};
}

Json UserMessage(const std::string& text) {
  return {{"type", "message"},
          {"role", "user"},
          {"content", Json::array({{{"type", "input_text"}, {"text", text}}})}};
}

Json OutputFor(const Json& call, const std::string& output) {
  std::string type =
      call["type"] == "custom_tool_call" ? "custom_tool_call_output" : "function_call_output";
  return {{"type", type}, {"call_id", call["call_id"]}, {"output", output}};
}

// An item as a client resends it: without the server's "id" and "status".
Json Resend(Json item) {
  item.erase("id");
  item.erase("status");
  return item;
}

struct HttpReply {
  bool transport_ok = false;  // the response was read to its end
  int status = 0;
  std::string body;
  httplib::Headers headers;
};

// POSTs and collects the body chunk by chunk, so a stream cut in the middle
// still yields what arrived before the cut.
HttpReply PostRaw(int port, const std::string& path, const std::string& body,
                  int read_timeout_s = 10, httplib::Headers headers = {}) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(read_timeout_s, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.headers = std::move(headers);
  req.headers.emplace("Content-Type", "application/json");
  req.body = body;
  HttpReply reply;
  req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
    reply.body.append(data, len);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  reply.transport_ok = client.send(req, res, error);
  reply.status = res.status;
  reply.headers = res.headers;
  return reply;
}

HttpReply Post(int port, const Json& body, const std::string& path = "/v1/responses") {
  return PostRaw(port, path, body.dump());
}

// Parses SSE text into the JSON of each event, checking the framing on the way.
std::vector<Json> ParseSse(const std::string& text) {
  std::vector<Json> events;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find("\n\n", pos);
    REQUIRE(end != std::string::npos);
    std::string block = text.substr(pos, end - pos);
    pos = end + 2;
    REQUIRE(block.rfind("event: ", 0) == 0);
    size_t nl = block.find('\n');
    REQUIRE(nl != std::string::npos);
    std::string type = block.substr(7, nl - 7);
    REQUIRE(block.substr(nl + 1, 6) == "data: ");
    Json data = Json::parse(block.substr(nl + 7));
    CHECK(data["type"] == type);
    events.push_back(std::move(data));
  }
  return events;
}

std::vector<Json> Stream(int port, const Json& body, const std::string& path = "/v1/responses") {
  HttpReply reply = Post(port, body, path);
  INFO(reply.body);
  REQUIRE(reply.transport_ok);
  REQUIRE(reply.status == 200);
  return ParseSse(reply.body);
}

std::vector<Json> DoneItems(const std::vector<Json>& events) {
  std::vector<Json> items;
  for (const auto& e : events) {
    if (e["type"] == "response.output_item.done") items.push_back(e["item"]);
  }
  return items;
}

std::vector<std::string> Types(const std::vector<Json>& events) {
  std::vector<std::string> types;
  for (const auto& e : events) types.push_back(e["type"].get<std::string>());
  return types;
}

Json ErrorOf(const HttpReply& reply) {
  INFO(reply.body);
  Json body = Json::parse(reply.body);
  REQUIRE(body.contains("error"));
  CHECK(body["error"]["type"] == "invalid_request_error");
  CHECK(body["error"]["message"].is_string());
  return body["error"];
}

// A client turn: resends the transcript plus the done items of the answer.
struct Transcript {
  Json input = Json::array({UserMessage("hello")});
  void Add(const std::vector<Json>& items) {
    for (const auto& item : items) input.push_back(Resend(item));
  }
};

}  // namespace

TEST_CASE("streams have the framing and event sequence of the real API") {
  auto server = StartOrDie(R"({"responses": [
    {"output": [{"reasoning": "Planning the command", "encrypted_content": "gAAAAABenc-1"},
                {"shell": ["bash", "-lc", "echo hi"], "timeout_ms": 10000}],
     "usage": {"input_tokens": 100, "cached_tokens": 40, "output_tokens": 20,
               "reasoning_tokens": 8}}
  ]})");
  auto events = Stream(server->port(), Request(Json::array({UserMessage("hi")})));
  auto types = Types(events);
  REQUIRE(types.size() >= 6);
  CHECK(types.front() == "response.created");
  CHECK(types[1] == "response.in_progress");
  CHECK(types.back() == "response.completed");
  for (size_t i = 0; i < events.size(); ++i) CHECK(events[i]["sequence_number"] == i);

  auto items = DoneItems(events);
  REQUIRE(items.size() == 2);
  CHECK(items[0]["type"] == "reasoning");
  CHECK(items[0]["id"].get<std::string>().rfind("rs_", 0) == 0);
  CHECK(items[0]["encrypted_content"] == "gAAAAABenc-1");
  CHECK(items[0]["summary"][0]["text"] == "Planning the command");
  CHECK(items[1]["type"] == "function_call");
  CHECK(items[1]["id"].get<std::string>().rfind("fc_", 0) == 0);
  CHECK(items[1]["name"] == "shell");
  Json args = Json::parse(items[1]["arguments"].get<std::string>());
  CHECK(args["command"] == Json::array({"bash", "-lc", "echo hi"}));
  CHECK(args["timeout_ms"] == 10000);

  // Every item is announced by .added before its .done, at the same output_index.
  std::string arg_deltas;
  for (const auto& e : events) {
    if (e["type"] == "response.function_call_arguments.delta") arg_deltas += e["delta"];
  }
  CHECK(arg_deltas == items[1]["arguments"]);
  int added = 0;
  for (const auto& e : events) {
    if (e["type"] == "response.output_item.added") {
      CHECK(e["output_index"] == added);
      ++added;
    }
  }
  CHECK(added == 2);

  const Json& completed = events.back()["response"];
  CHECK(completed["status"] == "completed");
  CHECK(completed["output"].size() == 2);
  CHECK(completed["usage"] == Json::parse(R"({"input_tokens":100,
      "input_tokens_details":{"cached_tokens":40},"output_tokens":20,
      "output_tokens_details":{"reasoning_tokens":8},"total_tokens":120})"));
  CHECK(events.front()["response"]["id"] == completed["id"]);
}

TEST_CASE("message text arrives as several output_text deltas") {
  auto server = StartOrDie(R"(["The final result is 570, computed step by step."])");
  auto events = Stream(server->port(), Request(Json::array({UserMessage("hi")})));
  std::string text;
  int deltas = 0;
  for (const auto& e : events) {
    if (e["type"] == "response.output_text.delta") {
      text += e["delta"];
      ++deltas;
    }
  }
  CHECK(deltas > 1);
  CHECK(text == "The final result is 570, computed step by step.");
  auto items = DoneItems(events);
  REQUIRE(items.size() == 1);
  CHECK(items[0]["id"].get<std::string>().rfind("msg_", 0) == 0);
  CHECK(items[0]["role"] == "assistant");
  CHECK(items[0]["content"][0]["type"] == "output_text");
  CHECK(items[0]["content"][0]["text"] == text);
}

TEST_CASE("any path ending in /responses is served") {
  auto server = StartOrDie(R"({"default": "ok"})");
  for (const char* path : {"/v1/responses", "/responses", "/api/openai/v1/responses"}) {
    auto events = Stream(server->port(), Request(Json::array({UserMessage("hi")})), path);
    CHECK(events.back()["type"] == "response.completed");
  }
  HttpReply other = PostRaw(server->port(), "/v1/chat/completions", "{}");
  CHECK(other.status == 404);
  CHECK(server->requests().size() == 4);
}

TEST_CASE("entries are handed out in order, repeat substitutes {{n}}, default follows") {
  auto server = StartOrDie(R"js({
    "responses": [
      "first",
      {"repeat": 3, "entries": [
        {"output": [{"function_call": "shell", "call_id": "call_{{n}}",
                     "arguments": {"command": ["echo", "step {{n}}"]}}]}
      ]},
      "after the loop"
    ],
    "default": {"message": "default answer {{n}} (request {{request}})"}
  })js");
  CHECK(DoneItems(Stream(server->port(), Request("a")))[0]["content"][0]["text"] == "first");
  Transcript t;
  for (int n = 1; n <= 3; ++n) {
    auto items = DoneItems(Stream(server->port(), Request(t.input)));
    REQUIRE(items.size() == 1);
    CHECK(items[0]["call_id"] == "call_" + std::to_string(n));
    CHECK(Json::parse(items[0]["arguments"].get<std::string>())["command"][1] ==
          "step " + std::to_string(n));
    t.Add(items);
    t.input.push_back(OutputFor(items[0], "ok"));
  }
  auto text = [&](const Json& body) {
    return DoneItems(Stream(server->port(), body))[0]["content"][0]["text"];
  };
  CHECK(text(Request(t.input)) == "after the loop");
  CHECK(text(Request("x")) == "default answer 1 (request 6)");
  CHECK(text(Request("y")) == "default answer 2 (request 7)");
  CHECK(server->responses_served() == 7);
}

TEST_CASE("a script without default answers 400 script_exhausted when it runs out") {
  auto server = StartOrDie(R"(["only one"])");
  Stream(server->port(), Request("hi"));
  HttpReply reply = Post(server->port(), Request("again"));
  CHECK(reply.status == 400);
  CHECK(ErrorOf(reply)["code"] == "script_exhausted");
}

TEST_CASE("a 150-call tool loop driven like a client passes every invariant") {
  auto server = StartOrDie(R"({"responses": [
    {"repeat": 150, "entries": [
      {"output": [{"reasoning": "step {{n}}"},
                  {"shell": ["bash", "-lc", "echo {{n}}"]}]}
    ]},
    "finished"
  ]})");
  Transcript t;
  for (int i = 0; i < 150; ++i) {
    HttpReply reply = Post(server->port(), Request(t.input));
    INFO("request " << i << ": " << reply.body.substr(0, 300));
    REQUIRE(reply.status == 200);
    auto items = DoneItems(ParseSse(reply.body));
    REQUIRE(items.size() == 2);
    t.Add(items);
    t.input.push_back(OutputFor(items[1], std::to_string(i + 1) + "\n"));
  }
  auto last = DoneItems(Stream(server->port(), Request(t.input)));
  CHECK(last[0]["content"][0]["text"] == "finished");
  auto requests = server->requests_to("/responses");
  REQUIRE(requests.size() == 151);
  CHECK(requests.back().InputItems().size() == 1 + 150 * 3);
  for (const auto& r : requests) CHECK(r.status == 200);
}

TEST_CASE("requests breaking the stateless invariants get 400 with a clear code") {
  auto server = StartOrDie(R"({"responses": [
    {"output": [{"reasoning": "think"}, {"function_call": "shell", "arguments": {"command": ["ls"]}},
                {"custom_tool_call": "apply_patch", "input": "*** Begin Patch"}]}
  ], "default": "fine"})");
  auto first_events = Stream(server->port(), Request(Json::array({UserMessage("go")})));
  auto items = DoneItems(first_events);
  REQUIRE(items.size() == 3);
  const Json reasoning = Resend(items[0]);
  const Json call = Resend(items[1]);
  const Json custom = Resend(items[2]);
  const Json good = Json::array({UserMessage("go"), reasoning, call, OutputFor(call, "out"), custom,
                                 OutputFor(custom, "done")});

  auto expect_rejected = [&](Json body, const std::string& code) {
    HttpReply reply = Post(server->port(), body);
    INFO("expected " << code << ", got " << reply.status << " " << reply.body);
    REQUIRE(reply.status == 400);
    CHECK(ErrorOf(reply)["code"] == code);
  };

  SECTION("the well-formed transcript is accepted") {
    auto answer = Stream(server->port(), Request(good));
    CHECK(answer.back()["type"] == "response.completed");
  }
  SECTION("store must be false") {
    Json body = Request(good);
    body["store"] = true;
    expect_rejected(body, "store_must_be_false");
    body.erase("store");
    expect_rejected(body, "store_must_be_false");
  }
  SECTION("previous_response_id is refused") {
    Json body = Request(good);
    body["previous_response_id"] = "resp_1";
    expect_rejected(body, "previous_response_id_not_allowed");
  }
  SECTION("a call without its output") {
    Json input = good;
    input.erase(3);
    expect_rejected(Request(input), "missing_call_output");
  }
  SECTION("an output without a call") {
    Json input = good;
    input.push_back(
        {{"type", "function_call_output"}, {"call_id", "call_nobody"}, {"output", "x"}});
    expect_rejected(Request(input), "orphan_call_output");
  }
  SECTION("an output before its call") {
    Json input = Json::array({UserMessage("go"), reasoning, OutputFor(call, "out"), call, custom,
                              OutputFor(custom, "done")});
    expect_rejected(Request(input), "orphan_call_output");
  }
  SECTION("two outputs for one call") {
    Json input = good;
    input.push_back(OutputFor(call, "again"));
    expect_rejected(Request(input), "duplicate_call_output");
  }
  SECTION("an output of the wrong kind") {
    Json input = good;
    input[5]["type"] = "function_call_output";
    expect_rejected(Request(input), "mismatched_call_output");
  }
  SECTION("encrypted_content changed by one byte") {
    Json input = good;
    std::string content = input[1]["encrypted_content"];
    content.back() = content.back() == 'A' ? 'B' : 'A';
    input[1]["encrypted_content"] = content;
    expect_rejected(Request(input), "unknown_encrypted_content");
  }
  SECTION("encrypted_content taken from output_item.added instead of .done") {
    Json added_reasoning;
    for (const auto& e : first_events) {
      if (e["type"] == "response.output_item.added" && e["item"]["type"] == "reasoning") {
        added_reasoning = e["item"];
      }
    }
    REQUIRE(added_reasoning.contains("encrypted_content"));
    Json input = good;
    input[1] = Resend(added_reasoning);
    input[1]["summary"] = reasoning["summary"];
    expect_rejected(Request(input), "unknown_encrypted_content");
  }
  SECTION("reasoning without encrypted_content") {
    Json input = good;
    input[1].erase("encrypted_content");
    expect_rejected(Request(input), "unknown_encrypted_content");
  }
  SECTION("server item ids must not be resent") {
    Json input = good;
    input[2]["id"] = items[1]["id"];
    expect_rejected(Request(input), "server_item_id_resent");
  }
  SECTION("a rejected request does not use up a script entry") {
    Json body = Request(good);
    body["store"] = true;
    CHECK(Post(server->port(), body).status == 400);
    CHECK(server->responses_served() == 1);
    auto recorded = server->requests();
    CHECK(recorded.back().status == 400);
    CHECK(recorded.back().outcome == "error:store_must_be_false");
    CHECK_FALSE(recorded.back().error.empty());
  }
  SECTION("non-JSON and model-less bodies") {
    HttpReply reply = PostRaw(server->port(), "/v1/responses", "not json");
    CHECK(reply.status == 400);
    CHECK(ErrorOf(reply)["code"] == "invalid_json");
    Json body = Request(good);
    body.erase("model");
    expect_rejected(body, "missing_required_parameter");
  }
}

TEST_CASE("allow_item_ids accepts resent server ids") {
  auto server = StartOrDie(R"({"allow_item_ids": true, "default": "ok"})");
  auto items = DoneItems(Stream(server->port(), Request("hi")));
  Json input = Json::array({UserMessage("hi"), items[0]});  // with its id
  CHECK(Stream(server->port(), Request(input)).back()["type"] == "response.completed");
}

TEST_CASE("max_input_tokens answers context_length_exceeded without using an entry") {
  auto server = StartOrDie(R"({"max_input_tokens": 200, "responses": ["short answer"]})");
  Json big = Request(Json::array({UserMessage(std::string(2000, 'x'))}));
  auto events = Stream(server->port(), big);
  REQUIRE(events.back()["type"] == "response.failed");
  CHECK(events.back()["response"]["error"]["code"] == "context_length_exceeded");
  auto ok = DoneItems(Stream(server->port(), Request("hi")));
  CHECK(ok[0]["content"][0]["text"] == "short answer");
}

TEST_CASE("HTTP errors carry status, JSON body and Retry-After") {
  auto server = StartOrDie(R"([
    {"http_error": {"status": 429, "retry_after": 2}},
    {"http_error": {"status": 500, "body": {"error": {"message": "boom", "code": "x"}}}},
    {"http_error": 503}
  ])");
  HttpReply r1 = Post(server->port(), Request("a"));
  CHECK(r1.status == 429);
  auto it = r1.headers.find("Retry-After");
  REQUIRE(it != r1.headers.end());
  CHECK(it->second == "2");
  CHECK(Json::parse(r1.body)["error"]["code"] == "rate_limit_exceeded");
  HttpReply r2 = Post(server->port(), Request("b"));
  CHECK(r2.status == 500);
  CHECK(Json::parse(r2.body)["error"]["message"] == "boom");
  HttpReply r3 = Post(server->port(), Request("c"));
  CHECK(r3.status == 503);
  CHECK(Json::parse(r3.body)["error"]["type"] == "server_error");
}

TEST_CASE("response.failed and response.incomplete") {
  auto server = StartOrDie(R"([
    {"failed": {"code": "rate_limit_exceeded", "error_event": true}},
    {"failed": {"code": "server_error", "message": "try later"}},
    {"message": "Once upon a time", "incomplete": "max_output_tokens"}
  ])");
  auto e1 = Stream(server->port(), Request("a"));
  REQUIRE(e1.size() >= 2);
  CHECK(e1[e1.size() - 2]["type"] == "error");
  CHECK(e1.back()["type"] == "response.failed");
  CHECK(e1.back()["response"]["error"]["code"] == "rate_limit_exceeded");
  CHECK(e1.back()["response"]["error"]["message"].get<std::string>().find("try again in") !=
        std::string::npos);
  auto e2 = Stream(server->port(), Request("b"));
  CHECK(e2.back()["response"]["error"] ==
        Json({{"code", "server_error"}, {"message", "try later"}}));
  auto e3 = Stream(server->port(), Request("c"));
  CHECK(e3.back()["type"] == "response.incomplete");
  CHECK(e3.back()["response"]["incomplete_details"]["reason"] == "max_output_tokens");
  CHECK(DoneItems(e3)[0]["status"] == "incomplete");
}

TEST_CASE("drop_after cuts the connection; end_after ends cleanly without completed") {
  auto server = StartOrDie(R"([
    {"message": "this stream is cut", "drop_after": 3},
    {"message": "this stream ends early", "end_after": 3}
  ])");
  HttpReply dropped = Post(server->port(), Request("a"));
  CHECK_FALSE(dropped.transport_ok);
  auto events = ParseSse(dropped.body);
  CHECK(events.size() == 3);
  HttpReply ended = Post(server->port(), Request("b"));
  CHECK(ended.transport_ok);
  auto ended_events = ParseSse(ended.body);
  CHECK(ended_events.size() == 3);
  CHECK(ended_events.back()["type"] != "response.completed");
}

TEST_CASE("a pause mid-stream trips a client's read timeout after the earlier events") {
  auto server = StartOrDie(R"([{"message": "slow", "pause_after": 2, "pause_ms": 30000}])");
  HttpReply reply = PostRaw(server->port(), "/v1/responses", Request("a").dump(),
                            /*read_timeout_s=*/1);
  CHECK_FALSE(reply.transport_ok);
  auto events = ParseSse(reply.body);
  REQUIRE(events.size() == 2);
  CHECK(events[0]["type"] == "response.created");
  // Stopping the server must cut the paused stream rather than wait it out.
  server->Stop();
}

TEST_CASE("a client hanging up mid-stream leaves the server serving") {
  auto server = StartOrDie(R"([
    {"message": "a long answer that the client will not wait for", "event_delay_ms": 50},
    "the next answer"
  ])");
  {
    httplib::Client client("127.0.0.1", server->port());
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/responses";
    req.body = Request("a").dump();
    req.headers.emplace("Content-Type", "application/json");
    std::string received;
    req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
      received.append(data, len);
      return false;  // hang up after the first chunk
    };
    httplib::Response res;
    httplib::Error error = httplib::Error::Success;
    CHECK_FALSE(client.send(req, res, error));
    CHECK(received.rfind("event: response.created", 0) == 0);
  }
  auto events = Stream(server->port(), Request("b"));
  CHECK(DoneItems(events)[0]["content"][0]["text"] == "the next answer");
}

TEST_CASE("raw entries are sent verbatim") {
  auto server = StartOrDie(R"([{"raw": [
    "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r{{request}}\"}}\n\n",
    "data: not json\n\n"
  ]}])");
  HttpReply reply = Post(server->port(), Request("a"));
  CHECK(
      reply.body ==
      "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r1\"}}"
      "\n\ndata: not json\n\n");
}

TEST_CASE("usage auto grows with the request") {
  auto server = StartOrDie(R"({"default": {"message": "ok", "usage": "auto"}})");
  auto usage = [&](size_t chars) {
    auto events =
        Stream(server->port(), Request(Json::array({UserMessage(std::string(chars, 'a'))})));
    return events.back()["response"]["usage"];
  };
  Json small = usage(100);
  Json large = usage(4000);
  CHECK(large["input_tokens"].get<int64_t>() > small["input_tokens"].get<int64_t>() + 900);
  CHECK(large["total_tokens"] ==
        large["input_tokens"].get<int64_t>() + large["output_tokens"].get<int64_t>());
  auto requests = server->requests();
  CHECK(large["input_tokens"] == EstimateTokens(requests.back().body_bytes));
}

TEST_CASE("compact: default keeps user messages and issues a compaction item") {
  auto server = StartOrDie(R"({"default": "ok"})");
  auto items = DoneItems(Stream(server->port(), Request(Json::array({UserMessage("first")}))));
  Json input = Json::array({UserMessage("first"), Resend(items[0]), UserMessage("second")});
  Json compact_body = {{"model", "gpt-test"}, {"input", input}, {"instructions", "x"}};
  HttpReply reply = Post(server->port(), compact_body, "/v1/responses/compact");
  REQUIRE(reply.status == 200);
  Json result = Json::parse(reply.body);
  CHECK(result["object"] == "response.compaction");
  REQUIRE(result["output"].size() == 3);
  CHECK(result["output"][0] == UserMessage("first"));
  CHECK(result["output"][1] == UserMessage("second"));
  Json compaction = result["output"][2];
  CHECK(compaction["type"] == "compaction");
  CHECK(compaction["encrypted_content"].is_string());
  CHECK(result["usage"]["input_tokens"].is_number_integer());
  CHECK(server->compactions_served() == 1);

  // The compacted history is accepted when resent exactly...
  Json next = result["output"];
  next[2] = Resend(compaction);
  next.push_back(UserMessage("third"));
  CHECK(Stream(server->port(), Request(next)).back()["type"] == "response.completed");
  // ...and refused when the compaction blob was altered.
  next[2]["encrypted_content"] = "gAAAAABforged";
  HttpReply forged = Post(server->port(), Request(next));
  CHECK(forged.status == 400);
  CHECK(ErrorOf(forged)["code"] == "unknown_encrypted_content");
  CHECK(server->requests_to("/responses/compact").size() == 1);
}

TEST_CASE("compact: scripted entries, invariants and the context window") {
  auto server = StartOrDie(R"({
    "max_input_tokens": 300,
    "compact": [
      {"output": [{"user": "summary of earlier work"}, {"compaction": "digest {{n}}"}]},
      {"keep_user_messages": true, "output": [{"compaction": "second"}]},
      {"http_error": 500}
    ]
  })");
  Json body = {{"model", "gpt-test"}, {"input", Json::array({UserMessage("a")})}};
  Json r1 = Json::parse(Post(server->port(), body, "/v1/responses/compact").body);
  REQUIRE(r1["output"].size() == 2);
  CHECK(r1["output"][0] == UserMessage("summary of earlier work"));
  CHECK(r1["output"][1]["type"] == "compaction");
  Json r2 = Json::parse(Post(server->port(), body, "/v1/responses/compact").body);
  REQUIRE(r2["output"].size() == 2);
  CHECK(r2["output"][0] == UserMessage("a"));
  CHECK(Post(server->port(), body, "/v1/responses/compact").status == 500);
  // The list is used up: the built-in default follows.
  Json r4 = Json::parse(Post(server->port(), body, "/v1/responses/compact").body);
  CHECK(r4["output"].back()["type"] == "compaction");

  Json bad = body;
  bad["previous_response_id"] = "resp_1";
  HttpReply rejected = Post(server->port(), bad, "/v1/responses/compact");
  CHECK(rejected.status == 400);
  CHECK(ErrorOf(rejected)["code"] == "previous_response_id_not_allowed");

  Json huge = {{"model", "gpt-test"},
               {"input", Json::array({UserMessage(std::string(5000, 'z'))})}};
  HttpReply overflow = Post(server->port(), huge, "/v1/responses/compact");
  CHECK(overflow.status == 400);
  CHECK(ErrorOf(overflow)["code"] == "context_length_exceeded");
}

TEST_CASE("requests are recorded with lowercased headers and a redacted key") {
  auto dir =
      std::filesystem::temp_directory_path() / ("scripted-record-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto record = dir / "requests.jsonl";
  std::filesystem::remove(record);
  ServerOptions options;
  options.record_path = record.string();
  auto server = StartOrDie(R"({"default": "ok"})", options);
  HttpReply reply = PostRaw(server->port(), "/v1/responses", Request("hi").dump(), 10,
                            {{"Authorization", "Bearer sk-secret"}, {"X-Trace", "t1"}});
  REQUIRE(reply.status == 200);
  auto requests = server->requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].path == "/v1/responses");
  CHECK(requests[0].headers.at("authorization") == "<redacted>");
  CHECK(requests[0].headers.at("x-trace") == "t1");
  CHECK(requests[0].headers.count("REMOTE_ADDR") == 0);
  CHECK(requests[0].body["input"] == "hi");

  auto from_file = ReadRecordFile(record);
  REQUIRE(from_file.ok());
  REQUIRE(from_file->size() == 1);
  CHECK((*from_file)[0].headers.at("authorization") == "<redacted>");
  CHECK((*from_file)[0].body == requests[0].body);
  std::ifstream in(record);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("sk-secret") == std::string::npos);
  server.reset();
  std::filesystem::remove_all(dir);
}

TEST_CASE("concurrent clients each get a distinct entry") {
  auto server = StartOrDie(R"({"responses": [{"repeat": 40, "entry": "answer {{n}}"}]})");
  std::mutex mu;
  std::multiset<std::string> answers;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        HttpReply reply = Post(server->port(), Request("hi"));
        std::string text = "failed: " + reply.body;
        if (reply.status == 200) {
          for (const auto& e : ParseSse(reply.body)) {
            if (e["type"] == "response.output_item.done") text = e["item"]["content"][0]["text"];
          }
        }
        std::lock_guard<std::mutex> lock(mu);
        answers.insert(text);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::multiset<std::string> expected;
  for (int n = 1; n <= 40; ++n) expected.insert("answer " + std::to_string(n));
  CHECK(answers == expected);
}

TEST_CASE("script errors name the offending path") {
  auto error = [](std::string_view script) {
    auto s = Script::Parse(script);
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == StatusCode::kInvalidArgument);
    return s.status().message();
  };
  CHECK_THAT(error(R"([{"mesage": "typo"}])"),
             Catch::Contains("responses[0]") && Catch::Contains("mesage"));
  CHECK_THAT(error(R"({"responses": [{"output": [{"bogus": 1}]}]})"),
             Catch::Contains("responses[0].output[0]"));
  CHECK_THAT(error(R"([{"repeat": 2}])"), Catch::Contains("entries"));
  CHECK_THAT(error(R"([{"http_error": 200}])"), Catch::Contains("400..599"));
  CHECK_THAT(error("[1,"), Catch::Contains("not valid JSON"));
  CHECK_THAT(error(R"({"compact": [{}]})"), Catch::Contains("compact[0]"));
  CHECK(Script::Parse(R"({"responses": [], "_note": "comments are allowed"})").ok());
}

TEST_CASE("repeat expands lazily and nests") {
  auto script = Script::Parse(R"([{"repeat": 1000000, "entries": [
    "a{{n}}", {"repeat": 2, "entries": ["b{{n}}"]}]}])");
  REQUIRE(script.ok());
  CHECK(script->response_count() == 3000000);
  auto ref = script->Response(2999999);
  REQUIRE(ref);
  CHECK(Substitute(*ref->entry, {ref->n, 1})["message"] == "b2");
  ref = script->Response(2999997);
  REQUIRE(ref);
  CHECK(Substitute(*ref->entry, {ref->n, 1})["message"] == "a1000000");
  CHECK_FALSE(script->Response(3000000));
}

TEST_CASE("SplitIntoDeltas splits at words and keeps every byte") {
  auto pieces = SplitIntoDeltas("The final result is 570.", 4);
  CHECK(pieces.size() > 1);
  std::string joined;
  for (const auto& p : pieces) joined += p;
  CHECK(joined == "The final result is 570.");
  std::string utf8 = "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";  // no spaces: split at characters
  joined.clear();
  for (const auto& p : SplitIntoDeltas(utf8, 3)) {
    CHECK((static_cast<unsigned char>(p[0]) & 0xC0) != 0x80);
    joined += p;
  }
  CHECK(joined == utf8);
  CHECK(SplitIntoDeltas("", 4).empty());
}

TEST_CASE("the executable prints its port, serves, records and stops on SIGTERM") {
  std::string binary = ScriptedServerBinaryPath();
  REQUIRE_FALSE(binary.empty());
  auto dir =
      std::filesystem::temp_directory_path() / ("scripted-exe-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto script = dir / "script.json";
  std::ofstream(script) << R"({"default": "from the executable"})";
  auto record = dir / "record.jsonl";

  ProcessOptions options;
  options.argv = {binary, "--script", script.string(), "--record", record.string()};
  auto child = ChildProcess::Spawn(options);
  REQUIRE(child.ok());
  auto line = (*child)->ReadStdoutLine(std::chrono::seconds(30));
  REQUIRE(line.ok());
  REQUIRE(line->rfind("listening on 127.0.0.1:", 0) == 0);
  int port = std::stoi(line->substr(std::string("listening on 127.0.0.1:").size()));
  auto events = Stream(port, Request("hi"));
  CHECK(DoneItems(events)[0]["content"][0]["text"] == "from the executable");

  REQUIRE((*child)->Signal(SIGTERM).ok());
  auto result = (*child)->Wait(std::chrono::seconds(30));
  REQUIRE(result.ok());
  CHECK_FALSE(result->timed_out);
  CHECK(result->exit_code == 0);
  auto recorded = ReadRecordFile(record);
  REQUIRE(recorded.ok());
  REQUIRE(recorded->size() == 1);
  CHECK((*recorded)[0].path == "/v1/responses");

  SECTION("bad input gets one error line and a non-zero exit") {
    ProcessOptions bad;
    bad.argv = {binary, "--port", "banana", "--script", script.string()};
    auto r = RunProcess(bad);
    REQUIRE(r.ok());
    CHECK(r->exit_code == 2);
    CHECK_THAT(r->err, Catch::StartsWith("error: --port"));
    bad.argv = {binary, "--script", (dir / "missing.json").string()};
    r = RunProcess(bad);
    REQUIRE(r.ok());
    CHECK(r->exit_code == 1);
    CHECK_THAT(r->err, Catch::Contains("missing.json"));
    std::ofstream(dir / "broken.json") << R"([{"output": 3}])";
    bad.argv = {binary, "--script", (dir / "broken.json").string()};
    r = RunProcess(bad);
    REQUIRE(r.ok());
    CHECK(r->exit_code == 1);
    CHECK_THAT(r->err, Catch::Contains("responses[0].output"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("every json block in the README is a valid script") {
  std::ifstream in(std::string(CODEX_SOURCE_DIR) + "/tests/scripted_server/README.md");
  REQUIRE(in);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int blocks = 0;
  for (size_t pos = text.find("```json\n"); pos != std::string::npos;
       pos = text.find("```json\n", pos)) {
    pos += 8;
    size_t end = text.find("```", pos);
    REQUIRE(end != std::string::npos);
    std::string block = text.substr(pos, end - pos);
    auto script = Script::Parse(block);
    INFO(block);
    INFO(script.status().message());
    CHECK(script.ok());
    ++blocks;
    pos = end + 3;
  }
  CHECK(blocks >= 4);
}

TEST_CASE("the demo script parses and drives a shell call then two answers") {
  auto script =
      Script::LoadFile(std::string(CODEX_SOURCE_DIR) + "/tests/scripted_server/scripts/demo.json");
  INFO(script.status().ToString());
  REQUIRE(script.ok());
  auto server = ScriptedServer::Start(std::move(*script));
  REQUIRE(server.ok());
  int port = (*server)->port();
  Transcript t;
  auto first = DoneItems(Stream(port, Request(t.input)));
  REQUIRE(first.size() == 2);
  CHECK(first[0]["type"] == "reasoning");
  CHECK(first[1]["name"] == "shell");
  Json args = Json::parse(first[1]["arguments"].get<std::string>());
  CHECK(args["command"][0] == "bash");
  t.Add(first);
  t.input.push_back(OutputFor(first[1], "hello from the sandbox\nLinux\n"));
  auto second = DoneItems(Stream(port, Request(t.input)));
  REQUIRE(second.size() >= 1);
  CHECK(second.back()["type"] == "message");
  t.Add(second);
  t.input.push_back(UserMessage("and now?"));
  auto third = DoneItems(Stream(port, Request(t.input)));
  CHECK(third.back()["type"] == "message");
}

}  // namespace codex::testing
