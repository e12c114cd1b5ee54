#include "storage/packed_text.h"

#include <sqlite3.h>
#include <zlib.h>

#include <cstdint>

namespace codex::storage {
namespace {

// Dictionary 1: the payload shapes of a Codex 0.169 rollout
// (tests/data/reference/codex-0.169/rollouts, one of each line type, string
// values that are ids or prose blanked) and this store's own item shapes,
// the most frequent last (deflate reaches the end of a dictionary cheapest).
// Part of the stored format: never edit it.
constexpr char kDictionaryV1[] =
    R"~({"account_scoped":true,"session_id":"","id":"","timestamp":"2026-11-21T05:44:43.571Z","cwd":"/home/u)~"
    R"~(ser/project","runtime_workspace_roots":["/home/user/project"],"originator":"codex_exec","cli_version)~"
    R"~(":"0.169.0","source":"exec","thread_source":"user","model_provider":"fake","base_instructions":{"tex)~"
    R"~(t":"","provenance":{"type":"model","model":"gpt-test"}},"history_mode":"paginated","context_window":)~"
    R"~({"window_id":""},"git":{}}{"type":"task_started","turn_attribution":{"turn_id":"","turn_trigger":"ex)~"
    R"~(ec","parent_turn_id":null,"initiating_agent_path":null,"root_turn_id":""},"turn_id":"","root_turn_id)~"
    R"~(":"","started_at":1795239883,"model_context_window":258400,"collaboration_mode_kind":"default"}{"typ)~"
    R"~(e":"message","id":"","role":"developer","content":[{"type":"input_text","text":""},{"type":"input_te)~"
    R"~(xt","text":""}],"internal_chat_message_metadata_passthrough":{"turn_id":"","create_time":1795239883.)~"
    R"~(6562796,"content_item_kinds":["host_skills.instructions","permissions.instructions"],"content_item_m)~"
    R"~(etadata":[{"provenance":{"type":"skills"}},{"provenance":{"type":"harness","hook":false}}]}}{"type":)~"
    R"~("message","id":"","role":"user","content":[{"type":"input_text","text":""}],"internal_chat_message_m)~"
    R"~(etadata_passthrough":{"turn_id":"","create_time":1795239883.6562996,"content_item_kinds":[""],"conte)~"
    R"~(nt_item_metadata":[{"provenance":{"type":"harness","hook":false}}]}}{"full":true,"state":{"agents_md)~"
    R"~(":{},"apps_instructions":false,"collaboration_mode":{"mode":"default","model":"gpt-test","instructio)~"
    R"~(ns":""},"context_window_guidance":"","environments":{"environments":{"local":{"cwd":"/home/user/proj)~"
    R"~(ect","status":"available","shell":"bash"}},"current_date":"2026-11-21","timezone":"Etc/UTC","filesys)~"
    R"~(tem":""},"environments_instructions":false,"git_attribution":false,"host_skills":{"body":"","include)~"
    R"~(Instructions":true},"managed_developer_instructions":{},"model":"gpt-test","model_catalog":"","multi)~"
    R"~(_agent_mode":{},"permissions":{"instructions":"","approved_command_prefixes":[]},"persistent_mode":{)~"
    R"~(},"plugins_instructions":false,"realtime":{"active":false},"skills":{"includeInstructions":true}}}{")~"
    R"~(turn_id":"","root_turn_id":"","disabled_plugin_ids":[],"cwd":"/home/user/project","approval_policy":)~"
    R"~("never","approvals_reviewer":"user","permission_profile":{"type":"managed","file_system":{"type":"re)~"
    R"~(stricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"t)~"
    R"~(ype":"path","path":"/home/user/project"},"access":"write"}]},"network":"restricted"},"model":"gpt-te)~"
    R"~(st","collaboration_mode":{"mode":"default","settings":{"model":"gpt-test","reasoning_effort":null,"d)~"
    R"~(eveloper_instructions":null}},"multi_agent_version":"v1","realtime_active":false,"summary":"none","s)~"
    R"~(andbox_policy":{"type":"workspace-write","network_access":false,"exclude_tmpdir_env_var":false,"excl)~"
    R"~(ude_slash_tmp":false},"file_system_sandbox_policy":{"kind":"restricted","entries":[{"path":{"type":")~"
    R"~(special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"path","path":"/home/user/project)~"
    R"~("},"access":"write"}]}}{"type":"thread_settings_applied","thread_id":"","thread_settings":{"model":")~"
    R"~(gpt-test","model_provider_id":"fake","approval_policy":"never","approvals_reviewer":"user","requeste)~"
    R"~(d_approvals_reviewer":"user","permission_profile":{"type":"managed","file_system":{"type":"restricte)~"
    R"~(d","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"p)~"
    R"~(ath","path":"/home/user/project"},"access":"write"}]},"network":"restricted"},"cwd":"/home/user/proj)~"
    R"~(ect","runtime_workspace_roots":["/home/user/project"],"collaboration_mode":{"mode":"default","settin)~"
    R"~(gs":{"model":"gpt-test","reasoning_effort":null,"developer_instructions":null}},"disabled_plugin_ids)~"
    R"~(":[]}}{"type":"item_completed","thread_id":"","turn_id":"","item":{"type":"UserMessage","id":"","con)~"
    R"~(tent":[{"type":"text","text":"","text_elements":[]}]},"started_at_ms":1795239883672,"completed_at_ms)~"
    R"~(":1795239883672}{"type":"item_completed","thread_id":"","turn_id":"","item":{"type":"Reasoning","id")~"
    R"~(:"","summary_text":[],"raw_content":[]},"started_at_ms":1795239883749,"completed_at_ms":179523988374)~"
    R"~(9}{"type":"reasoning","id":"","summary":[],"content":null,"encrypted_content":"ENC-R-0","internal_ch)~"
    R"~(at_message_metadata_passthrough":{"turn_id":""}}{"type":"function_call","id":"","name":"exec_command)~"
    R"~(","arguments":"","call_id":"","internal_chat_message_metadata_passthrough":{"turn_id":""}}{"thread_i)~"
    R"~(d":"","turn_id":"","session_id":"","root_turn_id":"","response_id":"","usage":{"input_tokens":100,"c)~"
    R"~(ached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":5,"t)~"
    R"~(otal_tokens":110},"turn_token_usage":{"input_tokens":100,"cached_input_tokens":0,"cache_write_input_)~"
    R"~(tokens":0,"output_tokens":10,"reasoning_output_tokens":5,"total_tokens":110},"thread_token_usage":{")~"
    R"~(input_tokens":100,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":10,"reasoning)~"
    R"~(_output_tokens":5,"total_tokens":110}}{"type":"item_completed","thread_id":"","turn_id":"","item":{")~"
    R"~(type":"CommandExecution","id":"","process_id":"61768","command":["/bin/bash","-lc"],"cwd":"","parsed)~"
    R"~(_cmd":[{"type":"unknown","cmd":""}],"source":"unified_exec_startup","status":"completed","aggregated)~"
    R"~(_output":"","exit_code":0,"duration":{"secs":0,"nanos":15715948}},"started_at_ms":1795239883940,"com)~"
    R"~(pleted_at_ms":1795239883956}{"type":"function_call_output","id":"","call_id":"","output":"","interna)~"
    R"~(l_chat_message_metadata_passthrough":{"turn_id":"","create_time":1795239883.9587271}}{"type":"token_)~"
    R"~(count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":0,"cache_write_input_to)~"
    R"~(kens":0,"output_tokens":10,"reasoning_output_tokens":5,"total_tokens":110},"last_token_usage":{"inpu)~"
    R"~(t_tokens":100,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":10,"reasoning_out)~"
    R"~(put_tokens":5,"total_tokens":110},"last_usage_includes_reasoning":false,"model_context_window":25840)~"
    R"~(0},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":null,"secondary":null,"credits":nul)~"
    R"~(l,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":nu)~"
    R"~(ll}}{"type":"item_completed","thread_id":"","turn_id":"","item":{"type":"AgentMessage","id":"","cont)~"
    R"~(ent":[{"type":"Text","text":""}]},"started_at_ms":1795239883988,"completed_at_ms":1795239883988}{"ty)~"
    R"~(pe":"message","id":"","role":"assistant","content":[{"type":"output_text","text":""}],"internal_chat)~"
    R"~(_message_metadata_passthrough":{"turn_id":"","content_item_kinds":["unknown"]}}{"type":"task_complet)~"
    R"~(e","root_turn_id":"","turn_id":"","last_agent_message":"","started_at":1795239883,"completed_at":179)~"
    R"~(5239883,"duration_ms":400,"time_to_first_token_ms":158}{"message":"","replacement_history":[{"type":)~"
    R"~("message","id":"","role":"developer","content":[{"type":"input_text","text":""},{"type":"input_text")~"
    R"~(,"text":""}],"internal_chat_message_metadata_passthrough":{"turn_id":"","content_item_kinds":["host_)~"
    R"~(skills.instructions","permissions.instructions"],"content_item_metadata":[{"provenance":{"type":"ski)~"
    R"~(lls"}},{"provenance":{"type":"harness","hook":false}}]}},{"type":"message","id":"","role":"user","co)~"
    R"~(ntent":[{"type":"input_text","text":""}],"internal_chat_message_metadata_passthrough":{"turn_id":"",)~"
    R"~("content_item_kinds":[""],"content_item_metadata":[{"provenance":{"type":"harness","hook":false}}]}})~"
    R"~(],"replacement_history_metadata":[{"history_sequence":8,"sampled_through_sequence":3,"client_authore)~"
    R"~(d":false},{"history_sequence":9,"sampled_through_sequence":3,"client_authored":false}],"retained_con)~"
    R"~(text":{"verified_answers":[],"incomplete":false,"user_messages":[{"revision":"","order":0,"turn_id":)~"
    R"~("","message_id":"","text":"","complete":true}],"user_messages_incomplete":false,"assistant_messages")~"
    R"~(:[{"revision":"","order":1,"turn_id":"","message_id":"","text":"","complete":true}],"assistant_messa)~"
    R"~(ges_incomplete":false,"next_order":3},"window_number":1,"first_window_id":"","previous_window_id":"")~"
    R"~(,"window_id":"","compaction_response_id":"","latest_token_usage_record":{"thread_id":"","turn_id":"")~"
    R"~(,"session_id":"","root_turn_id":"","response_id":"","usage":{"input_tokens":30000,"cached_input_toke)~"
    R"~(ns":0,"cache_write_input_tokens":0,"output_tokens":100,"reasoning_output_tokens":50,"total_tokens":3)~"
    R"~(0100},"turn_token_usage":{"input_tokens":30000,"cached_input_tokens":0,"cache_write_input_tokens":0,)~"
    R"~("output_tokens":100,"reasoning_output_tokens":50,"total_tokens":30100},"thread_token_usage":{"input_)~"
    R"~(tokens":60000,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":200,"reasoning_ou)~"
    R"~(tput_tokens":100,"total_tokens":60200}},"resume_metadata":{"dynamic_tools":{"thread_id":"","tools":[)~"
    R"~(]},"multi_agent_version":"v1","last_started_turn_id":"","turn_attribution":{"turn_id":"","turn_trigg)~"
    R"~(er":"exec","parent_turn_id":null,"initiating_agent_path":null,"root_turn_id":""},"previous_turn_sett)~"
    R"~(ings":{"model":"gpt-test","comp_hash":null,"realtime_active":false}}}{"type":"item_completed","threa)~"
    R"~(d_id":"","turn_id":"","item":{"type":"ContextCompaction","id":""},"started_at_ms":1795239885662,"com)~"
    R"~(pleted_at_ms":1795239885758}{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"\")~"
    R"~(}","call_id":""}{"type":"function_call_output","call_id":"","output":"Chunk ID: \nWall time:  second)~"
    R"~(s\nProcess exited with code 0\nOriginal token count: \nOutput:\n"}{"type":"reasoning","summary":[],")~"
    R"~(content":null,"encrypted_content":"gAAAAA"}{"type":"message","role":"assistant","content":[{"type":")~"
    R"~(output_text","text":""}]}{"type":"message","role":"user","content":[{"type":"input_text","text":""}])~"
    R"~(})~";
constexpr size_t kHeader = 5;
constexpr size_t kMinPack = 96;  // below this the header and stream end eat the gain

// One deflate and one inflate stream per thread, reset between uses: setting
// them up costs more than packing a small text.
struct Deflater {
  z_stream z{};
  bool ok = false;
  Deflater() { ok = deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK; }
  ~Deflater() {
    if (ok) deflateEnd(&z);
  }
};

struct Inflater {
  z_stream z{};
  bool ok = false;
  Inflater() { ok = inflateInit2(&z, -15) == Z_OK; }
  ~Inflater() {
    if (ok) inflateEnd(&z);
  }
};

const Bytef* Dict() { return reinterpret_cast<const Bytef*>(kDictionaryV1); }
constexpr uInt kDictSize = sizeof(kDictionaryV1) - 1;

}  // namespace

std::optional<std::string> PackText(std::string_view text) {
  if (text.size() < kMinPack || text.size() > 0xffffffffu) return std::nullopt;
  thread_local Deflater d;
  if (!d.ok || deflateReset(&d.z) != Z_OK ||
      deflateSetDictionary(&d.z, Dict(), kDictSize) != Z_OK) {
    return std::nullopt;
  }
  // Worth keeping only when it saves an eighth: the rest is not room to spend.
  const size_t limit = text.size() - text.size() / 8;
  std::string out(kHeader + deflateBound(&d.z, static_cast<uLong>(text.size())), '\0');
  out[0] = static_cast<char>(kPackedTextDeflateV1);
  const uint32_t n = static_cast<uint32_t>(text.size());
  for (int i = 0; i < 4; ++i)
    out[1 + static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  d.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  d.z.avail_in = static_cast<uInt>(text.size());
  d.z.next_out = reinterpret_cast<Bytef*>(out.data() + kHeader);
  d.z.avail_out = static_cast<uInt>(out.size() - kHeader);
  if (deflate(&d.z, Z_FINISH) != Z_STREAM_END) return std::nullopt;
  const size_t size = kHeader + (out.size() - kHeader - d.z.avail_out);
  if (size > limit) return std::nullopt;
  out.resize(size);
  return out;
}

Result<std::string> UnpackText(std::string_view packed) {
  if (packed.size() < kHeader || static_cast<unsigned char>(packed[0]) != kPackedTextDeflateV1) {
    return DataLossError(
        "a stored text is packed in a format this codex does not know (first byte " +
        std::to_string(packed.empty() ? -1 : static_cast<unsigned char>(packed[0])) +
        "); a newer codex wrote it");
  }
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) {
    n |= static_cast<uint32_t>(static_cast<unsigned char>(packed[1 + static_cast<size_t>(i)]))
         << (8 * i);
  }
  // Deflate expands at most about 1032:1: a larger recorded size is damage,
  // refused before allocating it.
  if (n > (packed.size() - kHeader) * 1032 + 64) {
    return DataLossError("a stored text is damaged: its recorded size " + std::to_string(n) +
                         " bytes cannot come from " + std::to_string(packed.size()) +
                         " packed bytes");
  }
  thread_local Inflater f;
  // A raw stream names no dictionary: it is set before inflating.
  if (!f.ok || inflateReset(&f.z) != Z_OK ||
      inflateSetDictionary(&f.z, Dict(), kDictSize) != Z_OK) {
    return DataLossError("cannot start zlib's inflate");
  }
  std::string out(n, '\0');
  f.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data() + kHeader));
  f.z.avail_in = static_cast<uInt>(packed.size() - kHeader);
  f.z.next_out = reinterpret_cast<Bytef*>(out.data());
  f.z.avail_out = static_cast<uInt>(out.size());
  const int rc = inflate(&f.z, Z_FINISH);
  if (rc != Z_STREAM_END || f.z.avail_out != 0 || f.z.avail_in != 0) {
    return DataLossError("a stored text is damaged: it does not inflate to its recorded " +
                         std::to_string(n) + " bytes");
  }
  return out;
}

void RegisterPackedTextFunctions(sqlite3* db) {
  auto text = [](sqlite3_context* ctx, int, sqlite3_value** argv) {
    if (sqlite3_value_type(argv[0]) != SQLITE_BLOB) {
      sqlite3_result_value(ctx, argv[0]);
      return;
    }
    const std::string_view packed(static_cast<const char*>(sqlite3_value_blob(argv[0])),
                                  static_cast<size_t>(sqlite3_value_bytes(argv[0])));
    auto out = UnpackText(packed);
    if (!out.ok()) {
      sqlite3_result_error(ctx, out.status().message().c_str(), -1);
      return;
    }
    sqlite3_result_text(ctx, out->data(), static_cast<int>(out->size()), SQLITE_TRANSIENT);
  };
  auto pack = [](sqlite3_context* ctx, int, sqlite3_value** argv) {
    if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
      sqlite3_result_value(ctx, argv[0]);
      return;
    }
    const std::string_view plain(reinterpret_cast<const char*>(sqlite3_value_text(argv[0])),
                                 static_cast<size_t>(sqlite3_value_bytes(argv[0])));
    if (auto packed = PackText(plain)) {
      sqlite3_result_blob(ctx, packed->data(), static_cast<int>(packed->size()), SQLITE_TRANSIENT);
    } else {
      sqlite3_result_value(ctx, argv[0]);
    }
  };
  sqlite3_create_function(db, "codex_text", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, +text,
                          nullptr, nullptr);
  sqlite3_create_function(db, "codex_pack_text", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                          +pack, nullptr, nullptr);
}

}  // namespace codex::storage
