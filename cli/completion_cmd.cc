#include "cli/completion_cmd.h"

#include <cstdio>
#include <map>
#include <memory>

#include "base/shell.h"

namespace codex::cli {

namespace {

const std::map<std::string, std::vector<std::string>>& OptionValues() {
  static const std::map<std::string, std::vector<std::string>> kValues = {
      {"--sandbox", {"read-only", "workspace-write", "danger-full-access"}},
      {"--ask-for-approval", {"untrusted", "on-failure", "on-request", "never"}},
      {"--format", {"jsonl", "markdown"}},
  };
  return kValues;
}

bool IsDirectoryOption(const CompletionOption& o) {
  for (const auto& n : o.names) {
    if (n == "--cd" || n == "--add-dir") return true;
  }
  return false;
}

const std::vector<std::string>* ValuesOf(const CompletionOption& o) {
  for (const auto& n : o.names) {
    auto it = OptionValues().find(n);
    if (it != OptionValues().end()) return &it->second;
  }
  return nullptr;
}

CompletionNode Describe(const CLI::App& app) {
  CompletionNode node;
  node.names.push_back(app.get_name());
  for (const auto& alias : app.get_aliases()) node.names.push_back(alias);
  node.description = app.get_description();
  for (const CLI::Option* opt : app.get_options()) {
    if (!opt->nonpositional()) continue;
    CompletionOption o;
    for (const auto& s : opt->get_snames()) o.names.push_back("-" + s);
    for (const auto& l : opt->get_lnames()) o.names.push_back("--" + l);
    o.description = opt->get_description();
    o.takes_value = opt->get_type_size_max() > 0;
    node.options.push_back(std::move(o));
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name().empty()) continue;  // option groups
    node.children.push_back(Describe(*sub));
  }
  if (app.get_name() == "completion") node.words = {"bash", "zsh", "fish"};
  return node;
}

// Visits every node with its path ("codex exec resume").
template <typename F>
void Walk(const CompletionNode& node, const std::string& path, F&& f) {
  f(node, path);
  for (const auto& child : node.children) Walk(child, path + " " + child.names[0], f);
}

std::string Join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

// Quoted for sh-like shells (fish reads the same quoting).
std::string Quote(std::string_view s) { return ShellQuote(s); }

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string Bash(const CompletionNode& root) {
  std::string out =
      "# bash completion for codex; load with: source <(codex completion bash)\n"
      "_codex() {\n"
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
      "  local cmdpath=\"codex\" w i\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=\"${COMP_WORDS[i]}\"\n"
      "    case \"$cmdpath:$w\" in\n";
  Walk(root, "codex", [&](const CompletionNode& node, const std::string& path) {
    for (const auto& child : node.children) {
      std::vector<std::string> pats;
      for (const auto& n : child.names) pats.push_back("\"" + path + ":" + n + "\"");
      out += "      " + Join(pats, "|") + ") cmdpath=\"" + path + " " + child.names[0] + "\" ;;\n";
    }
  });
  out += "    esac\n  done\n  case \"$prev\" in\n";
  std::map<std::string, std::string> value_cases;  // pattern -> action
  Walk(root, "codex", [&](const CompletionNode& node, const std::string&) {
    for (const auto& o : node.options) {
      std::string action;
      if (IsDirectoryOption(o)) {
        action = "COMPREPLY=($(compgen -d -- \"$cur\")); return ;;";
      } else if (const auto* values = ValuesOf(o)) {
        action = "COMPREPLY=($(compgen -W \"" + Join(*values) + "\" -- \"$cur\")); return ;;";
      } else {
        continue;
      }
      value_cases[Join(o.names, "|")] = action;
    }
  });
  for (const auto& [pattern, action] : value_cases) out += "    " + pattern + ") " + action + "\n";
  out += "  esac\n  local opts=\"\" words=\"\"\n  case \"$cmdpath\" in\n";
  Walk(root, "codex", [&](const CompletionNode& node, const std::string& path) {
    std::vector<std::string> opts;
    for (const auto& o : node.options) opts.insert(opts.end(), o.names.begin(), o.names.end());
    std::vector<std::string> words = node.words;
    for (const auto& c : node.children) words.push_back(c.names[0]);
    out += "    \"" + path + "\") opts=\"" + Join(opts) + "\"; words=\"" + Join(words) + "\" ;;\n";
  });
  out +=
      "  esac\n"
      "  if [[ \"$cur\" == -* ]]; then\n"
      "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
      "  else\n"
      "    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
      "  fi\n"
      "}\n"
      "complete -o default -F _codex codex\n";
  return out;
}

// Escapes ':' and '\' for zsh's _describe "name:description" entries.
std::string ZshEntry(const std::string& name, const std::string& description) {
  std::string d;
  for (char c : FirstLine(description)) {
    if (c == ':' || c == '\\') d += '\\';
    d += c;
  }
  std::string n;
  for (char c : name) {
    if (c == ':') n += '\\';
    n += c;
  }
  return Quote(n + ":" + d);
}

std::string Zsh(const CompletionNode& root) {
  std::string out =
      "#compdef codex\n"
      "# zsh completion for codex; load with: source <(codex completion zsh)\n"
      "# or save as _codex in a directory of $fpath.\n"
      "_codex() {\n"
      "  local cmdpath=\"codex\" w i\n"
      "  for ((i = 2; i < CURRENT; i++)); do\n"
      "    w=\"${words[i]}\"\n"
      "    case \"$cmdpath:$w\" in\n";
  Walk(root, "codex", [&](const CompletionNode& node, const std::string& path) {
    for (const auto& child : node.children) {
      std::vector<std::string> pats;
      for (const auto& n : child.names) pats.push_back("\"" + path + ":" + n + "\"");
      out += "      " + Join(pats, "|") + ") cmdpath=\"" + path + " " + child.names[0] + "\" ;;\n";
    }
  });
  out += "    esac\n  done\n  case \"${words[CURRENT-1]}\" in\n";
  std::map<std::string, std::string> value_cases;
  Walk(root, "codex", [&](const CompletionNode& node, const std::string&) {
    for (const auto& o : node.options) {
      if (IsDirectoryOption(o)) {
        value_cases[Join(o.names, "|")] = "_files -/; return ;;";
      } else if (const auto* values = ValuesOf(o)) {
        value_cases[Join(o.names, "|")] = "compadd -- " + Join(*values) + "; return ;;";
      }
    }
  });
  for (const auto& [pattern, action] : value_cases) out += "    " + pattern + ") " + action + "\n";
  out += "  esac\n  local -a opts cmds\n  case \"$cmdpath\" in\n";
  Walk(root, "codex", [&](const CompletionNode& node, const std::string& path) {
    std::vector<std::string> opts;
    for (const auto& o : node.options) {
      for (const auto& n : o.names) opts.push_back(ZshEntry(n, o.description));
    }
    std::vector<std::string> cmds;
    for (const auto& w : node.words) cmds.push_back(ZshEntry(w, w + " completion script"));
    for (const auto& c : node.children) cmds.push_back(ZshEntry(c.names[0], c.description));
    out += "    \"" + path + "\") opts=(" + Join(opts) + "); cmds=(" + Join(cmds) + ") ;;\n";
  });
  out +=
      "  esac\n"
      "  if [[ \"${words[CURRENT]}\" == -* ]]; then\n"
      "    _describe -t options 'option' opts\n"
      "  elif (( ${#cmds} )); then\n"
      "    _describe -t commands 'command' cmds\n"
      "  else\n"
      "    _files\n"
      "  fi\n"
      "}\n"
      "if [[ \"${funcstack[1]}\" == \"_codex\" ]]; then\n"
      "  _codex \"$@\"\n"
      "else\n"
      "  compdef _codex codex\n"
      "fi\n";
  return out;
}

std::string Fish(const CompletionNode& root) {
  std::string out =
      "# fish completion for codex; load with: codex completion fish | source\n"
      "# or save as ~/.config/fish/completions/codex.fish\n"
      "complete -c codex -e\n";
  // A node's condition: its own path was seen and none of its children yet.
  std::vector<std::string> all_names;
  Walk(root, "codex", [&](const CompletionNode& node, const std::string& path) {
    std::vector<std::string> parts;
    size_t pos = 0;
    std::string p = path.substr(6 < path.size() ? 6 : path.size());  // drop "codex "
    while (!p.empty() && pos <= p.size()) {
      size_t sp = p.find(' ', pos);
      if (sp == std::string::npos) sp = p.size();
      parts.push_back(p.substr(pos, sp - pos));
      pos = sp + 1;
    }
    std::vector<std::string> child_names;
    for (const auto& c : node.children) {
      child_names.insert(child_names.end(), c.names.begin(), c.names.end());
    }
    std::string cond;
    if (parts.empty()) {
      cond = "__fish_use_subcommand";
    } else {
      cond = "__fish_seen_subcommand_from " + parts.back();
      if (!child_names.empty())
        cond += "; and not __fish_seen_subcommand_from " + Join(child_names);
    }
    std::string head = "complete -c codex -n " + Quote(cond);
    for (const auto& c : node.children) {
      out += head + " -f -a " + c.names[0] + " -d " + Quote(FirstLine(c.description)) + "\n";
    }
    for (const auto& w : node.words) out += head + " -f -a " + w + "\n";
    for (const auto& o : node.options) {
      std::string line = head;
      for (const auto& n : o.names) {
        if (n.rfind("--", 0) == 0) {
          line += " -l " + n.substr(2);
        } else if (n.size() == 2) {
          line += " -s " + n.substr(1);
        } else {
          line += " -o " + n.substr(1);
        }
      }
      if (o.takes_value) {
        line += " -r";
        if (IsDirectoryOption(o)) {
          line += " -a '(__fish_complete_directories)'";
        } else if (const auto* values = ValuesOf(o)) {
          line += " -f -a " + Quote(Join(*values));
        }
      }
      line += " -d " + Quote(FirstLine(o.description));
      out += line + "\n";
    }
  });
  return out;
}

}  // namespace

CompletionNode DescribeCommands(const CLI::App& app) {
  CompletionNode root = Describe(app);
  root.names[0] = "codex";
  return root;
}

Result<std::string> CompletionScript(const CLI::App& app, std::string_view shell) {
  CompletionNode root = DescribeCommands(app);
  if (shell == "bash") return Bash(root);
  if (shell == "zsh") return Zsh(root);
  if (shell == "fish") return Fish(root);
  return InvalidArgumentError("unknown shell '" + std::string(shell) +
                              "'; completion scripts exist for bash, zsh and fish");
}

void RegisterCompletionCommand(CLI::App& app, const GlobalOptions& global, CommandOutcome& result) {
  (void)global;
  // As Codex: SHELL defaults to bash.
  auto shell = std::make_shared<std::string>("bash");
  CLI::App* cmd = app.add_subcommand("completion", "Print a shell completion script");
  cmd->add_option("SHELL", *shell, "bash (default) | zsh | fish");
  cmd->callback([&app, shell, &result]() {
    result.Set([&]() -> Status {
      ASSIGN_OR_RETURN(const std::string script, CompletionScript(app, *shell));
      std::fwrite(script.data(), 1, script.size(), stdout);
      return OkStatus();
    }());
  });
}

}  // namespace codex::cli
