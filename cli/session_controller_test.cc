// SessionController (cli/session_controller.h) linked as a library and run
// against the scripted Responses server on loopback, with a real SQLite
// store in a temporary CODEX_HOME: a new session and its turn, the engine
// reopened with another model on the same session, a fork resumed, an
// interrupted turn, and a conversation exchanged for one turn.
#include "cli/session_controller.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "testing/scoped_env.h"
#include "tests/e2e_support.h"

using codex::cli::GlobalOptions;
using codex::cli::RunFlags;
using codex::cli::SessionController;

namespace {

// A CODEX_HOME wired to the scripted server, and the flags that run in its workdir.
struct ControllerRig {
  explicit ControllerRig(const char* script) {
    auto created = codex::testing::CodexTestEnv::Create(script);
    REQUIRE(created.ok());
    env = std::move(*created);
    for (const auto& [name, value] : env->Env()) {
      scoped.push_back(std::make_unique<codex::testing::ScopedEnv>(name.c_str(), value));
    }
    flags.cd = env->workdir().string();
  }
  std::unique_ptr<SessionController> Open() {
    auto opened = SessionController::Open(global, flags);
    REQUIRE(opened.ok());
    REQUIRE((*opened)->StartModel(observer, /*approver=*/nullptr).ok());
    return std::move(*opened);
  }
  std::unique_ptr<codex::testing::CodexTestEnv> env;
  std::vector<std::unique_ptr<codex::testing::ScopedEnv>> scoped;
  GlobalOptions global;
  RunFlags flags;
  codex::core::TurnObserver observer;
};

// What the user typed in `request`, in order (the injected context left out).
std::vector<std::string> TypedTexts(const codex::testing::RecordedRequest& request) {
  std::vector<std::string> typed;
  for (std::string& text : codex::testing::UserTexts(request)) {
    if (text.rfind("<environment_context>", 0) != 0) typed.push_back(std::move(text));
  }
  return typed;
}

}  // namespace

TEST_CASE("a new session: its turn is stored and the requests name it") {
  ControllerRig rig(R"(["first answer"])");
  auto session = rig.Open();
  REQUIRE(session->StartNew("exec").ok());
  CHECK_FALSE(session->conversation().persisted());  // nothing stored before a message
  codex::core::CancelToken cancel;
  auto turn = session->RunTurn("hello", cancel);
  REQUIRE(turn.ok());
  CHECK(turn->final_message == "first answer");
  const codex::core::SessionInfo info = session->conversation().session();
  CHECK(session->conversation().persisted());
  auto stored = session->store().FindSession(info.id);
  REQUIRE(stored.ok());
  CHECK(stored->source == "exec");
  const auto requests = rig.env->server().requests_to("/responses");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].headers.at("session_id") == info.id);
}

TEST_CASE("reopened with another model, the same session goes on") {
  ControllerRig rig(R"(["one", "two"])");
  auto session = rig.Open();
  REQUIRE(session->StartNew("interactive").ok());
  codex::core::CancelToken cancel;
  REQUIRE(session->RunTurn("first", cancel).ok());
  const std::string id = session->conversation().session().id;
  RunFlags other = rig.flags;
  other.model = "gpt-other";
  REQUIRE(session->Reopen(rig.global, other).ok());
  CHECK(session->config().model == "gpt-other");
  CHECK(session->conversation().session().id == id);
  REQUIRE(session->RunTurn("second", cancel).ok());
  const auto requests = rig.env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].body["model"] == "gpt-other");
  // The second request carries the first turn: the session was resumed.
  CHECK(TypedTexts(requests[1]) == std::vector<std::string>{"first", "second"});
}

TEST_CASE("reopened before any message: a fresh session under the same id") {
  ControllerRig rig(R"(["ok"])");
  auto session = rig.Open();
  REQUIRE(session->StartNew("interactive").ok());
  const std::string id = session->conversation().session().id;
  RunFlags other = rig.flags;
  other.model = "gpt-other";
  REQUIRE(session->Reopen(rig.global, other).ok());
  CHECK(session->conversation().session().id == id);
  CHECK_FALSE(session->conversation().persisted());
  codex::core::CancelToken cancel;
  REQUIRE(session->RunTurn("hi", cancel).ok());
  auto stored = session->store().FindSession(id);
  REQUIRE(stored.ok());
  CHECK(stored->source == "interactive");
}

TEST_CASE("a fork is resumed: the branch keeps the turns before it and goes on alone") {
  ControllerRig rig(R"(["a1", "a2", "b2"])");
  auto session = rig.Open();
  REQUIRE(session->StartNew("exec").ok());
  codex::core::CancelToken cancel;
  REQUIRE(session->RunTurn("one", cancel).ok());
  REQUIRE(session->RunTurn("two", cancel).ok());
  const codex::core::SessionInfo parent = session->conversation().session();
  auto fork = session->ForkAndResume(parent, 1);
  REQUIRE(fork.ok());
  CHECK(fork->id != parent.id);
  CHECK(fork->forked_from_session == parent.id);
  CHECK(session->conversation().session().id == fork->id);
  REQUIRE(session->RunTurn("other two", cancel).ok());
  const auto requests = rig.env->server().requests_to("/responses");
  REQUIRE(requests.size() == 3);
  CHECK(TypedTexts(requests[2]) == std::vector<std::string>{"one", "other two"});
  CHECK(requests[2].headers.at("session_id") == fork->id);
}

TEST_CASE("an interrupted turn is cancelled and the session stays resumable") {
  ControllerRig rig(R"(["after"])");
  auto session = rig.Open();
  REQUIRE(session->StartNew("exec").ok());
  codex::core::CancelToken cancel;
  cancel.Cancel();
  auto turn = session->RunTurn("stopped", cancel);
  REQUIRE_FALSE(turn.ok());
  CHECK(turn.status().code() == codex::StatusCode::kCancelled);
  codex::core::CancelToken fresh;
  REQUIRE(session->RunTurn("again", fresh).ok());
}

TEST_CASE("a conversation exchanged for one turn, then the session's own again") {
  ControllerRig rig(R"(["main", "side"])");
  auto session = rig.Open();
  REQUIRE(session->StartNew("interactive").ok());
  codex::core::CancelToken cancel;
  REQUIRE(session->RunTurn("main turn", cancel).ok());
  const std::string main_id = session->conversation().session().id;
  auto side =
      codex::core::Conversation::Create(session->config(), session->engine().Deps(), "review");
  REQUIRE(side.ok());
  auto own = session->Exchange(std::move(*side));
  REQUIRE(session->RunTurn("side turn", cancel).ok());
  const std::string side_id = session->conversation().session().id;
  CHECK(side_id != main_id);
  session->Exchange(std::move(own));
  CHECK(session->conversation().session().id == main_id);
  const auto requests = rig.env->server().requests_to("/responses");
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].headers.at("session_id") == side_id);
  CHECK(TypedTexts(requests[1]) == std::vector<std::string>{"side turn"});
}
