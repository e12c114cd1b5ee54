#include "core/http_endpoint.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "base/strings.h"

namespace codex::core {
namespace http_internal {
namespace {

constexpr const char* kSystemCaFile = "/etc/ssl/certs/ca-certificates.crt";

std::string PercentDecode(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::optional<int> ParsePort(std::string_view s) {
  if (s.empty() || s.size() > 5) return std::nullopt;
  int port = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + (c - '0');
  }
  if (port < 1 || port > 65535) return std::nullopt;
  return port;
}

// host[:port] or [v6][:port]; host is returned without brackets.
bool SplitHostPort(std::string_view authority, std::string& host, std::optional<int>& port) {
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return false;
    host = std::string(authority.substr(1, close - 1));
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return false;
      port_text = rest.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host = std::string(authority.substr(0, colon));
      port_text = authority.substr(colon + 1);
    } else {
      host = std::string(authority);
    }
  }
  if (host.empty()) return false;
  if (host.find_first_of(" /?#@\\") != std::string::npos) return false;
  port.reset();
  if (!port_text.empty()) {
    port = ParsePort(port_text);
    if (!port) return false;
  }
  return true;
}

// Parses "http://[user:pass@]host[:port][/]" or "host[:port]".
Result<ProxySetting> ParseProxy(std::string_view var, std::string_view value) {
  const std::string bad = "invalid proxy in " + std::string(var) +
                          ": expected http://host:port; fix or unset the variable";
  std::string_view rest = TrimHttpWhitespace(value);
  if (const size_t sep = rest.find("://"); sep != std::string_view::npos) {
    if (Lower(rest.substr(0, sep)) != "http") {
      return InvalidArgumentError("unsupported proxy scheme in " + std::string(var) +
                                  ": only http:// proxies are supported");
    }
    rest.remove_prefix(sep + 3);
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    rest = rest.substr(0, slash);
  }
  ProxySetting proxy;
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view cred = rest.substr(0, at);
    rest.remove_prefix(at + 1);
    const size_t colon = cred.find(':');
    proxy.user = PercentDecode(cred.substr(0, colon));
    if (colon != std::string_view::npos) proxy.password = PercentDecode(cred.substr(colon + 1));
  }
  std::optional<int> port;
  if (!SplitHostPort(rest, proxy.host, port)) return InvalidArgumentError(bad);
  proxy.port = port.value_or(1080);  // curl's default proxy port
  return proxy;
}

}  // namespace

std::string_view TrimHttpWhitespace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

bool HasLineBreak(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string HostForUrl(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

Result<Endpoint> ParseBaseUrl(const ProviderInfo& provider) {
  const std::string where = "model provider '" + provider.id + "'";
  const std::string bad_url = "invalid base_url '" + provider.base_url + "' for " + where +
                              ": expected http(s)://host[:port][/path]; fix it in config.toml";
  Endpoint ep;
  std::string_view url = TrimHttpWhitespace(provider.base_url);
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) return InvalidArgumentError(bad_url);
  ep.scheme = Lower(url.substr(0, sep));
  if (ep.scheme != "http" && ep.scheme != "https") return InvalidArgumentError(bad_url);
  url.remove_prefix(sep + 3);
  if (url.find_first_of("?#") != std::string_view::npos) {
    return InvalidArgumentError("base_url for " + where +
                                " must not contain '?' or '#'; put parameters in query_params");
  }
  const size_t slash = url.find('/');
  const std::string_view authority = url.substr(0, slash);
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgumentError("base_url for " + where +
                                " must not contain credentials; use env_key for the API key");
  }
  std::optional<int> port;
  if (!SplitHostPort(authority, ep.host, port)) return InvalidArgumentError(bad_url);
  ep.port = port.value_or(ep.scheme == "https" ? 443 : 80);
  if (slash != std::string_view::npos) {
    std::string_view path = url.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    ep.path_prefix = std::string(path);
  }

  return ep;
}

Result<ProxySetting> ProxyFromEnvironment(const Endpoint& endpoint) {
  ProxySetting proxy;
  const char* no_proxy = Env("no_proxy") ? Env("no_proxy") : Env("NO_PROXY");
  if (no_proxy == nullptr || !HostMatchesNoProxy(endpoint.host, no_proxy)) {
    const std::vector<const char*> vars =
        endpoint.scheme == "https"
            ? std::vector<const char*>{"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"}
            : std::vector<const char*>{"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"};
    for (const char* var : vars) {
      if (const char* value = Env(var)) {
        ASSIGN_OR_RETURN(proxy, ParseProxy(var, value));
        break;
      }
    }
  }
  return proxy;
}

Result<CaLocation> FindCaCertificates(const std::string& explicit_file) {
  std::string ca_file;
  std::string ca_dir;
  std::error_code ec;
  if (!explicit_file.empty()) {
    ca_file = explicit_file;
  } else if (const char* f = Env("SSL_CERT_FILE")) {
    ca_file = f;
  } else if (const char* d = Env("SSL_CERT_DIR")) {
    ca_dir = d;
    if (!std::filesystem::is_directory(ca_dir, ec)) {
      return InvalidArgumentError("SSL_CERT_DIR names '" + ca_dir +
                                  "', which is not a directory; fix or unset it");
    }
  } else if (std::filesystem::exists(kSystemCaFile, ec)) {
    ca_file = kSystemCaFile;
  }
  if (!ca_file.empty() && !std::filesystem::is_regular_file(ca_file, ec)) {
    return InvalidArgumentError("CA certificate file '" + ca_file +
                                "' (SSL_CERT_FILE) does not exist; fix or unset SSL_CERT_FILE");
  }
  return CaLocation{std::move(ca_file), std::move(ca_dir)};
}

}  // namespace http_internal

bool HostMatchesNoProxy(std::string_view host_in, std::string_view no_proxy) {
  const std::string host = Lower(host_in);
  size_t start = 0;
  while (start <= no_proxy.size()) {
    size_t comma = no_proxy.find(',', start);
    if (comma == std::string_view::npos) comma = no_proxy.size();
    std::string entry =
        Lower(http_internal::TrimHttpWhitespace(no_proxy.substr(start, comma - start)));
    start = comma + 1;
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (entry.front() == '[') {
      const size_t close = entry.find(']');
      entry = entry.substr(1, close == std::string::npos ? std::string::npos : close - 1);
    } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
      entry = entry.substr(0, entry.find(':'));
    }
    if (entry.rfind("*.", 0) == 0) entry.erase(0, 1);
    if (!entry.empty() && entry.front() == '.') entry.erase(0, 1);
    if (entry.empty()) continue;
    if (host == entry) return true;
    if (host.size() > entry.size() &&
        host.compare(host.size() - entry.size(), entry.size(), entry) == 0 &&
        host[host.size() - entry.size() - 1] == '.') {
      return true;
    }
  }
  return false;
}

}  // namespace codex::core
