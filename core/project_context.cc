#include "core/project_context.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "base/file.h"
#include "sandbox/unique_fd.h"
#include "sandbox/workspace_policy.h"

namespace codex::core {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kEnvOpen = "<environment_context>";
constexpr std::string_view kPermissionsOpen = "<permissions instructions>";
constexpr std::string_view kDocsOpen = "# AGENTS.md instructions";

// A project doc's text, or nullopt when `path` is no doc: not a regular file
// (symlinks followed), or a file of /proc, /sys or /dev. codex reads it on
// the host, where /proc/self is codex itself: an AGENTS.md the model linked
// to /proc/self/environ would put codex's environment (its API key) into the
// instructions. The file is judged by what was opened (its descriptor's
// path), not by its name before the open: a link swapped between a check
// and the read cannot win. "" for an empty doc (it still counts).
std::optional<std::string> ReadProjectDoc(const fs::path& path) {
  const sandbox::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::error_code ec;
  fs::path opened = fs::read_symlink("/proc/self/fd/" + std::to_string(fd.get()), ec);
  if (ec) opened = fs::canonical(path, ec);  // no /proc mounted: then none to read either
  if (ec || !sandbox::PseudoFilesystemOf(opened.string()).empty()) return std::nullopt;
  auto text = ReadToEnd(fd.get(), path.string());
  return text.ok() ? std::move(*text) : std::string();
}

std::string ShellName() {
  const char* shell = std::getenv("SHELL");
  if (shell == nullptr || *shell == '\0') return "bash";
  return fs::path(shell).filename().string();
}

}  // namespace

std::string ProjectRoot(const std::string& cwd) {
  std::error_code ec;
  for (fs::path p = cwd;; p = p.parent_path()) {
    // An empty .git directory is no repository: it is the mount point the
    // sandbox leaves where it keeps an absent .git absent (workspace_policy.h).
    const fs::path git = p / ".git";
    if (fs::exists(git, ec) && !(fs::is_directory(git, ec) && fs::is_empty(git, ec))) {
      return p.string();
    }
    if (p == p.root_path() || p.empty()) break;
  }
  return cwd;
}

std::string LoadProjectDocs(const Config& config) {
  std::vector<std::pair<fs::path, std::string>> files;  // each doc and its text
  const fs::path home_doc = fs::path(config.codex_home) / "AGENTS.md";
  if (auto text = ReadProjectDoc(home_doc)) files.emplace_back(home_doc, std::move(*text));

  const fs::path cwd(config.cwd);
  const fs::path root = ProjectRoot(config.cwd);
  std::vector<fs::path> chain;
  for (fs::path p = cwd;; p = p.parent_path()) {
    chain.push_back(p);
    if (p == root || p == p.root_path() || p.empty()) break;
  }
  // In each directory AGENTS.md, else the first of Codex's
  // project_doc_fallback_filenames there (e.g. CLAUDE.md).
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    fs::path doc = *it / "AGENTS.md";
    std::optional<std::string> text = ReadProjectDoc(doc);
    for (size_t i = 0; !text && i < config.project_doc_fallback_filenames.size(); ++i) {
      doc = *it / config.project_doc_fallback_filenames[i];
      text = ReadProjectDoc(doc);
    }
    if (text) files.emplace_back(doc, std::move(*text));
  }
  // project_doc_max_bytes = 0 turns the docs off, as in Codex.
  const size_t max_bytes = config.project_doc_max_bytes
                               ? static_cast<size_t>(*config.project_doc_max_bytes)
                               : kProjectDocMaxBytes;
  std::string out;
  if (max_bytes == 0) return out;
  for (const auto& [f, text] : files) {
    if (text.empty()) continue;
    if (!out.empty()) out += "\n\n";
    out += "--- " + f.string() + "\n";
    out += text;
    if (out.size() >= max_bytes) {
      // Cut on a character boundary: a split UTF-8 sequence would make the
      // request body invalid JSON text for the server.
      size_t cut = max_bytes;
      while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
      out.resize(cut);
      out += "\n[AGENTS.md truncated at " +
             (max_bytes % 1024 == 0 ? std::to_string(max_bytes / 1024) + " KiB"
                                    : std::to_string(max_bytes) + " bytes") +
             "]";
      break;
    }
  }
  return out;
}

std::string EnvironmentContextText(const Config& config) {
  std::string s(kEnvOpen);
  s += "\n  <cwd>" + config.cwd + "</cwd>";
  s += "\n  <shell>" + ShellName() + "</shell>";
  s += "\n  <sandbox_mode>" + std::string(SandboxModeName(config.sandbox_mode)) + "</sandbox_mode>";
  s += "\n  <approval_policy>" + std::string(ApprovalPolicyName(config.approval_policy)) +
       "</approval_policy>";
  if (config.sandbox_mode == SandboxMode::kWorkspaceWrite) {
    s += "\n  <writable_roots>";
    s += "<root>" + config.cwd + "</root>";
    for (const auto& r : config.writable_roots) s += "<root>" + r + "</root>";
    s += "</writable_roots>";
  }
  const bool network =
      config.sandbox_mode == SandboxMode::kDangerFullAccess ||
      (config.sandbox_mode == SandboxMode::kWorkspaceWrite && config.sandbox_network_access);
  s += std::string("\n  <network_access>") + (network ? "enabled" : "restricted") +
       "</network_access>";
  s += "\n</environment_context>";
  return s;
}

std::string PermissionsText(const Config& config) {
  std::string s(kPermissionsOpen);
  s += "\nsandbox_mode is `" + std::string(SandboxModeName(config.sandbox_mode)) + "`: ";
  switch (config.sandbox_mode) {
    case SandboxMode::kReadOnly:
      s += "commands may read files but not write them; network access is restricted.";
      break;
    case SandboxMode::kWorkspaceWrite:
      s += "commands may read any file and write inside the working directory, /tmp and the "
           "writable roots; .git directories stay read-only; network access is " +
           std::string(config.sandbox_network_access ? "enabled." : "restricted.");
      break;
    case SandboxMode::kDangerFullAccess:
      s += "commands run without a sandbox.";
      break;
  }
  s += "\napproval_policy is `" + std::string(ApprovalPolicyName(config.approval_policy)) + "`: ";
  switch (config.approval_policy) {
    case ApprovalPolicy::kNever:
      s += "never ask the user to approve; work within the sandbox and report failures.";
      break;
    case ApprovalPolicy::kOnFailure:
      s += "commands run in the sandbox; when one fails the user may approve a rerun "
           "without it.";
      break;
    case ApprovalPolicy::kOnRequest:
      s += "commands run in the sandbox; to run one outside it, set `sandbox_permissions` to "
           "`require_escalated` and ask the user a short question in `justification`; do so "
           "only when needed.";
      break;
    case ApprovalPolicy::kUntrusted:
      s += "commands that are not known to be safe need the user's approval.";
      break;
  }
  s += "\n</permissions instructions>";
  return s;
}

std::vector<Item> InitialContext(const Config& config) {
  std::vector<Item> items;
  if (!config.review_guidelines.empty())
    items.push_back(DeveloperMessage(config.review_guidelines));
  items.push_back(DeveloperMessage(PermissionsText(config)));
  if (!config.developer_instructions.empty()) {
    items.push_back(DeveloperMessage(config.developer_instructions));
  }
  std::string docs = LoadProjectDocs(config);
  if (!docs.empty()) {
    items.push_back(UserMessage(std::string(kDocsOpen) + " for " + config.cwd +
                                "\n\n<INSTRUCTIONS>\n" + docs + "\n</INSTRUCTIONS>"));
  }
  items.push_back(UserMessage(EnvironmentContextText(config)));
  return items;
}

std::vector<Item> ContextUpdates(const Config& config, std::span<const Item> transcript) {
  std::string last_env, last_perm;
  for (const Item& item : transcript) {
    if (item.kind != ItemKind::kMessage) continue;
    std::string text = MessageText(item);
    if (text.starts_with(kEnvOpen)) last_env = text;
    if (text.starts_with(kPermissionsOpen)) last_perm = text;
  }
  std::vector<Item> out;
  const std::string perm = PermissionsText(config);
  if (last_perm != perm) out.push_back(DeveloperMessage(perm));
  const std::string env = EnvironmentContextText(config);
  if (last_env != env) out.push_back(UserMessage(env));
  return out;
}

}  // namespace codex::core
