// Several processes writing one database at once: no error, no lost item.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <set>

#include "core/item.h"
#include "core/session_store.h"
#include "storage/sqlite_session_store.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"

using codex::storage::SessionDatabase;
using codex::storage::testing::OpenStore;
using codex::storage::testing::StoreDir;
using codex::testing::TempDir;
namespace core = codex::core;

namespace {

constexpr int kProcesses = 8;
constexpr int kTurns = 500;

// The child's whole life: open its own store, write `kTurns` turns of three
// items plus a turn record, and exit 0 on success. Never returns.
[[noreturn]] void Child(const std::string& path, int index) {
  auto fail = [&](const codex::Status& s, const char* what) {
    std::fprintf(stderr, "child %d: %s: %s\n", index, what, s.ToString().c_str());
    std::_Exit(1);
  };
  auto store = OpenStore(path);
  if (!store.ok()) fail(store.status(), "open");
  core::NewSession spec;
  spec.cwd = "/proc" + std::to_string(index);
  auto session = (*store)->CreateSession(spec);
  if (!session.ok()) fail(session.status(), "create");
  std::optional<int64_t> head;
  for (int t = 0; t < kTurns; ++t) {
    const std::string turn = "turn" + std::to_string(t);
    const std::string tag = std::to_string(index) + ":" + std::to_string(t);
    auto ids = (*store)->Append(session->id, head, turn,
                                {core::UserMessage("q " + tag), core::AssistantMessage("a " + tag),
                                 core::AssistantMessage("b " + tag)});
    if (!ids.ok()) fail(ids.status(), "append");
    head = ids->back();
    core::TurnRecord record;
    record.session_id = session->id;
    record.turn_id = turn;
    record.usage.total_tokens = 1;
    codex::Status st = (*store)->RecordTurn(record);
    if (!st.ok()) fail(st, "record turn");
  }
  std::_Exit(0);
}

}  // namespace

TEST_CASE("Eight processes append to one database at once without losing an item") {
  StoreDir dir;
  const std::string path = dir.Store("shared.db");
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) Child(path, i);
    children.push_back(pid);
  }
  int failures = 0;
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  CHECK(failures == 0);

  auto store = OpenStore(path);
  REQUIRE(store.ok());
  core::ListQuery q;
  q.limit = 100;
  auto page = (*store)->ListSessions(q);
  REQUIRE(page.ok());
  REQUIRE(page->sessions.size() == kProcesses);
  for (const auto& s : page->sessions) {
    INFO(s.cwd);
    CHECK(s.tokens_used == kTurns);
    CHECK(s.title.rfind("q ", 0) == 0);
    auto transcript = (*store)->LoadTranscript(s);
    REQUIRE(transcript.ok());
    REQUIRE(transcript->size() == static_cast<size_t>(3 * kTurns));
    // Every item is there, in order, and belongs to this session.
    const std::string index = s.cwd.substr(5);
    for (int t = 0; t < kTurns; ++t) {
      const std::string tag = index + ":" + std::to_string(t);
      CHECK(core::MessageText((*transcript)[3 * static_cast<size_t>(t)].item) == "q " + tag);
      CHECK(core::MessageText((*transcript)[3 * static_cast<size_t>(t) + 2].item) == "b " + tag);
    }
    CHECK((*store)->LoadTurns(s.id)->size() == static_cast<size_t>(kTurns));
  }
}

TEST_CASE("Two processes resuming one session: the second append is a conflict") {
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  std::string id;
  std::optional<int64_t> head;
  {
    auto store = OpenStore(path);
    REQUIRE(store.ok());
    auto s = (*store)->CreateSession({});
    REQUIRE(s.ok());
    id = s->id;
    auto ids = (*store)->Append(id, std::nullopt, "t", {core::UserMessage("start")});
    REQUIRE(ids.ok());
    head = ids->back();
  }
  // Both "processes" resumed at `head`; a child commits first.
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    auto store = OpenStore(path);
    if (!store.ok()) std::_Exit(1);
    auto ids = (*store)->Append(id, head, "t", {core::AssistantMessage("child")});
    std::_Exit(ids.ok() ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  auto store = OpenStore(path);
  REQUIRE(store.ok());
  auto mine = (*store)->Append(id, head, "t", {core::AssistantMessage("parent")});
  REQUIRE_FALSE(mine.ok());
  CHECK(mine.status().reason() == codex::core::reason::kSessionAdvanced);
  auto transcript = (*store)->LoadTranscript(*(*store)->FindSession(id));
  REQUIRE(transcript.ok());
  REQUIRE(transcript->size() == 2);
  CHECK(core::MessageText(transcript->back().item) == "child");
}

TEST_CASE("A store whose append lost the race sees the other's commits at its next append") {
  // Two connections taking turns; each conflict leaves a store's (reused)
  // statements mid-result, which must not pin it to an old snapshot.
  StoreDir dir;
  const std::string path = dir.Store("s.db");
  auto a = OpenStore(path);
  auto b = OpenStore(path);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  auto s = (*a)->CreateSession({});
  REQUIRE(s.ok());
  const std::string id = s->id;
  auto first = (*a)->Append(id, std::nullopt, "t", {core::UserMessage("start")});
  REQUIRE(first.ok());
  std::optional<int64_t> head = first->back();
  for (int round = 0; round < 20; ++round) {
    auto& winner = round % 2 == 0 ? *b : *a;
    auto& loser = round % 2 == 0 ? *a : *b;
    const std::string tag = std::to_string(round);
    auto won = winner->Append(id, head, "t", {core::AssistantMessage("won " + tag)});
    REQUIRE(won.ok());
    auto lost = loser->Append(id, head, "t", {core::AssistantMessage("lost " + tag)});
    REQUIRE_FALSE(lost.ok());
    CHECK(lost.status().reason() == codex::core::reason::kSessionAdvanced);
    head = won->back();
    // The loser, at the current head, now goes through and sees its rival's item.
    auto next = loser->Append(id, head, "t", {core::AssistantMessage("next " + tag)});
    INFO(next.status().ToString());
    REQUIRE(next.ok());
    head = next->back();
    auto transcript = loser->LoadTranscript(*loser->FindSession(id));
    REQUIRE(transcript.ok());
    REQUIRE(transcript->size() == static_cast<size_t>(2 + 2 * round + 1));
    CHECK(core::MessageText((*transcript)[transcript->size() - 2].item) == "won " + tag);
  }
}

TEST_CASE("Eight processes taking turns on one session: no turn interleaved, no item lost") {
  constexpr int kWriters = 8;
  constexpr int kWriterTurns = 15;
  StoreDir dir;
  const std::string path = dir.Store("one.db");
  std::string id;
  {
    auto store = OpenStore(path);
    REQUIRE(store.ok());
    core::NewSession spec;
    spec.items = {core::UserMessage("start")};
    auto s = (*store)->CreateSession(spec);
    REQUIRE(s.ok());
    id = s->id;
  }
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      auto store = OpenStore(path);
      if (!store.ok()) std::_Exit(1);
      for (int t = 0; t < kWriterTurns;) {
        // A turn: take the lease (wait while another process has it), read
        // the head, commit three items, release.
        auto lease = (*store)->AcquireTurnLease(id);
        if (!lease.ok()) {
          if (lease.status().reason() != codex::core::reason::kSessionBusy) std::_Exit(2);
          ::usleep(2'000);
          continue;
        }
        auto s = (*store)->FindSession(id);
        if (!s.ok()) std::_Exit(3);
        const std::string tag = std::to_string(w) + ":" + std::to_string(t);
        auto ids =
            (*store)->Append(id, s->head_item_id, "turn-" + tag,
                             {core::UserMessage("q " + tag), core::AssistantMessage("a " + tag),
                              core::AssistantMessage("b " + tag)});
        if (!ids.ok()) {
          std::fprintf(stderr, "writer %d: %s\n", w, ids.status().ToString().c_str());
          std::_Exit(5);
        }
        ++t;
      }
      std::_Exit(0);
    }
    children.push_back(pid);
  }
  int failures = 0;
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  CHECK(failures == 0);
  auto store = OpenStore(path);
  REQUIRE(store.ok());
  auto transcript = (*store)->LoadTranscript(*(*store)->FindSession(id));
  REQUIRE(transcript.ok());
  REQUIRE(transcript->size() == 1 + 3 * static_cast<size_t>(kWriters * kWriterTurns));
  std::set<std::string> turns;
  for (size_t i = 1; i < transcript->size(); i += 3) {
    // Each turn's three items sit together, in order.
    const std::string q = core::MessageText((*transcript)[i].item);
    REQUIRE(q.rfind("q ", 0) == 0);
    const std::string tag = q.substr(2);
    CHECK(core::MessageText((*transcript)[i + 1].item) == "a " + tag);
    CHECK(core::MessageText((*transcript)[i + 2].item) == "b " + tag);
    CHECK(turns.insert(tag).second);
  }
  CHECK(turns.size() == static_cast<size_t>(kWriters * kWriterTurns));
}
