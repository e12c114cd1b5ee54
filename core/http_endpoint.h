// Where a model provider's requests go: base_url parsed into an Endpoint, the
// proxy chosen from the environment (https_proxy / http_proxy / all_proxy,
// NO_PROXY), and the CA certificates to verify against. Pure parsing plus
// environment and filesystem reads; thread-compatible (reads getenv).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "core/config.h"

namespace codex::core {

// Where requests go, after reading base_url and the proxy environment.
struct Endpoint {
  std::string scheme;  // "http" or "https"
  std::string host;    // without brackets for IPv6
  int port = 0;
  std::string path_prefix;  // e.g. "/v1" (no trailing slash)
  std::string proxy_host;   // "" = direct
  int proxy_port = 0;
};

// True when `host` is covered by a NO_PROXY value ("*", comma-separated
// host names, domain suffixes with or without a leading dot, optional :port).
bool HostMatchesNoProxy(std::string_view host, std::string_view no_proxy);

namespace http_internal {

// An http:// proxy and its credentials (percent-decoded).
struct ProxySetting {
  std::string host;  // "" = none
  int port = 0;
  std::string user;
  std::string password;
};

// base_url as http(s)://host[:port][/path], without a proxy yet. kInvalidArgument
// naming `provider` and what to fix.
Result<Endpoint> ParseBaseUrl(const ProviderInfo& provider);

// The proxy for `endpoint` from the environment: for https, https_proxy /
// HTTPS_PROXY, for http, http_proxy / HTTP_PROXY, then all_proxy / ALL_PROXY;
// none when NO_PROXY / no_proxy covers the host. kInvalidArgument for a
// malformed value or a scheme other than http://.
Result<ProxySetting> ProxyFromEnvironment(const Endpoint& endpoint);

// CA certificates: `explicit_file`, else $SSL_CERT_FILE, else $SSL_CERT_DIR,
// else the system bundle when it exists. kInvalidArgument when the named file
// or directory does not exist.
struct CaLocation {
  std::string file;
  std::string dir;
};
Result<CaLocation> FindCaCertificates(const std::string& explicit_file);

// Without leading and trailing spaces and tabs (HTTP's optional whitespace;
// base/strings.h's Trim removes every ASCII space).
std::string_view TrimHttpWhitespace(std::string_view s);

// The value of an environment variable, nullptr when unset or empty.
const char* Env(const char* name);
bool HasLineBreak(std::string_view s);
std::string PercentEncode(std::string_view s);
// "[v6]" for an IPv6 host, else the host.
std::string HostForUrl(const std::string& host);

}  // namespace http_internal
}  // namespace codex::core
