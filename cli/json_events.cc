#include "cli/json_events.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/json.h"
#include "cli/terminal_text.h"

namespace codex::cli {

using Json = nlohmann::ordered_json;

std::string ReasoningText(const core::Item& item, std::string_view field) {
  Json j = Json::parse(item.body, nullptr, false);
  std::string text;
  if (!j.is_object()) return text;
  auto it = j.find(field);
  if (it == j.end() || !it->is_array()) return text;
  for (const auto& part : *it) {
    if (part.is_object() && part.contains("text") && part["text"].is_string()) {
      if (!text.empty()) text += "\n\n";
      text += part["text"].get<std::string>();
    }
  }
  return text;
}

namespace {

// `path` made absolute against `cwd`, as Codex reports file changes.
std::string AbsolutePath(const std::string& cwd, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute() || cwd.empty()) return p.lexically_normal().string();
  return (std::filesystem::path(cwd) / p).lexically_normal().string();
}

Json ActivityItem(const std::string& id, const core::ToolActivity& a, bool done,
                  const std::string& cwd) {
  if (a.tool == "apply_patch") {
    Json changes = Json::array();
    for (const auto& c : a.changes) {
      changes.push_back({{"path", AbsolutePath(cwd, c.path)}, {"kind", c.kind}});
    }
    return {{"id", id},
            {"type", "file_change"},
            {"changes", changes},
            {"status", !done ? "in_progress" : (a.success ? "completed" : "failed")}};
  }
  if (a.tool == "mcp") {
    // As Codex 0.169's exec events: result {content, structured_content} or
    // error {message}; status failed also for an isError result.
    Json arguments = Json::parse(a.mcp_arguments, nullptr, false);
    if (arguments.is_discarded()) arguments = a.mcp_arguments;
    Json result;
    Json error;
    if (done && !a.mcp_result.empty()) {
      Json r = Json::parse(a.mcp_result, nullptr, false);
      if (r.is_object()) {
        result = {{"content", r.value("content", Json::array())},
                  {"structured_content", r.value("structuredContent", Json())}};
      }
    }
    if (done && !a.error.empty()) error = {{"message", a.error}};
    return {{"id", id},
            {"type", "mcp_tool_call"},
            {"server", a.mcp_server},
            {"tool", a.mcp_tool},
            {"arguments", arguments},
            {"result", result},
            {"error", error},
            {"status", !done ? "in_progress" : (a.success ? "completed" : "failed")}};
  }
  if (a.tool == "collab") {
    // Codex 0.169's collab_tool_call (tests/compat/codex-0.169-multi-agent-capture.json).
    Json item = {{"id", id}, {"type", "collab_tool_call"}};
    const Json fields = Json::parse(a.collab, nullptr, false);
    if (fields.is_object()) {
      for (const auto& [key, value] : fields.items()) item[key] = value;
    }
    item["status"] = !done ? "in_progress" : (a.success ? "completed" : "failed");
    return item;
  }
  if (a.tool == "update_plan") {
    Json items = Json::array();
    for (const auto& s : a.plan) {
      items.push_back({{"text", s.step}, {"completed", s.status == "completed"}});
    }
    return {{"id", id}, {"type", "todo_list"}, {"items", items}};
  }
  Json item = {{"id", id},
               {"type", "command_execution"},
               {"command", a.command},
               {"aggregated_output", done ? a.output : ""},
               {"exit_code", done && a.exit_code ? Json(*a.exit_code) : Json()},
               {"status", !done ? "in_progress" : (a.success ? "completed" : "failed")}};
  return item;
}

}  // namespace

void JsonEventWriter::Emit(const std::string& line) {
  if (output_lost_) return;
  const bool written = PrintText(out_, line + "\n") &&
                       (out_ == stdout ? StdoutWritten().ok() : std::fflush(out_) == 0);
  if (written) return;
  output_lost_ = true;
  if (cancel_on_loss_ != nullptr) cancel_on_loss_->Cancel();
}

std::string JsonEventWriter::NextId() { return "item_" + std::to_string(next_id_++); }

std::string JsonEventWriter::IdFor(const std::string& call_id) {
  for (const auto& [cid, id] : call_ids_) {
    if (cid == call_id) return id;
  }
  std::string id = NextId();
  call_ids_.emplace_back(call_id, id);
  return id;
}

void JsonEventWriter::ThreadStarted(const std::string& session_id) {
  Emit(Dump(Json{{"type", "thread.started"}, {"thread_id", session_id}}));
}

void JsonEventWriter::Error(const std::string& message) {
  Emit(Dump(Json{{"type", "error"}, {"message", message}}));
}

void JsonEventWriter::OnTurnStarted(std::string_view) {
  call_ids_.clear();
  Emit(R"({"type":"turn.started"})");
}

void JsonEventWriter::OnItemCompleted(const core::Item& item) {
  if (item.kind == core::ItemKind::kReasoning) {
    // The summary only: Codex 0.169's exec --json never carries the raw
    // reasoning text, show_raw_agent_reasoning or not.
    if (hide_reasoning_) return;
    std::string text = ReasoningText(item, "summary");
    if (text.empty()) return;
    Emit(Dump(Json{{"type", "item.completed"},
                   {"item", {{"id", NextId()}, {"type", "reasoning"}, {"text", text}}}}));
  } else if (item.kind == core::ItemKind::kOther) {
    // The provider's hosted web search, as Codex's exec --json reports it.
    const Json body = Json::parse(item.body, nullptr, false);
    if (!body.is_object() || body.value("type", "") != "web_search_call") return;
    std::string query;
    if (auto action = body.find("action"); action != body.end() && action->is_object()) {
      if (auto q = action->find("query"); q != action->end() && q->is_string()) query = *q;
    }
    Emit(Dump(Json{{"type", "item.completed"},
                   {"item", {{"id", NextId()}, {"type", "web_search"}, {"query", query}}}}));
  } else if (item.kind == core::ItemKind::kMessage && item.role == "assistant") {
    Emit(Dump(
        Json{{"type", "item.completed"},
             {"item",
              {{"id", NextId()}, {"type", "agent_message"}, {"text", core::MessageText(item)}}}}));
  }
}

void JsonEventWriter::OnToolStarted(const core::ToolActivity& activity) {
  if (activity.tool == "update_plan") return;  // reported once, on completion
  Emit(Dump(Json{{"type", "item.started"},
                 {"item", ActivityItem(IdFor(activity.call_id), activity, false, cwd_)}}));
}

void JsonEventWriter::OnToolCompleted(const core::ToolActivity& activity) {
  // A unified exec process its call left running has not completed: as
  // Codex 0.169, its item stays started (found: we reported exit_code 0,
  // "completed", for a server still running).
  if (activity.exec_session >= 0) return;
  Emit(Dump(Json{{"type", "item.completed"},
                 {"item", ActivityItem(IdFor(activity.call_id), activity, true, cwd_)}}));
}

void JsonEventWriter::OnCompaction(const core::CompactionNotice& notice) {
  Emit(Dump(Json{{"type", "compaction"},
                 {"mode", notice.mode},
                 {"trigger", notice.trigger},
                 {"tokens_before", notice.tokens_before},
                 {"tokens_after", notice.tokens_after},
                 {"dropped_items", notice.dropped_items},
                 {"kept", notice.kept}}));
}

void JsonEventWriter::OnTurnCompleted(const core::TokenUsage& usage, int context_left_percent) {
  Emit(Dump(Json{{"type", "turn.completed"},
                 {"usage",
                  {{"input_tokens", usage.input_tokens},
                   {"cached_input_tokens", usage.cached_input_tokens},
                   {"output_tokens", usage.output_tokens},
                   {"reasoning_output_tokens", usage.reasoning_output_tokens},
                   {"cache_write_input_tokens", usage.cache_write_input_tokens}}},
                 {"context_left_percent", context_left_percent}}));
}

void JsonEventWriter::OnTurnFailed(const Status& status) {
  Error(status.message());
  Emit(Dump(Json{{"type", "turn.failed"}, {"error", {{"message", status.message()}}}}));
}

void JsonEventWriter::OnRetry(std::string_view message) {
  Error(std::string(message));
  OnNotice(message);
}

void JsonEventWriter::OnNotice(std::string_view message) {
  PrintF(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
}

}  // namespace codex::cli
