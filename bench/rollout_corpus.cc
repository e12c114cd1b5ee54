#include "bench/rollout_corpus.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "core/uuid.h"
#include "storage/rollout.h"

namespace codex::bench {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void CorpusDie(const std::string& why) {
  std::fprintf(stderr, "storage_bench: corpus: %s\n", why.c_str());
  std::exit(1);
}

std::string ReadWhole(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// `s` as the inside of a JSON string (no quotes).
std::string JsonInner(const std::string& s) {
  const std::string d =
      nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return d.substr(1, d.size() - 2);
}

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

using Subs = std::vector<std::pair<std::string, std::string>>;

std::string Apply(std::string line, const Subs& subs) {
  for (const auto& [from, to] : subs) ReplaceAll(line, from, to);
  return line;
}

// Lines of the template (tests/data/reference/codex-0.169/rollouts/home_basic-…):
// 0 session_meta; 1 task_started; 2..4 developer + context messages,
// world_state; 5 turn_context; 6 thread_settings_applied; 7..8 the user
// message and its item_completed; 9..15 one exec_command call (reasoning,
// call, usage, item_completed with the output, output, token_count);
// 16..21 the answer (reasoning, message, usage); 22 task_complete.
constexpr size_t kTemplateLines = 23;
const char* const kSessionId = "01a1fca2-b328-7911-a8df-785752aa20b5";
const char* const kTurnId = "01a1fca2-b345-78b3-998c-83a2122cbb2a";
const char* const kOutput = R"(pyenv: cannot rehash: /home/user/.pyenv/shims isn't writable\nhi\n)";

struct Sources {
  struct File {
    std::string path;  // relative to the source root
    std::vector<std::string> lines;
  };
  std::vector<File> code;                // tool outputs cut from these
  std::vector<std::string> prose;        // docs lines with words, for answers
  std::vector<std::string> identifiers;  // for prompts
};

Sources LoadSources() {
  Sources s;
  const fs::path root = CODEX_SOURCE_DIR;
  for (const char* dir : {"storage", "cli", "core", "compaction", "sandbox", "docs"}) {
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cc" || ext == ".h" || ext == ".md")) {
        found.push_back(e.path());
      }
    }
    std::sort(found.begin(), found.end());
    for (const fs::path& p : found) {
      Sources::File f{fs::relative(p, root).string(), SplitLines(ReadWhole(p))};
      if (f.lines.size() < 20) continue;
      if (p.extension() == ".md") {
        for (const std::string& l : f.lines) {
          if (l.size() > 60 && l[0] != '#' && l[0] != '|' && l[0] != ' ') s.prose.push_back(l);
        }
      }
      s.code.push_back(std::move(f));
    }
  }
  for (const auto& f : s.code) {
    for (const std::string& l : f.lines) {
      std::string word;
      for (char c : l + " ") {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
          word += c;
        } else {
          if (word.size() >= 8 && std::isupper(static_cast<unsigned char>(word[0]))) {
            s.identifiers.push_back(word);
          }
          word.clear();
        }
      }
    }
  }
  if (s.code.empty() || s.prose.empty() || s.identifiers.empty()) {
    CorpusDie(std::string("no sources under ") + CODEX_SOURCE_DIR);
  }
  return s;
}

class Writer {
 public:
  Writer(std::vector<std::string> tmpl, const Sources& src, uint32_t seed,
         CorpusContent content = CorpusContent::kCodexLike)
      : tmpl_(std::move(tmpl)), src_(src), rng_(seed), content_(content) {}

  // One session's rollout text; `items` counts its response_item lines.
  std::string Session(int64_t* items) {
    const std::string sid = core::NewUuidV7(base_ms_ + counter_ * 60'000);
    std::string out = Apply(tmpl_[0], {{kSessionId, sid}}) + "\n";
    const int turns = Pick(1, 8);
    for (int t = 0; t < turns; ++t) {
      const std::string tid = core::NewUuidV7(base_ms_ + counter_ * 60'000 + t * 1000);
      const Subs turn = {{kSessionId, sid},
                         {kTurnId, tid},
                         {"please run-tool now", JsonInner(Prompt())},
                         {"Done 1.", JsonInner(Answer())},
                         {"ENC-R-1", Encrypted()},
                         {"\"rs_1\"", "\"rs_" + Next() + "\""},
                         {"\"msg_1\"", "\"msg_" + Next() + "\""},
                         {"\"resp_1\"", "\"resp_" + Next() + "\""}};
      // The first turn carries the context messages, world_state and settings.
      const std::vector<size_t> head =
          t == 0 ? std::vector<size_t>{1, 2, 3, 4, 5, 6, 7, 8} : std::vector<size_t>{1, 5, 7, 8};
      for (size_t i : head) out += Apply(tmpl_[i], turn) + "\n";
      const int calls = Pick(0, 5);
      for (int c = 0; c < calls; ++c) {
        Subs call = turn;
        const auto& [cmd, output] = ToolRun();
        call.insert(call.end(), {{"\"rs_0\"", "\"rs_" + Next() + "\""},
                                 {"ENC-R-0", Encrypted()},
                                 {"\"fc_0\"", "\"fc_" + Next() + "\""},
                                 {"call_0", "call_" + Next()},
                                 {"\"resp_0\"", "\"resp_" + Next() + "\""},
                                 {"echo hi", JsonInner(cmd)},
                                 {kOutput, JsonInner(output)}});
        for (size_t i = 9; i <= 15; ++i) out += Apply(tmpl_[i], call) + "\n";
        *items += 3;
      }
      for (size_t i = 16; i < kTemplateLines; ++i) out += Apply(tmpl_[i], turn) + "\n";
      *items += (t == 0 ? 3 : 1) + 2;  // context messages, prompt; reasoning, answer
    }
    ++counter_;
    return out;
  }

 private:
  int Pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::string Next() { return std::to_string(++ids_); }

  std::string Encrypted() {
    static const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string s = "gAAAAA";
    const int n = Pick(800, 2000);
    for (int i = 0; i < n; ++i) s += kB64[Pick(0, 63)];
    return s;
  }

  const std::string& Identifier() {
    return src_
        .identifiers[static_cast<size_t>(Pick(0, static_cast<int>(src_.identifiers.size()) - 1))];
  }

  std::string Prompt() {
    static const char* kForms[] = {
        "why does %s fail when the store is empty? fix it and add a test",
        "rename %s to something clearer and update the callers",
        "%s is slow on a big session; find out why",
        "explain what %s does and where it is used",
        "the build breaks in %s after the last merge, please fix",
    };
    const char* form = kForms[Pick(0, 4)];
    char buf[512];
    std::snprintf(buf, sizeof buf, form, Identifier().c_str());
    return buf;
  }

  std::string Answer() {
    std::string s;
    const int n = Pick(1, 5);
    for (int i = 0; i < n; ++i) {
      if (i) s += "\n\n";
      s += src_.prose[static_cast<size_t>(Pick(0, static_cast<int>(src_.prose.size()) - 1))];
    }
    return s;
  }

  // A command and what it printed: a slice of a real file, or for the
  // stress contents 8-16 KB of tokens that never repeat.
  std::pair<std::string, std::string> ToolRun() {
    if (content_ != CorpusContent::kCodexLike) return {"cat out.txt", Noise(Pick(8'000, 16'000))};
    const auto& f = src_.code[static_cast<size_t>(Pick(0, static_cast<int>(src_.code.size()) - 1))];
    // Most commands print a few lines; some print a whole screen or more.
    const int want = Pick(0, 9) < 7 ? Pick(1, 30) : Pick(30, 200);
    const int len = std::min<int>(want, static_cast<int>(f.lines.size()));
    const int from = Pick(0, static_cast<int>(f.lines.size()) - len);
    std::string output;
    for (int i = from; i < from + len && output.size() < 12'000; ++i) {
      output += f.lines[static_cast<size_t>(i)] + "\n";
    }
    return {
        "sed -n '" + std::to_string(from + 1) + "," + std::to_string(from + len) + "p' " + f.path,
        output};
  }

  // About `bytes` of the stress content's lines.
  std::string Noise(int bytes) {
    static const char kHex[] = "0123456789abcdef";
    static const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string s;
    while (s.size() < static_cast<size_t>(bytes)) {
      switch (content_) {
        case CorpusContent::kDistinctWords:  // words of 3-10 random letters
          for (int w = 0; w < 10; ++w) {
            for (int n = Pick(3, 10); n > 0; --n) s += static_cast<char>('a' + Pick(0, 25));
            s += w == 9 ? '\n' : ' ';
          }
          break;
        case CorpusContent::kHashes: {  // `git log --oneline`-like: a hash, words, a UUID
          for (int i = 0; i < 40; ++i) s += kHex[Pick(0, 15)];
          static const char* kWhat[] = {"parser", "store", "search", "sandbox", "config"};
          s += std::string(" fix the ") + kWhat[Pick(0, 4)] + " in ";
          s += core::NewUuidV7(base_ms_ + Pick(0, 1'000'000'000)) + "\n";
          break;
        }
        case CorpusContent::kBase64:  // a blob, 76 columns a line
          for (int i = 0; i < 76; ++i) s += kB64[Pick(0, 63)];
          s += '\n';
          break;
        case CorpusContent::kCodexLike:
          return s;
      }
    }
    return s;
  }

  std::vector<std::string> tmpl_;
  const Sources& src_;
  std::mt19937 rng_;
  CorpusContent content_;
  int64_t counter_ = 0;
  int64_t ids_ = 0;
  const int64_t base_ms_ = 1'780'000'000'000;
};

}  // namespace

RolloutCorpus WriteRolloutCorpus(const std::string& dir, int sessions, uint32_t seed,
                                 CorpusContent content) {
  const fs::path tmpl_path =
      fs::path(CODEX_SOURCE_DIR) / "tests/data/reference/codex-0.169/rollouts/" /
      "home_basic-rollout-2026-11-21T05-44-43-01a1fca2-b328-7911-a8df-785752aa20b5.jsonl";
  std::vector<std::string> tmpl = SplitLines(ReadWhole(tmpl_path));
  if (tmpl.size() < kTemplateLines || tmpl[0].find("\"session_meta\"") == std::string::npos ||
      tmpl[11].find("\"function_call\"") == std::string::npos ||
      tmpl[14].find(kOutput) == std::string::npos ||
      tmpl[22].find("\"task_complete\"") == std::string::npos) {
    CorpusDie("the template rollout " + tmpl_path.string() + " is not the shape this bench knows");
  }
  const Sources src = LoadSources();
  Writer w(std::move(tmpl), src, seed, content);
  RolloutCorpus corpus;
  fs::create_directories(dir);
  for (int s = 0; s < sessions; ++s) {
    const std::string text = w.Session(&corpus.items);
    const std::string path = dir + "/rollout-" + std::to_string(s) + ".jsonl";
    std::ofstream(path, std::ios::binary) << text;
    corpus.files.push_back(path);
    corpus.jsonl_bytes += static_cast<int64_t>(text.size());
  }
  return corpus;
}

void ImportCorpus(storage::SessionDatabase& store, const RolloutCorpus& corpus) {
  for (const std::string& f : corpus.files) {
    auto r = storage::ImportRolloutFile(store, f);
    if (!r.ok()) CorpusDie("import " + f + ": " + r.status().ToString());
  }
}

void PrintStressSize(const char* name, const RolloutCorpus& corpus, int64_t bytes) {
  const auto jsonl = static_cast<double>(corpus.jsonl_bytes);
  std::printf("    %-17s JSONL %5.1f MB -> %6.1f MB = %.2fx\n", name, jsonl / 1e6,
              static_cast<double>(bytes) / 1e6, static_cast<double>(bytes) / jsonl);
}

void PrintCorpusSize(const RolloutCorpus& corpus, int64_t items, int64_t bytes,
                     const char* store_after, const char* target, const char* where) {
  const auto jsonl = static_cast<double>(corpus.jsonl_bytes);
  const auto n = static_cast<double>(items);
  const auto db = static_cast<double>(bytes);
  std::printf(
      "Codex-like corpus: %zu rollouts, %lld items, JSONL %.1f MB (%.0f B/item)\n"
      "  %s: %.1f MB = %.0f B/item; database / JSONL = %.2fx   (target <= %s)\n"
      "  where the bytes are (%s):",
      corpus.files.size(), static_cast<long long>(items), jsonl / 1e6, jsonl / n, store_after,
      db / 1e6, db / n, db / jsonl, target, where);
}

namespace {

// The median and quartiles of `walls` (sorted here).
struct Spread {
  double median = 0, p25 = 0, p75 = 0;
};
Spread SpreadOf(std::vector<double> walls) {
  std::sort(walls.begin(), walls.end());
  const auto at = [&](double p) {
    return walls[static_cast<size_t>(p * static_cast<double>(walls.size() - 1) + 0.5)];
  };
  return {at(0.5), at(0.25), at(0.75)};
}

// One search of the corpus's common word: its wall ms; `*hits` its hits.
double TimedSearch(storage::SessionDatabase& store, int limit, size_t* hits,
                   const char* word = kCorpusCommonWord) {
  storage::SearchQuery q;
  q.text = word;
  q.limit = limit;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = store.Search(q);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!r.ok()) Die(r.status(), "search");
  *hits = r->size();
  return ms;
}

int RunsFor(int limit) { return limit <= 200 ? kCorpusSearchRuns : 5; }

}  // namespace

void PrintCorpusSearch(storage::SessionDatabase& store) {
  for (int limit : {20, 100, 10'000}) {
    size_t hits = 0;
    std::vector<double> walls;
    for (int i = 0; i < RunsFor(limit); ++i) walls.push_back(TimedSearch(store, limit, &hits));
    const Spread s = SpreadOf(walls);
    std::printf("  corpus search '%s' --limit %-6d %5zu hits: wall %.2f ms (%.2f-%.2f, %d runs)\n",
                kCorpusCommonWord, limit, hits, s.median, s.p25, s.p75, RunsFor(limit));
  }
}

void PrintSearchDepth(storage::SessionDatabase& store) {
  for (int limit : {20, 200, 2'000, 10'000}) {
    size_t hits = 0;
    std::vector<double> walls;
    for (int i = 0; i < RunsFor(limit); ++i)
      walls.push_back(TimedSearch(store, limit, &hits, "src"));
    const Spread s = SpreadOf(walls);
    std::printf("search depth: 'src' --limit %-6d %5zu hits: wall %.2f ms (%.2f-%.2f, %d runs)\n",
                limit, hits, s.median, s.p25, s.p75, RunsFor(limit));
  }
}

void PrintCorpusSearchAgainst(storage::SessionDatabase& store, const char* name,
                              storage::SessionDatabase& other, const char* other_name) {
  std::printf("  the same searches alternated with %s's on the same corpus (median, quartiles):\n",
              other_name);
  for (int limit : {20, 100, 10'000}) {
    size_t hits = 0, other_hits = 0;
    std::vector<double> mine, theirs;
    for (int i = 0; i < RunsFor(limit); ++i) {
      mine.push_back(TimedSearch(store, limit, &hits));
      theirs.push_back(TimedSearch(other, limit, &other_hits));
    }
    const Spread a = SpreadOf(mine), b = SpreadOf(theirs);
    std::printf(
        "    '%s' --limit %-6d %s %.2f ms (%.2f-%.2f), %s %.2f ms (%.2f-%.2f): %.2fx, %d runs "
        "each%s\n",
        kCorpusCommonWord, limit, name, a.median, a.p25, a.p75, other_name, b.median, b.p25, b.p75,
        a.median / b.median, RunsFor(limit), hits == other_hits ? "" : " (hit counts differ)");
  }
}

std::vector<core::Item> BenchTurn(int t) {
  core::Item call;
  call.kind = core::ItemKind::kFunctionCall;
  call.call_id = "call_" + std::to_string(t);
  call.body =
      R"({"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"rg -n TODO src | head -50\"],\"timeout_ms\":10000}","call_id":")" +
      call.call_id + "\"}";
  std::string output;
  for (int i = 0; i < 8; ++i) output += "src/file" + std::to_string(i) + ".cc:42: TODO tidy\n";
  return {core::UserMessage("Please look at the TODOs in src and fix turn " + std::to_string(t)),
          call, core::FunctionCallOutput(call.call_id, output),
          core::AssistantMessage("I fixed the TODOs in src/file1.cc and src/file2.cc for turn " +
                                 std::to_string(t) + ". The tests pass.")};
}

void Die(const Status& status, const char* what) {
  std::fprintf(stderr, "storage_bench: %s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

}  // namespace codex::bench
