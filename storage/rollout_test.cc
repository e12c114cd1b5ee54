// Export/import round trips of storage/rollout.h on synthetic sessions.
// (The shared Codex rollouts are covered by rollout_shared_test.cc.)
#include "storage/rollout.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/goals.h"
#include "core/item.h"
#include "storage/sqlite_session_store.h"
#include "testing/files.h"
#include "testing/store_test_support.h"
#include "testing/temp_dir.h"

using codex::StatusCode;
using codex::core::Item;
using codex::core::ItemKind;
using codex::storage::ExportFormat;
using codex::storage::SessionDatabase;
using codex::storage::testing::OpenOrDie;
using codex::storage::testing::OpenStore;
using codex::storage::testing::StoreDir;
using codex::testing::TempDir;
namespace core = codex::core;
namespace storage = codex::storage;

namespace {

Item Raw(ItemKind kind, std::string body, std::string call_id = "") {
  Item item;
  item.kind = kind;
  item.call_id = std::move(call_id);
  item.body = std::move(body);
  return item;
}

// A session exercising every kind of line export writes.
std::string MakeRichSession(SessionDatabase& store) {
  core::NewSession spec;
  spec.cwd = "/proj";
  spec.model = "gpt-x";
  spec.provider = "openai";
  auto s = store.CreateSession(spec);
  REQUIRE(s.ok());
  std::optional<int64_t> head;
  auto append = [&](const std::string& turn, std::vector<Item> items) {
    auto ids = store.Append(s->id, head, turn, items);
    INFO(ids.status().ToString());
    REQUIRE(ids.ok());
    head = ids->back();
  };
  append(
      "t1",
      {core::DeveloperMessage("rules"),
       core::UserMessage("<environment_context>\n<cwd>/proj</cwd>"),
       core::UserMessage("Refactor the parser, please\nthanks"),
       // Unusual but valid spacing and unicode escapes must survive.
       Raw(ItemKind::kReasoning,
           "{\"type\": \"reasoning\", \"summary\": [], \"encrypted_content\": "
           "\"gAAAA\\u00e9\\n==\"}"),
       Raw(ItemKind::kFunctionCall,
           R"({"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"})",
           "c1"),
       core::FunctionCallOutput("c1", "a.cc\nb.cc ```fenced```"),
       // Unified exec (Codex 0.169's harness): a live process and a write to it.
       Raw(ItemKind::kFunctionCall,
           R"({"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"python3 -i\",\"tty\":true}","call_id":"c2"})",
           "c2"),
       core::FunctionCallOutput("c2",
                                "Chunk ID: 529fb3\nWall time: 0.2500 seconds\nProcess running with "
                                "session ID 1000\nOriginal token count: 1\nOutput:\n>>> "),
       Raw(ItemKind::kFunctionCall,
           R"({"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":1000,\"chars\":\"1+1\\n\"}","call_id":"c3"})",
           "c3"),
       core::FunctionCallOutput("c3",
                                "Chunk ID: 0a1b2c\nWall time: 0.2510 seconds\nProcess running with "
                                "session ID 1000\nOriginal token count: 2\nOutput:\n2\n>>> "),
       core::AssistantMessage("Done.")});
  Item checkpoint = Raw(
      ItemKind::kCompactionCheckpoint,
      R"({"type":"compaction_checkpoint","mode":"local","trigger":"auto","tokens_before":900,"tokens_after":100,"replacement_items":2,"dropped_items":5,"summary":"we refactored"})");
  append("t2", {checkpoint, core::UserMessage("Refactor the parser, please"),
                core::UserMessage("summary: refactored")});
  append("t2", {core::UserMessage("now add tests"), core::AssistantMessage("added")});
  core::TurnRecord t;
  t.session_id = s->id;
  t.turn_id = "t1";
  t.started_at_ms = 1000;
  t.ended_at_ms = 2000;
  t.usage = {100, 20, 30, 10, 130};
  REQUIRE(store.RecordTurn(t).ok());
  t.turn_id = "t2";
  t.status = core::TurnStatus::kFailed;
  t.error = "stream dropped";
  t.usage = {5, 0, 1, 0, 6};
  REQUIRE(store.RecordTurn(t).ok());
  REQUIRE(store.RecordEvent(s->id, "t1", "approval", R"({"command":"ls","decision":"yes"})").ok());
  REQUIRE(store.RecordEvent(s->id, "t2", "error", R"({"type":"error","message":"boom"})").ok());
  return s->id;
}

std::string WriteInDir(const StoreDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.File(name);
  ::codex::testing::WriteFile(path, text);
  return path;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("Export then import keeps every item body byte for byte") {
  StoreDir dir;
  auto src = OpenOrDie(dir.Store("src.db"));
  const std::string id = MakeRichSession(*src);
  auto jsonl = storage::ExportSession(*src, id, ExportFormat::kJsonl);
  INFO(jsonl.status().ToString());
  REQUIRE(jsonl.ok());
  const std::string path = WriteInDir(dir, "out.jsonl", *jsonl);

  auto dst = OpenOrDie(dir.Store("dst.db"));
  auto outcome = storage::ImportRolloutFile(*dst, path);
  INFO(outcome.status().ToString());
  REQUIRE(outcome.ok());
  CHECK(outcome->imported);
  CHECK(outcome->session_id == id);

  auto a = src->FindSession(id);
  auto b = dst->FindSession(id);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(b->cwd == "/proj");
  CHECK(b->model == "gpt-x");
  CHECK(b->provider == "openai");
  CHECK(b->title == a->title);
  CHECK(b->source == "import");
  CHECK(b->tokens_used == a->tokens_used);
  auto ha = src->LoadHistory(*a);
  auto hb = dst->LoadHistory(*b);
  REQUIRE(ha.ok());
  REQUIRE(hb.ok());
  REQUIRE(ha->size() == hb->size());
  for (size_t i = 0; i < ha->size(); ++i) {
    INFO("item " << i);
    CHECK((*hb)[i].item.body == (*ha)[i].item.body);
    CHECK((*hb)[i].item.kind == (*ha)[i].item.kind);
    CHECK((*hb)[i].item.call_id == (*ha)[i].item.call_id);
    CHECK((*hb)[i].turn_id == (*ha)[i].turn_id);
  }
  // The compacted view is the same.
  auto ta = src->LoadTranscript(*a);
  auto tb = dst->LoadTranscript(*b);
  REQUIRE(tb.ok());
  REQUIRE(ta->size() == tb->size());
  CHECK(tb->size() == 4);
  auto turns = dst->LoadTurns(id);
  REQUIRE(turns.ok());
  REQUIRE(turns->size() == 2);
  CHECK((*turns)[0].usage == core::TokenUsage{100, 20, 30, 10, 130});
  CHECK((*turns)[1].status == core::TurnStatus::kFailed);
  CHECK((*turns)[1].error == "stream dropped");
  auto events = dst->LoadEvents(id);
  REQUIRE(events.ok());
  REQUIRE(events->size() == 2);
  CHECK((*events)[0].type == "approval");
  CHECK((*events)[0].payload_json == R"({"command":"ls","decision":"yes"})");
  CHECK((*events)[1].type == "error");

  // Exporting the import gives the same file again.
  auto again = storage::ExportSession(*dst, id, ExportFormat::kJsonl);
  REQUIRE(again.ok());
  auto strip_source = [](std::string s) {
    const auto pos = s.find("\"source\":\"");
    const auto end = s.find('"', pos + 10);
    return s.erase(pos, end - pos);
  };
  CHECK(strip_source(*again) == strip_source(*jsonl));

  // Importing the same file twice changes nothing.
  auto second = storage::ImportRolloutFile(*dst, path);
  REQUIRE(second.ok());
  CHECK_FALSE(second->imported);
  CHECK(dst->LoadHistory(*dst->FindSession(id))->size() == hb->size());
  CHECK(dst->LoadEvents(id)->size() == 2);
}

TEST_CASE("The thread goal travels with an exported rollout, the latest one winning") {
  StoreDir dir;
  auto src = OpenOrDie(dir.Store("src.db"));
  const std::string id = MakeRichSession(*src);
  core::ThreadGoal goal;
  goal.goal_id = "g1";
  goal.objective = "Refactor the parser";
  goal.token_budget = 5000;
  REQUIRE(src->RecordEvent(id, "t1", core::kGoalEventType, core::GoalEventPayload(goal)).ok());
  goal.status = "complete";
  REQUIRE(src->RecordEvent(id, "t2", core::kGoalEventType, core::GoalEventPayload(goal)).ok());
  auto jsonl = storage::ExportSession(*src, id, ExportFormat::kJsonl);
  REQUIRE(jsonl.ok());
  auto dst = OpenOrDie(dir.Store("dst.db"));
  auto outcome = storage::ImportRolloutFile(*dst, WriteInDir(dir, "goal.jsonl", *jsonl));
  REQUIRE(outcome.ok());
  auto latest = dst->LatestEvent(id, core::kGoalEventType);
  REQUIRE(latest.ok());
  REQUIRE(latest->has_value());
  auto back = core::ParseGoalEventPayload(**latest);
  REQUIRE(back.ok());
  CHECK(back->status == "complete");
  CHECK(back->objective == "Refactor the parser");
  CHECK(back->token_budget == 5000);
}

TEST_CASE("Markdown export reads as a transcript") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  const std::string id = MakeRichSession(*store);
  auto md = storage::ExportSession(*store, id, ExportFormat::kMarkdown);
  REQUIRE(md.ok());
  CHECK(md->rfind("# Refactor the parser, please\n", 0) == 0);
  CHECK(md->find("## Turn 1") != std::string::npos);
  CHECK(md->find("## Turn 2") != std::string::npos);
  CHECK(md->find("**Tool call** `shell` (`c1`)") != std::string::npos);
  // Output containing ``` gets a longer fence.
  CHECK(md->find("````\na.cc\nb.cc ```fenced```\n````") != std::string::npos);
  CHECK(md->find("**Compaction.**") != std::string::npos);
  CHECK(md->find("| 2 | failed |") != std::string::npos);
}

TEST_CASE("Import drops each malformed line, naming it, keeps the rest; no session_meta refuses") {
  // Codex 0.169 reads past a line it cannot parse ("failed to parse line as JSON"); a crash
  // it resumed leaves one (the cut line with the next glued on).
  StoreDir dir;
  const std::string meta =
      R"({"timestamp":"2026-01-02T03:04:05.678Z","type":"session_meta","payload":{"id":"01900000-0000-7000-8000-0000000000ab","cwd":"/x","timestamp":"2026-01-02T03:04:05.000Z"}})";
  const std::string user =
      R"({"timestamp":"2026-01-02T03:04:06.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"kept"}]}})";
  struct Case {
    std::string name, bad, why;
  };
  for (const Case& c :
       {Case{"a.jsonl", "{oops", "not a rollout line"},
        Case{"b.jsonl", std::string("{\"type\":\"event_msg\",") + '\0' + "\"payload\":{}}",
             "not a rollout line"},
        Case{"c.jsonl", R"({"type":"response_item","payload":{"x":1}})", ""},
        Case{"d.jsonl", user.substr(0, 60) + meta, "not a rollout line"},
        Case{"e.jsonl", R"({"type":"codex_turn","payload":{"turn_id":"t","started_at_ms":"x"}})",
             "malformed rollout line"}}) {
    INFO(c.name);
    auto store = OpenOrDie(dir.Store(c.name + ".db"));
    auto outcome = storage::ImportRolloutFile(
        *store, WriteInDir(dir, c.name, meta + "\n" + c.bad + "\n" + user + "\n"));
    INFO(outcome.status().ToString());
    REQUIRE(outcome.ok());
    CHECK(outcome->imported);
    REQUIRE(outcome->dropped_lines.size() == 1);
    CHECK(outcome->dropped_lines[0].line == 2);
    CHECK(outcome->dropped_lines[0].why.find(c.why) != std::string::npos);
    auto s = store->FindSession("01900000-0000-7000-8000-0000000000ab");
    REQUIRE(s.ok());
    auto history = store->LoadHistory(*s);
    REQUIRE(history.ok());
    REQUIRE(history->size() == 1);
    CHECK(core::MessageText((*history)[0].item) == "kept");
    // A dropped line leaves nothing behind (e.jsonl's turn is not recorded).
    auto turns = store->LoadTurns(s->id);
    REQUIRE(turns.ok());
    CHECK(turns->empty());
  }

  auto store = OpenOrDie(dir.Store("s.db"));
  auto no_meta = storage::ImportRolloutFile(
      *store,
      WriteInDir(dir, "n.jsonl", R"({"type":"response_item","payload":{"type":"message"}})"));
  REQUIRE_FALSE(no_meta.ok());
  CHECK(no_meta.status().code() == StatusCode::kInvalidArgument);
  CHECK(no_meta.status().message().find("no session_meta") != std::string::npos);
  // A session_meta that is itself malformed: refused, that line named.
  auto bad_meta = storage::ImportRolloutFile(
      *store, WriteInDir(dir, "m.jsonl",
                         R"({"type":"session_meta","payload":{"id":"nope"}})"
                         "\n" +
                             user + "\n"));
  REQUIRE_FALSE(bad_meta.ok());
  CHECK(bad_meta.status().message().find("m.jsonl:1: session_meta has no valid \"id\"") !=
        std::string::npos);
  CHECK(store->FindSession("01900000-0000-7000-8000-0000000000ab").status().code() ==
        StatusCode::kNotFound);

  auto missing = storage::CollectRolloutFiles({dir.File("nope")});
  CHECK(missing.files.empty());
  REQUIRE(missing.errors.size() == 1);
  CHECK(missing.errors[0].message().find("nope: no such file or directory") != std::string::npos);

  // A minimal valid file: timestamps come from the meta line.
  auto ok = storage::ImportRolloutFile(*store, WriteInDir(dir, "d.jsonl", meta + "\n"));
  REQUIRE(ok.ok());
  auto s = store->FindSession("01900000-0000-7000-8000-0000000000ab");
  REQUIRE(s.ok());
  CHECK(s->created_at_ms == 1767323045000);
  CHECK(s->cwd == "/x");
  CHECK_FALSE(s->head_item_id.has_value());
}

TEST_CASE("Export tells its progress item by item, ending at the total, in both formats") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  const std::string id = MakeRichSession(*store);
  for (ExportFormat format : {ExportFormat::kJsonl, ExportFormat::kMarkdown}) {
    std::vector<std::pair<int64_t, int64_t>> calls;
    auto text = storage::ExportSession(
        *store, id, format, [&](int64_t done, int64_t total) { calls.emplace_back(done, total); });
    REQUIRE(text.ok());
    // The same text as without a listener.
    CHECK(*text == *storage::ExportSession(*store, id, format));
    REQUIRE(calls.size() >= 2);
    const int64_t total = calls.back().second;
    CHECK(total > 3);
    CHECK(calls.back().first == total);
    for (size_t i = 1; i < calls.size(); ++i) {
      CHECK(calls[i].first >= calls[i - 1].first);
      CHECK(calls[i].second == total);
    }
  }
}

TEST_CASE("A rollout cut off by a crash imports every complete line and names what it dropped") {
  StoreDir dir;
  auto src = OpenOrDie(dir.Store("src.db"));
  const std::string id = MakeRichSession(*src);
  auto jsonl = storage::ExportSession(*src, id, ExportFormat::kJsonl);
  REQUIRE(jsonl.ok());
  auto lines = Lines(*jsonl);
  REQUIRE(lines.size() > 4);
  // Every cut inside the last response_item line (what a crash while writing it leaves):
  // the lines before it are imported, the torn one is reported.
  size_t last_item = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("\"type\":\"response_item\"") != std::string::npos) last_item = i;
  }
  std::string head;
  for (size_t i = 0; i < last_item; ++i) head += lines[i] + "\n";
  const std::string& torn = lines[last_item];
  for (size_t cut : {size_t{1}, torn.size() / 2, torn.size() - 1}) {
    INFO("cut at " << cut);
    auto store = OpenOrDie(dir.Store("cut" + std::to_string(cut) + ".db"));
    auto outcome = storage::ImportRolloutFile(
        *store, WriteInDir(dir, "cut.jsonl", head + torn.substr(0, cut)));
    INFO(outcome.status().ToString());
    REQUIRE(outcome.ok());
    CHECK(outcome->imported);
    REQUIRE(outcome->dropped_tail.has_value());
    CHECK(outcome->dropped_tail->line == last_item + 1);
    CHECK(outcome->dropped_tail->bytes == cut);
    // What was kept is what the complete lines say: the same file without the torn line.
    auto again = storage::ExportSession(*store, id, ExportFormat::kJsonl);
    REQUIRE(again.ok());
    auto whole = OpenOrDie(dir.Store("whole" + std::to_string(cut) + ".db"));
    auto ref = storage::ImportRolloutFile(*whole, WriteInDir(dir, "head.jsonl", head));
    REQUIRE(ref.ok());
    CHECK_FALSE(ref->dropped_tail.has_value());
    auto ref_text = storage::ExportSession(*whole, id, ExportFormat::kJsonl);
    REQUIRE(ref_text.ok());
    CHECK(Lines(*again).size() == Lines(*ref_text).size());
  }
  // A complete last line without its newline is kept, not dropped.
  auto store = OpenOrDie(dir.Store("complete.db"));
  auto complete = storage::ImportRolloutFile(*store, WriteInDir(dir, "c.jsonl", head + torn));
  REQUIRE(complete.ok());
  CHECK_FALSE(complete->dropped_tail.has_value());
  // A torn line that is not the last (Codex resumed the file after the crash): dropped and
  // named, the lines after it kept.
  auto middle_store = OpenOrDie(dir.Store("middle.db"));
  auto middle = storage::ImportRolloutFile(
      *middle_store, WriteInDir(dir, "m.jsonl", head + torn.substr(0, 10) + "\n" + torn + "\n"));
  REQUIRE(middle.ok());
  REQUIRE(middle->dropped_lines.size() == 1);
  CHECK(middle->dropped_lines[0].line == last_item + 1);
  auto kept = storage::ExportSession(*middle_store, id, ExportFormat::kJsonl);
  auto complete_text = storage::ExportSession(*store, id, ExportFormat::kJsonl);
  REQUIRE(kept.ok());
  REQUIRE(complete_text.ok());
  CHECK(Lines(*kept).size() == Lines(*complete_text).size());
}

TEST_CASE("CollectRolloutFiles walks directories recursively for .jsonl") {
  StoreDir dir;
  std::filesystem::create_directories(dir.File("2026/01/02"));
  WriteInDir(dir, "2026/01/02/rollout-b.jsonl", "");
  WriteInDir(dir, "2026/01/02/notes.txt", "");
  WriteInDir(dir, "2026/rollout-a.jsonl", "");
  const std::string explicit_file = WriteInDir(dir, "x.txt", "");
  auto collected = storage::CollectRolloutFiles({dir.File("2026"), explicit_file});
  CHECK(collected.errors.empty());
  const auto& files = collected.files;
  REQUIRE(files.size() == 3);
  CHECK(files[0] == dir.File("2026/01/02/rollout-b.jsonl"));
  CHECK(files[1] == dir.File("2026/rollout-a.jsonl"));
  CHECK(files[2] == explicit_file);
}

TEST_CASE("Imported turns and title follow core/transcript.h on tricky user messages") {
  StoreDir dir;
  auto store = OpenOrDie(dir.Store("s.db"));
  const std::string id = "01900000-0000-7000-8000-0000000000cd";
  auto line = [](const std::string& payload) {
    return R"({"timestamp":"2026-01-02T03:04:06.000Z","type":"response_item","payload":)" +
           payload + "}\n";
  };
  auto user = [&](const std::string& text) {
    return line(R"({"type":"message","role":"user","content":[{"type":"input_text","text":)" +
                nlohmann::json(text).dump() + "}]}");
  };
  const std::string text =
      R"({"timestamp":"2026-01-02T03:04:05.000Z","type":"session_meta","payload":{"id":")" + id +
      R"(","cwd":"/x"}})" + "\n" +
      // Context, as Codex writes it (whitespace before the marker included).
      user("\n  <environment_context>\n  <cwd>/x</cwd>\n</environment_context>") +
      user("<permissions instructions>\nread-only\n</permissions instructions>") +
      user("# AGENTS.md instructions for /x\n\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>") +
      user("<user_instructions>\nuse tabs\n</user_instructions>") + user("   \n") +
      // Codex's own summary is not a prompt.
      user(
          "Another language model started to solve this problem and produced a summary of its "
          "thinking process. It did X.") +
      // An image alone is the person's input: turn 1, but no title text.
      line(R"({"type":"message","role":"user","content":[{"type":"input_image","image_url":)"
           R"("data:image/png;base64,iVBORw0KGgo="}]})") +
      line(
          R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"a cat"}]})") +
      // Looks like a marker but is not one: turn 2, and the title.
      user("# AGENTS.md is out of date, please fix it");
  auto imported = storage::ImportRolloutFile(*store, WriteInDir(dir, "tricky.jsonl", text));
  INFO(imported.status().ToString());
  REQUIRE(imported.ok());
  auto s = store->FindSession(id);
  REQUIRE(s.ok());
  CHECK(s->title.find("AGENTS.md is out of date") != std::string::npos);

  auto md = storage::ExportSession(*store, id, ExportFormat::kMarkdown);
  REQUIRE(md.ok());
  CHECK(md->find("## Turn 1") != std::string::npos);
  CHECK(md->find("## Turn 2\n\n**User**\n\n# AGENTS.md is out of date") != std::string::npos);
  CHECK(md->find("## Turn 3") == std::string::npos);
  CHECK(md->find("<summary>user context</summary>\n\n```\n\n  <environment_context>") !=
        std::string::npos);
  CHECK(md->find("**User** _(compacted history)_\n\nAnother language model") != std::string::npos);
}
