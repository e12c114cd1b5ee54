// Checks shared by the end-to-end tests that run the `codex` binary
// (exec_e2e_test, client_e2e_test, store_e2e_test): the stateless wire rules
// on recorded requests, call/output pairing, reading a session id from codex's
// output, and reading the SQLite database directly (read-only, the way a
// second process would see it). Header-only; include only from Catch2 tests.
#pragma once

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "storage/packed_text.h"
#include "tests/e2e_support.h"

namespace codex::testing::e2e {

// The request's `input` array, serialized compactly (key order as received).
inline std::string InputText(const RecordedRequest& request) { return request.InputItems().dump(); }

// True when `earlier`'s serialized input without its closing bracket is a
// byte prefix of `later`'s: the later request only appended items (or, for a
// retry, sent the same input again).
inline bool InputExtends(const RecordedRequest& earlier, const RecordedRequest& later) {
  std::string a = InputText(earlier);
  const std::string b = InputText(later);
  if (a == "[]") return true;
  a.pop_back();  // "]"
  return b.size() > a.size() && b.compare(0, a.size(), a) == 0 &&
         (b[a.size()] == ',' || b.size() == a.size() + 1);
}

inline bool IsCallType(const std::string& type) {
  return type == "function_call" || type == "custom_tool_call" || type == "local_shell_call";
}
inline bool IsOutputType(const std::string& type) {
  return type == "function_call_output" || type == "custom_tool_call_output";
}

// Every call in `input` has exactly one output after it and every output
// follows its call. Returns "" when so, else what is wrong.
inline std::string PairingProblem(const Json& input) {
  std::map<std::string, int> outputs;  // call_id -> outputs seen
  std::set<std::string> calls;
  for (const auto& item : input) {
    const std::string type = item.value("type", "message");
    if (IsCallType(type)) {
      const std::string id = item.value("call_id", "");
      if (!calls.insert(id).second) return "duplicate call " + id;
    } else if (IsOutputType(type)) {
      const std::string id = item.value("call_id", "");
      if (!calls.count(id)) return "output without a preceding call: " + id;
      if (++outputs[id] > 1) return "more than one output for " + id;
    }
  }
  for (const auto& id : calls) {
    if (!outputs.count(id)) return "call without an output: " + id;
  }
  return "";
}

// The output text of the function_call_output answering `call_id` ("" when absent).
inline std::string OutputFor(const Json& input, const std::string& call_id) {
  for (const auto& item : input) {
    if (IsOutputType(item.value("type", "")) && item.value("call_id", "") == call_id) {
      const auto& out = item["output"];
      return out.is_string() ? out.get<std::string>() : out.dump();
    }
  }
  return "";
}

// The stateless wire rules every /responses request of codex must keep.
inline void CheckWireRules(const RecordedRequest& r, const std::string& session_id) {
  INFO("request body: " << r.body.dump().substr(0, 2000));
  REQUIRE(r.body.is_object());
  CHECK(r.body.value("store", true) == false);
  CHECK(r.body.value("stream", false) == true);
  CHECK_FALSE(r.body.contains("previous_response_id"));
  CHECK(r.body.value("prompt_cache_key", "") == session_id);
  bool includes_encrypted = false;
  if (r.body.contains("include") && r.body["include"].is_array()) {
    for (const auto& v : r.body["include"]) {
      if (v == "reasoning.encrypted_content") includes_encrypted = true;
    }
  }
  CHECK(includes_encrypted);
  for (const auto& item : r.InputItems()) {
    // Ids the server issued (rs_, fc_, msg_, ...) are never resent.
    CHECK_FALSE(item.contains("id"));
  }
  CHECK(PairingProblem(r.InputItems()) == "");
}

// The session id from codex's stderr banner "session <id> · model ...".
inline std::string SessionIdFromBanner(const std::string& err) {
  const std::string key = "session ";
  for (size_t pos = 0; (pos = err.find(key, pos)) != std::string::npos; pos += key.size()) {
    if (pos != 0 && err[pos - 1] != '\n') continue;
    const size_t start = pos + key.size();
    const size_t end = err.find(' ', start);
    if (end == std::string::npos) break;
    return err.substr(start, end - start);
  }
  return "";
}

// The lines of `text` starting with "error:".
inline std::vector<std::string> ErrorLines(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    if (line.rfind("error:", 0) == 0) out.push_back(line);
    pos = nl + 1;
  }
  return out;
}

// Parses JSONL output (one object per line); lines that do not parse are
// returned as JSON strings so a test can see them.
inline std::vector<Json> JsonLines(const std::string& text) {
  std::vector<Json> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(pos, nl - pos);
    if (!line.empty()) {
      Json j = Json::parse(line, nullptr, false);
      out.push_back(j.is_discarded() ? Json(line) : j);
    }
    pos = nl + 1;
  }
  return out;
}

// A read-only connection to a codex database, for checks from the test
// process while (or after) codex runs.
class Db {
 public:
  enum class Access { kReadOnly, kReadWrite };

  explicit Db(const std::filesystem::path& path, Access access = Access::kReadOnly) {
    rc_ = sqlite3_open_v2(
        path.c_str(), &db_,
        access == Access::kReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE, nullptr);
    if (rc_ == SQLITE_OK) sqlite3_busy_timeout(db_, 10'000);
    // Bodies and payloads may be packed: checks read them as codex_text(body).
    if (rc_ == SQLITE_OK) codex::storage::RegisterPackedTextFunctions(db_);
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  bool ok() const { return rc_ == SQLITE_OK; }

  // Rows of `sql`, each column as text ("" for NULL). Empty on error, with
  // error() saying why.
  std::vector<std::vector<std::string>> Query(const std::string& sql) {
    std::vector<std::vector<std::string>> rows;
    error_.clear();
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      error_ = sqlite3_errmsg(db_);
      return rows;
    }
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const unsigned char* t = sqlite3_column_text(stmt, i);
        row.emplace_back(t ? reinterpret_cast<const char*>(t) : "");
      }
      rows.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) error_ = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    return rows;
  }

  // The first column of the first row, or "".
  std::string Scalar(const std::string& sql) {
    auto rows = Query(sql);
    return rows.empty() || rows[0].empty() ? "" : rows[0][0];
  }

  const std::string& error() const { return error_; }

 private:
  sqlite3* db_ = nullptr;
  int rc_ = SQLITE_ERROR;
  std::string error_;
};

// SQL for the chain of item ids from `session_id`'s head to the root
// (newest first) — the items the session's transcript walks.
inline std::string ChainSql(const std::string& session_id) {
  return "WITH RECURSIVE chain(id, parent_id) AS ("
         " SELECT i.id, i.parent_id FROM items i JOIN sessions s ON i.id = s.head_item_id"
         " WHERE s.id = '" +
         session_id +
         "' UNION ALL SELECT i.id, i.parent_id FROM items i JOIN chain c ON i.id = c.parent_id)"
         " SELECT id FROM chain";
}

// A scripted-server environment for one test; fails the test if it cannot start.
inline std::unique_ptr<CodexTestEnv> MakeEnv(std::string_view script,
                                             CodexTestEnvOptions options = {}) {
  auto env = CodexTestEnv::Create(script, std::move(options));
  INFO("script: " << script.substr(0, 2000));
  REQUIRE(env.ok());
  return std::move(*env);
}

// The same with `extra_config` appended to config.toml.
inline std::unique_ptr<CodexTestEnv> MakeEnv(std::string_view script, std::string extra_config) {
  CodexTestEnvOptions options;
  options.extra_config = std::move(extra_config);
  return MakeEnv(script, std::move(options));
}

// Runs `command` (e.g. env.CodexCommand(...) adjusted) to completion; fails
// the test if it could not run or timed out.
inline ProcessResult RunChecked(const ProcessOptions& command) {
  auto run = RunProcess(command);
  REQUIRE(run.ok());
  INFO("stdout: " << run->out.substr(0, 4000) << "\nstderr: " << run->err.substr(0, 4000));
  REQUIRE_FALSE(run->timed_out);
  return *run;
}

// Runs the codex binary to completion (with `stdin_text` on its stdin);
// fails the test if it could not run or timed out.
inline ProcessResult Run(CodexTestEnv& env, std::vector<std::string> args,
                         std::optional<std::string> stdin_text = std::nullopt) {
  auto run = env.RunCodex(std::move(args), std::move(stdin_text));
  REQUIRE(run.ok());
  INFO("stderr: " << run->err);
  REQUIRE_FALSE(run->timed_out);
  return *run;
}

// Run, and fails the test unless codex exited 0.
inline ProcessResult RunOk(CodexTestEnv& env, std::vector<std::string> args) {
  ProcessResult run = Run(env, std::move(args));
  INFO("stdout: " << run.out);
  INFO("stderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  return run;
}

// The output the model got for `call_id`, as seen in the last request.
inline std::string ModelOutput(CodexTestEnv& env, const std::string& call_id) {
  auto requests = env.server().requests_to("/responses");
  REQUIRE_FALSE(requests.empty());
  return OutputFor(requests.back().InputItems(), call_id);
}

// A shell tool output, parsed: {"output": text, "metadata": {"exit_code": n, …}}.
struct ShellOutput {
  std::string output;
  int exit_code = -999;
};
inline ShellOutput ShellResult(CodexTestEnv& env, const std::string& call_id) {
  const std::string text = ModelOutput(env, call_id);
  INFO("output for " << call_id << ": " << text.substr(0, 4000));
  Json j = Json::parse(text, nullptr, false);
  REQUIRE(j.is_object());
  ShellOutput out;
  out.output = j.value("output", "");
  out.exit_code = j["metadata"].value("exit_code", -999);
  return out;
}

// The completed `--json` items of `type`.
inline std::vector<Json> CompletedItems(const std::string& out, const std::string& type) {
  std::vector<Json> items;
  for (const auto& e : JsonLines(out)) {
    if (e.is_object() && e.value("type", "") == "item.completed" &&
        e["item"].value("type", "") == type) {
      items.push_back(e["item"]);
    }
  }
  return items;
}

// Waits (up to 60 s) until the server has received `n` /responses requests.
inline bool WaitForRequests(CodexTestEnv& env, size_t n) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    if (env.server().requests_to("/responses").size() >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace codex::testing::e2e
