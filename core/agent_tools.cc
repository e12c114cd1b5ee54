#include "core/agent_tools.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/json.h"
#include "core/tool_args.h"
#include "core/uuid.h"

namespace codex::core {

namespace {

using Json = nlohmann::ordered_json;

// wait_agent's timeout bounds (Codex 0.169: raised to the minimum, observed).
constexpr int64_t kWaitDefaultMs = 30'000;
constexpr int64_t kWaitMinMs = 10'000;
constexpr int64_t kWaitMaxMs = 3'600'000;

// The names agents are shown by (Codex picks one at random; a name is only a label).
constexpr const char* kNicknames[] = {"Noether", "Turing",  "Hopper",  "Lovelace",
                                      "Curie",   "Euler",   "Gauss",   "Ramanujan",
                                      "Kepler",  "Meitner", "Hypatia", "Darwin"};

// The task of spawn_agent / send_input: `message`, or the text of `items`.
Result<std::string> TaskText(const Json& args) {
  const bool has_message = args.contains("message") && !args["message"].is_null();
  const bool has_items = args.contains("items") && !args["items"].is_null();
  if (has_message && has_items) {
    return InvalidArgumentError("Provide either message or items, but not both");
  }
  if (has_message) {
    if (!args["message"].is_string()) return InvalidArgumentError("message must be a string");
    std::string text = args["message"].get<std::string>();
    if (text.empty()) return InvalidArgumentError("Empty message can't be sent to an agent");
    return text;
  }
  if (!has_items) return InvalidArgumentError("Provide one of: message or items");
  if (!args["items"].is_array()) return InvalidArgumentError("items must be an array");
  std::string text;
  for (const Json& item : args["items"]) {
    const std::string type = StringField(item, "type");
    if (type != "text") {
      return InvalidArgumentError("items of type '" + type +
                                  "' are not supported here; send text items or a message");
    }
    if (!text.empty()) text += "\n";
    text += StringField(item, "text");
  }
  if (text.empty()) return InvalidArgumentError("Empty message can't be sent to an agent");
  return text;
}

// An agent id as the model gave it: a UUID, or Codex's kind of refusal.
Result<std::string> AgentId(const Json& value) {
  const std::string id = value.is_string() ? value.get<std::string>() : value.dump();
  if (!LooksLikeUuid(id)) return InvalidArgumentError("invalid agent id " + id + ": not a UUID");
  return id;
}

// A boolean argument; absent or not a boolean = false.
bool AgentFlag(const Json& args, const char* key) {
  auto it = args.find(key);
  return it != args.end() && it->is_boolean() && it->get<bool>();
}

std::string AgentNotFound(const std::string& id) { return "agent with id " + id + " not found"; }

}  // namespace

bool AgentPool::Final(State state) {
  return state == State::kCompleted || state == State::kErrored || state == State::kInterrupted ||
         state == State::kShutdown;
}

std::string AgentPool::StatusJson(const Agent& agent) {
  switch (agent.state) {
    case State::kPendingInit:
      return "\"pending_init\"";
    case State::kRunning:
      return "\"running\"";
    case State::kCompleted:
      return Dump(Json{{"completed", agent.message.empty() ? Json() : Json(agent.message)}});
    case State::kErrored:
      return Dump(Json{{"errored", agent.message}});
    case State::kInterrupted:
      return "\"interrupted\"";
    case State::kShutdown:
      return "\"shutdown\"";
  }
  return "\"running\"";
}

std::string AgentPool::NextNickname() {
  const size_t n = std::size(kNicknames);
  const size_t i = static_cast<size_t>(spawned_++);
  std::string name = kNicknames[i % n];
  if (i >= n) name += " " + std::to_string(i / n + 1);
  return name;
}

Result<std::string> AgentPool::Call(const std::string& parent_id, const std::string& name,
                                    const std::string& arguments, const CancelToken& cancel,
                                    AgentCallReport* report) {
  AgentCallReport local;
  AgentCallReport& r = report != nullptr ? *report : local;
  r = AgentCallReport{};
  r.tool = name == "wait_agent" ? "wait" : name;
  Result<std::string> out = [&]() -> Result<std::string> {
    if (name == "spawn_agent") return Spawn(parent_id, arguments, r);
    if (name == "send_input") return SendInput(parent_id, arguments, r);
    if (name == "wait_agent") return Wait(parent_id, arguments, cancel, r);
    if (name == "close_agent") return CloseAgent(parent_id, arguments, r);
    if (name == "resume_agent") return Resume(parent_id, arguments, r);
    return InvalidArgumentError("unsupported call: " + std::string(kMultiAgentNamespace) + name);
  }();
  r.ok = out.ok();
  return out;
}

AgentCallReport::AgentState AgentPool::StateOf(const Agent& agent) {
  static constexpr const char* kNames[] = {"pending_init", "running",     "completed",
                                           "errored",      "interrupted", "shutdown"};
  AgentCallReport::AgentState s{agent.id, kNames[static_cast<int>(agent.state)], std::nullopt};
  if (agent.state == State::kCompleted || agent.state == State::kErrored) s.message = agent.message;
  return s;
}

Result<AgentPool::Agent*> AgentPool::Find(const std::string& id, const std::string& parent) {
  auto it = agents_.find(id);
  if (it == agents_.end() || it->second->parent != parent) {
    return NotFoundError(AgentNotFound(id));
  }
  return it->second.get();
}

size_t AgentPool::OpenCount(const std::string& parent) const {
  size_t n = 0;
  for (const auto& [id, agent] : agents_) n += agent->parent == parent ? 1 : 0;
  return n;
}

void AgentPool::Start(std::unique_ptr<Agent> agent) {
  Agent* raw = agent.get();
  agents_[raw->id] = std::move(agent);
  raw->thread = std::thread([this, raw] { RunAgent(raw); });
}

void AgentPool::Assign(Agent& agent) {
  if (agent.current || agent.inbox.empty()) return;
  agent.current = std::move(agent.inbox.front());
  agent.inbox.pop_front();
  agent.cancel = std::make_shared<CancelToken>();
  agent.state = State::kRunning;
}

void AgentPool::RunAgent(Agent* agent) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    changed_.wait(lock, [&] { return agent->closing || agent->current.has_value(); });
    if (agent->closing) return;
    const std::string text = *agent->current;
    const std::shared_ptr<CancelToken> cancel = agent->cancel;
    lock.unlock();
    Result<std::string> turn = agent->session->RunTurn(text, *cancel);
    lock.lock();
    agent->current.reset();
    if (turn.ok()) {
      agent->state = State::kCompleted;
      agent->message = std::move(*turn);
    } else if (turn.status().code() == StatusCode::kCancelled) {
      agent->state = agent->closing ? State::kShutdown : State::kInterrupted;
    } else {
      agent->state = State::kErrored;
      agent->message = turn.status().message();
    }
    if (!agent->closing) Assign(*agent);
    // Announced to the parent once it settles (not when a queued message
    // follows at once, nor when it is being closed: Close announces that).
    if (!agent->closing && !agent->current) {
      notifications_.emplace_back(
          agent->parent,
          "<subagent_notification>\n" +
              Dump(Json{{"agent_path", agent->id}, {"status", Json::parse(StatusJson(*agent))}}) +
              "\n</subagent_notification>");
    }
    changed_.notify_all();
  }
}

Result<std::string> AgentPool::Spawn(const std::string& parent_id, const std::string& arguments,
                                     AgentCallReport& report) {
  ASSIGN_OR_RETURN(Json args, DecodeArgumentsObject("spawn_agent", arguments));
  ASSIGN_OR_RETURN(std::string task, TaskText(args));
  report.prompt = task;
  SpawnRequest request;
  request.parent_id = parent_id;
  request.fork_context = AgentFlag(args, "fork_context");
  request.model = StringField(args, "model");
  request.reasoning_effort = StringField(args, "reasoning_effort");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (OpenCount(parent_id) >= static_cast<size_t>(kMaxOpenAgents)) {
      return ResourceExhaustedError("collab spawn failed: agent thread limit reached");
    }
  }
  Result<std::unique_ptr<AgentSession>> session = factory_.Spawn(request);
  if (!session.ok()) {
    return InternalError("collab spawn failed: " + session.status().message());
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (OpenCount(parent_id) >= static_cast<size_t>(kMaxOpenAgents)) {
    return ResourceExhaustedError("collab spawn failed: agent thread limit reached");
  }
  auto agent = std::make_unique<Agent>();
  agent->parent = parent_id;
  agent->id = (*session)->id();
  agent->nickname = NextNickname();
  agent->session = std::move(*session);
  agent->inbox.push_back(std::move(task));
  Assign(*agent);
  const std::string out = Dump(Json{{"agent_id", agent->id}, {"nickname", agent->nickname}});
  report.agents.push_back({agent->id, "pending_init", std::nullopt});
  Start(std::move(agent));
  return out;
}

Result<std::string> AgentPool::SendInput(const std::string& parent_id, const std::string& arguments,
                                         AgentCallReport& report) {
  ASSIGN_OR_RETURN(Json args, DecodeArgumentsObject("send_input", arguments));
  ASSIGN_OR_RETURN(std::string id, AgentId(args.value("target", Json(""))));
  ASSIGN_OR_RETURN(std::string task, TaskText(args));
  report.prompt = task;
  report.agents.push_back({id, "not_found", std::nullopt});
  const bool interrupt = AgentFlag(args, "interrupt");
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(Agent * agent, Find(id, parent_id));
  report.agents.back() = StateOf(*agent);
  if (interrupt) {
    agent->inbox.push_front(std::move(task));
    if (agent->current) agent->cancel->Cancel();
  } else {
    agent->inbox.push_back(std::move(task));
  }
  Assign(*agent);
  // A wait from now on is for this message's answer, not the last one.
  agent->state = State::kRunning;
  changed_.notify_all();
  return Dump(Json{{"submission_id", NewUuidV7()}});
}

Result<std::string> AgentPool::Wait(const std::string& parent_id, const std::string& arguments,
                                    const CancelToken& cancel, AgentCallReport& report) {
  ASSIGN_OR_RETURN(Json args, DecodeArgumentsObject("wait_agent", arguments));
  const Json targets = args.value("targets", Json::array());
  if (!targets.is_array() || targets.empty()) {
    return InvalidArgumentError("agent ids must be non-empty");
  }
  std::vector<std::string> ids;
  for (const Json& t : targets) {
    ASSIGN_OR_RETURN(std::string id, AgentId(t));
    ids.push_back(std::move(id));
  }
  int64_t timeout_ms = kWaitDefaultMs;
  if (args.contains("timeout_ms") && args["timeout_ms"].is_number()) {
    timeout_ms = static_cast<int64_t>(args["timeout_ms"].get<double>());
  }
  timeout_ms = std::clamp(timeout_ms, kWaitMinMs, kWaitMaxMs);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::unique_lock<std::mutex> lock(mu_);
  for (const std::string& id : ids) RETURN_IF_ERROR(Find(id, parent_id).status());
  for (;;) {
    Json status = Json::object();
    for (const std::string& id : ids) {
      auto it = agents_.find(id);
      if (it == agents_.end()) continue;  // closed meanwhile
      if (!Final(it->second->state)) continue;
      status[id] = Json::parse(StatusJson(*it->second));
      report.agents.push_back(StateOf(*it->second));
    }
    if (!status.empty()) return Dump(Json{{"status", status}, {"timed_out", false}});
    if (cancel.cancelled()) return CancelledError("wait_agent interrupted");
    if (std::chrono::steady_clock::now() >= deadline) {
      return Dump(Json{{"status", Json::object()}, {"timed_out", true}});
    }
    // Woken by every status change; the slice notices the caller's interrupt.
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

std::string AgentPool::Close(const std::string& id) {
  std::unique_ptr<Agent> agent;
  std::string previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = agents_.find(id);
    if (it == agents_.end()) return "";
    agent = std::move(it->second);
    agents_.erase(it);
    previous = StatusJson(*agent);
    const bool was_running = !Final(agent->state);
    agent->closing = true;
    if (agent->current) agent->cancel->Cancel();
    if (was_running) {
      notifications_.emplace_back(
          agent->parent, "<subagent_notification>\n" +
                             Dump(Json{{"agent_path", agent->id}, {"status", "shutdown"}}) +
                             "\n</subagent_notification>");
    }
    changed_.notify_all();
  }
  if (agent->thread.joinable()) agent->thread.join();
  agent->session.reset();  // closes its session: its processes are killed
  return previous;
}

Result<std::string> AgentPool::CloseAgent(const std::string& parent_id,
                                          const std::string& arguments, AgentCallReport& report) {
  ASSIGN_OR_RETURN(Json args, DecodeArgumentsObject("close_agent", arguments));
  ASSIGN_OR_RETURN(std::string id, AgentId(args.value("target", Json(""))));
  report.agents.push_back({id, "not_found", std::nullopt});
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(Agent * agent, Find(id, parent_id));
    report.agents.back() = StateOf(*agent);
  }
  const std::string previous = Close(id);
  if (previous.empty()) return NotFoundError(AgentNotFound(id));
  return "{\"previous_status\":" + previous + "}";
}

Result<std::string> AgentPool::Resume(const std::string& parent_id, const std::string& arguments,
                                      AgentCallReport& report) {
  ASSIGN_OR_RETURN(Json args, DecodeArgumentsObject("resume_agent", arguments));
  ASSIGN_OR_RETURN(std::string id, AgentId(args.value("id", Json(""))));
  report.agents.push_back({id, "pending_init", std::nullopt});
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Result<Agent*> open = Find(id, parent_id); open.ok()) {
      return Dump(Json{{"status", Json::parse(StatusJson(**open))}});
    }
    if (agents_.count(id) != 0) return NotFoundError(AgentNotFound(id));
    if (OpenCount(parent_id) >= static_cast<size_t>(kMaxOpenAgents)) {
      return ResourceExhaustedError("collab spawn failed: agent thread limit reached");
    }
  }
  Result<std::unique_ptr<AgentSession>> session = factory_.Reopen(parent_id, id);
  if (!session.ok()) return NotFoundError(AgentNotFound(id));
  std::lock_guard<std::mutex> lock(mu_);
  auto agent = std::make_unique<Agent>();
  agent->parent = parent_id;
  agent->id = id;
  agent->nickname = NextNickname();
  agent->session = std::move(*session);
  agent->state = State::kPendingInit;
  Start(std::move(agent));
  return std::string("{\"status\":\"pending_init\"}");
}

std::vector<std::string> AgentPool::TakeNotifications(const std::string& parent_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  std::vector<std::pair<std::string, std::string>> others;
  for (auto& [parent, text] : notifications_) {
    if (parent == parent_id) {
      out.push_back(std::move(text));
    } else {
      others.emplace_back(parent, std::move(text));
    }
  }
  notifications_ = std::move(others);
  return out;
}

void AgentPool::StopAll() {
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, agent] : agents_) ids.push_back(id);
  }
  for (const std::string& id : ids) Close(id);
  std::lock_guard<std::mutex> lock(mu_);
  notifications_.clear();
}

}  // namespace codex::core
