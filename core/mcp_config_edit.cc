#include "core/mcp_config_edit.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <regex>
#include <sstream>

#include "base/file.h"

namespace codex::core {

namespace fs = std::filesystem;

namespace {

Result<std::string> ReadText(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::string();
  auto text = ReadWholeFile(path.string());
  if (!text.ok()) {
    return InternalError("cannot read " + text.status().message() + "; check its permissions");
  }
  return std::move(*text);
}

Result<toml::table> Parse(const std::string& text, const fs::path& path) {
  try {
    return toml::parse(text, path.string());
  } catch (const toml::parse_error& e) {
    return InvalidArgumentError(path.string() + ":" + std::to_string(e.source().begin.line) + ": " +
                                std::string(e.description()) + "; fix the file first");
  }
}

// Writes `text` over config.toml whole (base/file.h ReplaceWholeFile: a
// crash leaves the old file or the new one, never a cut one; the mode is
// kept; a symlinked config.toml, a dotfiles checkout, is written where it
// points).
Status WriteAtomically(const fs::path& path, const std::string& text) {
  if (Status written = ReplaceWholeFile(path.string(), text); !written.ok()) {
    return InternalError("cannot replace " + written.message() + "; check the directory");
  }
  return OkStatus();
}

// A TOML basic string.
std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// A TOML key: bare when it can be, else quoted.
std::string Key(const std::string& k) {
  const bool bare = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  return bare ? k : Quote(k);
}

// Whether `line` is the header of [mcp_servers.NAME] or one of its sub-tables.
bool IsServerHeader(const std::string& line, const std::string& name) {
  const std::string quoted = "(" + name + "|\"" + name + "\"|'" + name + "')";
  static const std::string prefix = R"(^\s*\[\s*mcp_servers\s*\.\s*)";
  const std::regex re(prefix + quoted + R"(\s*(\]|\.))");
  return std::regex_search(line, re);
}

bool IsHeader(const std::string& line) {
  const size_t i = line.find_first_not_of(" \t");
  return i != std::string::npos && line[i] == '[';
}

// `text` without the [mcp_servers.NAME] tables (header to the next other header).
std::string WithoutServer(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  std::string out;
  bool skipping = false;
  for (std::string line; std::getline(in, line);) {
    if (IsHeader(line)) skipping = IsServerHeader(line, name);
    if (!skipping) out += line + "\n";
  }
  if (!text.empty() && text.back() != '\n' && !out.empty()) out.pop_back();
  // A blank line left at the end by the removal goes too.
  while (out.size() >= 2 && out.ends_with("\n\n")) out.pop_back();
  return out;
}

// Whether `after` is `before` with server `name` removed and nothing else changed.
bool OnlyServerRemoved(toml::table before, const toml::table& after, const std::string& name) {
  if (auto* servers = before["mcp_servers"].as_table()) {
    servers->erase(name);
    if (servers->empty() && after.get("mcp_servers") == nullptr) before.erase("mcp_servers");
  }
  return before == after;
}

}  // namespace

Status WriteMcpServer(const std::string& codex_home, const McpServerConfig& server) {
  const fs::path path = fs::path(codex_home) / "config.toml";
  ASSIGN_OR_RETURN(std::string text, ReadText(path));
  ASSIGN_OR_RETURN(toml::table before, Parse(text, path));
  if (auto* servers = before["mcp_servers"].as_table(); servers && servers->contains(server.name)) {
    std::string removed = WithoutServer(text, server.name);
    ASSIGN_OR_RETURN(toml::table after, Parse(removed, path));
    if (!OnlyServerRemoved(before, after, server.name)) {
      return InvalidArgumentError("config.toml defines mcp_servers." + server.name +
                                  " in a form codex mcp add cannot replace (an inline table); "
                                  "edit " +
                                  path.string() + " by hand");
    }
    text = std::move(removed);
  }
  std::string rendered = "[mcp_servers." + Key(server.name) + "]\n";
  if (server.is_http()) {
    rendered += "url = " + Quote(server.url) + "\n";
    if (!server.bearer_token_env_var.empty()) {
      rendered += "bearer_token_env_var = " + Quote(server.bearer_token_env_var) + "\n";
    }
  } else {
    rendered += "command = " + Quote(server.command) + "\n";
    if (!server.args.empty()) {
      std::string list;
      for (const auto& a : server.args) list += (list.empty() ? "" : ", ") + Quote(a);
      rendered += "args = [" + list + "]\n";
    }
    if (!server.env.empty()) {
      rendered += "\n[mcp_servers." + Key(server.name) + ".env]\n";
      for (const auto& [k, v] : server.env) rendered += Key(k) + " = " + Quote(v) + "\n";
    }
  }
  if (!text.empty()) {
    if (text.back() != '\n') text += '\n';
    text += '\n';
  }
  text += rendered;
  if (text.back() != '\n') text += '\n';
  ASSIGN_OR_RETURN(toml::table check, Parse(text, path));
  (void)check;
  std::error_code ec;
  fs::create_directories(codex_home, ec);
  return WriteAtomically(path, text);
}

namespace {

// `text` with `key = value` set in the table whose header line `is_header`
// accepts: the key's line in that table gets the new value (a comment after
// it kept), else the line goes after the table's last line; without the table,
// `header` and the line are appended. The caller checks the result by parsing.
std::string SetKeyInTable(const std::string& text,
                          const std::function<bool(const std::string&)>& is_header,
                          const std::string& header, const std::string& key,
                          const std::string& value) {
  const std::string line = Key(key) + " = " + value;
  const std::regex key_line("(\\s*" +
                            std::regex_replace(key, std::regex(R"([^A-Za-z0-9_])"), "\\$&") +
                            R"(\s*=\s*)(true|false|"[^"\\]*"|'[^']*')(\s*(#.*)?))");
  std::istringstream in(text);
  std::string out;
  bool in_table = false;
  bool done = false;
  for (std::string l; std::getline(in, l);) {
    const bool header_line = IsHeader(l);
    if (in_table && !done && header_line) {
      // The table had no such key: it goes after its last line.
      size_t blanks = 0;
      while (out.size() >= 2 && out.compare(out.size() - 2, 2, "\n\n") == 0) {
        out.pop_back();
        ++blanks;
      }
      out += line + "\n";
      out.append(blanks, '\n');
      done = true;
    }
    if (header_line) in_table = is_header(l);
    std::smatch m;
    if (in_table && !done && std::regex_match(l, m, key_line)) {
      out += m[1].str() + value + m[3].str() + "\n";
      done = true;
      continue;
    }
    out += l + "\n";
  }
  if (in_table && !done) {
    out += line + "\n";
    done = true;
  }
  if (!done) {
    if (!out.empty()) out += "\n";
    out += header + "\n" + line + "\n";
  }
  return out;
}

}  // namespace

Status WriteProjectTrust(const std::string& codex_home, const std::string& project,
                         const std::string& level) {
  const fs::path path = fs::path(codex_home) / "config.toml";
  ASSIGN_OR_RETURN(std::string text, ReadText(path));
  ASSIGN_OR_RETURN(toml::table before, Parse(text, path));
  (void)before;
  const std::string header = "[projects." + Quote(project) + "]";
  const std::string out = SetKeyInTable(
      text, [&header](const std::string& l) { return l == header; }, header, "trust_level",
      Quote(level));
  Result<toml::table> after = Parse(out, path);
  const auto* recorded =
      after.ok() ? (*after)["projects"][project]["trust_level"].as_string() : nullptr;
  if (recorded == nullptr || recorded->get() != level) {
    return InvalidArgumentError(path.string() +
                                " defines projects in a form codex cannot edit; add " + header +
                                " with trust_level = " + Quote(level) + " by hand");
  }
  std::error_code ec;
  fs::create_directories(codex_home, ec);
  return WriteAtomically(path, out);
}

Status WriteFeatureFlag(const std::string& codex_home, const std::string& name, bool enabled) {
  const fs::path path = fs::path(codex_home) / "config.toml";
  ASSIGN_OR_RETURN(std::string text, ReadText(path));
  ASSIGN_OR_RETURN(toml::table before, Parse(text, path));
  static const std::regex features_header(R"(^\s*\[\s*features\s*\]\s*(#.*)?$)");
  const std::string out = SetKeyInTable(
      text, [](const std::string& l) { return std::regex_match(l, features_header); }, "[features]",
      name, enabled ? "true" : "false");
  // Only features.NAME may differ, and it must now be `enabled`.
  toml::table expected = before;
  if (expected.get("features") == nullptr) expected.insert("features", toml::table{});
  bool ok = false;
  if (auto* features = expected["features"].as_table()) {
    features->insert_or_assign(name, enabled);
    Result<toml::table> after = Parse(out, path);
    ok = after.ok() && *after == expected;
  }
  if (!ok) {
    return InvalidArgumentError(path.string() +
                                " defines features in a form codex cannot edit (an inline table "
                                "or dotted keys); set features." +
                                Key(name) + " = " + (enabled ? "true" : "false") + " by hand");
  }
  std::error_code ec;
  fs::create_directories(codex_home, ec);
  return WriteAtomically(path, out);
}

Result<bool> RemoveMcpServer(const std::string& codex_home, const std::string& name) {
  const fs::path path = fs::path(codex_home) / "config.toml";
  ASSIGN_OR_RETURN(std::string text, ReadText(path));
  ASSIGN_OR_RETURN(toml::table before, Parse(text, path));
  auto* servers = before["mcp_servers"].as_table();
  if (servers == nullptr || !servers->contains(name)) return false;
  std::string removed = WithoutServer(text, name);
  ASSIGN_OR_RETURN(toml::table after, Parse(removed, path));
  if (!OnlyServerRemoved(before, after, name)) {
    return InvalidArgumentError("config.toml defines mcp_servers." + name +
                                " in a form codex mcp remove cannot edit (an inline table); edit " +
                                path.string() + " by hand");
  }
  RETURN_IF_ERROR(WriteAtomically(path, removed));
  return true;
}

}  // namespace codex::core
