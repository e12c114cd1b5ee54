#include "core/store_location.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <vector>

namespace codex::core {

namespace {

constexpr std::string_view kSchemes[] = {"postgresql://", "postgres://"};
constexpr std::string_view kUsage =
    "; use postgresql://USER@HOST:PORT/DB?sslmode=verify-full, sqlite:PATH or a file path";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes %XX escapes; nullopt when one is malformed.
std::optional<std::string> PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || HexValue(s[i + 1]) < 0 || HexValue(s[i + 2]) < 0) {
      return std::nullopt;
    }
    out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
    i += 2;
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? s.npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

// The pieces of a postgres URL this file looks at.
struct UrlParts {
  std::string_view userinfo;  // user[:password]; empty when no '@'
  bool has_userinfo = false;
  std::string_view hosts;     // host[:port][,host[:port]...]
  std::string_view database;  // after the first '/'
  std::string_view query;     // after '?'
};

// Splits as libpq does: credentials are there when an '@' comes before the
// first '/' (libpq looks ahead for '@' stopping only at '/', so a password may
// hold '?', '#' or ':'); they end at the last such '@'. The hosts end at the
// first '/' or '?' after them.
std::optional<UrlParts> SplitUrl(std::string_view url) {
  for (std::string_view scheme : kSchemes) {
    if (!url.starts_with(scheme)) continue;
    std::string_view rest = url.substr(scheme.size());
    UrlParts p;
    const size_t at = rest.substr(0, rest.find('/')).rfind('@');
    if (at != rest.npos) {
      p.has_userinfo = true;
      p.userinfo = rest.substr(0, at);
      rest = rest.substr(at + 1);
    }
    const size_t q = rest.find('?');
    if (q != rest.npos) {
      p.query = rest.substr(q + 1);
      rest = rest.substr(0, q);
    }
    const size_t slash = rest.find('/');
    p.hosts = rest.substr(0, slash);
    if (slash != rest.npos) p.database = rest.substr(slash + 1);
    return p;
  }
  return std::nullopt;
}

// The password a URL carries (raw and percent-decoded forms), if any.
std::vector<std::string> Passwords(std::string_view url) {
  std::vector<std::string> out;
  auto parts = SplitUrl(url);
  if (!parts) return out;
  if (const size_t colon = parts->userinfo.find(':'); colon != std::string_view::npos) {
    out.emplace_back(parts->userinfo.substr(colon + 1));
  }
  for (std::string_view kv : Split(parts->query, '&')) {
    if (kv.starts_with("password=")) out.emplace_back(kv.substr(9));
  }
  const size_t raw = out.size();
  for (size_t i = 0; i < raw; ++i) {
    if (auto decoded = PercentDecode(out[i]); decoded && *decoded != out[i]) {
      out.push_back(*decoded);
    }
  }
  std::erase_if(out, [](const std::string& s) { return s.empty(); });
  return out;
}

bool IsUrlEnd(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '"' || c == '\''; }

Status Bad(std::string_view source, std::string_view setting, std::string_view what) {
  return InvalidArgumentError(std::string(source) + " '" + RedactSecrets(setting, setting) +
                              "' is not a usable store: " + std::string(what) +
                              std::string(kUsage));
}

Status CheckPostgresUrl(std::string_view source, std::string_view url) {
  auto parts = SplitUrl(url);
  if (!parts) return Bad(source, url, "unknown scheme");
  for (std::string_view piece : {parts->userinfo, parts->hosts, parts->database, parts->query}) {
    if (!PercentDecode(piece)) return Bad(source, url, "a '%' is not followed by two hex digits");
  }
  if (parts->has_userinfo && (parts->userinfo.empty() || parts->userinfo[0] == ':')) {
    return Bad(source, url, "the user name before '@' is empty");
  }
  for (std::string_view host : Split(parts->hosts, ',')) {
    std::string_view port;
    if (host.starts_with("[")) {
      const size_t close = host.find(']');
      if (close == host.npos) return Bad(source, url, "an IPv6 host lacks its closing ']'");
      if (close + 1 < host.size()) {
        if (host[close + 1] != ':') return Bad(source, url, "junk after an IPv6 host");
        port = host.substr(close + 2);
        if (port.empty()) return Bad(source, url, "the port after ':' is empty");
      }
    } else if (const size_t colon = host.find(':'); colon != host.npos) {
      port = host.substr(colon + 1);
      if (port.empty()) return Bad(source, url, "the port after ':' is empty");
    }
    if (!port.empty()) {
      long value = 0;
      for (char c : port) {
        if (c < '0' || c > '9' || value > 65535) {
          return Bad(source, url, "the port must be a number from 1 to 65535");
        }
        value = value * 10 + (c - '0');
      }
      if (value < 1 || value > 65535) {
        return Bad(source, url, "the port must be a number from 1 to 65535");
      }
    }
  }
  if (parts->database.find('/') != std::string_view::npos) {
    return Bad(source, url, "the database name contains '/'");
  }
  if (!parts->query.empty()) {
    for (std::string_view kv : Split(parts->query, '&')) {
      const size_t eq = kv.find('=');
      if (eq == kv.npos || eq == 0) {
        return Bad(source, url, "each parameter after '?' must be name=value");
      }
      if (kv.substr(0, eq) == "sslmode") {
        const std::string_view mode = kv.substr(eq + 1);
        if (mode != "disable" && mode != "allow" && mode != "prefer" && mode != "require" &&
            mode != "verify-ca" && mode != "verify-full") {
          return Bad(source, url,
                     "sslmode must be disable, allow, prefer, require, verify-ca or verify-full");
        }
      }
    }
  }
  return OkStatus();
}

std::string ExpandPath(std::string_view path) {
  std::string p(path);
  if (p.starts_with("~/")) {
    const char* home = std::getenv("HOME");
    if (home != nullptr && *home != '\0') p = std::string(home) + p.substr(1);
  }
  std::error_code ec;
  auto abs = std::filesystem::absolute(p, ec);
  return ec ? p : abs.lexically_normal().string();
}

}  // namespace

Result<StoreLocation> ParseStoreLocation(std::string_view setting, const std::string& codex_home,
                                         std::string_view source) {
  StoreLocation loc;
  if (setting.empty()) {
    loc.path = (std::filesystem::path(codex_home) / "sessions.db").string();
    return loc;
  }
  for (std::string_view scheme : kSchemes) {
    if (setting.starts_with(scheme)) {
      RETURN_IF_ERROR(CheckPostgresUrl(source, setting));
      loc.kind = StoreLocation::Kind::kPostgres;
      loc.url = std::string(setting);
      return loc;
    }
  }
  std::string_view path = setting;
  if (path.starts_with("sqlite://")) {
    path.remove_prefix(9);
  } else if (path.starts_with("sqlite:")) {
    path.remove_prefix(7);
  } else if (const size_t colon = path.find("://"); colon != path.npos) {
    return Bad(source, setting, "unknown scheme '" + std::string(path.substr(0, colon)) + "'");
  }
  if (path.empty()) return Bad(source, setting, "the SQLite path is empty");
  loc.path = ExpandPath(path);
  if (std::filesystem::is_directory(loc.path)) {
    loc.path = (std::filesystem::path(loc.path) / "sessions.db").string();
  }
  return loc;
}

std::string RedactSecrets(std::string_view text, std::string_view url) {
  std::string out(text);
  // The credentials of every URL in the text (scheme://user:password@host):
  // up to the last '@' before the first '/', as libpq reads them (a '?' in
  // the password included).
  size_t scan = 0;
  while ((scan = out.find("://", scan)) != std::string::npos) {
    const size_t start = scan + 3;
    size_t end = start;
    while (end < out.size() && out[end] != '/' && !IsUrlEnd(out[end])) ++end;
    const size_t at = end == start ? std::string::npos : out.rfind('@', end - 1);
    if (at != std::string::npos && at >= start) {
      const size_t colon = out.find(':', start);
      if (colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
    scan = start;
  }
  // password=VALUE parameters (URL query or key=value conninfo).
  size_t from = 0;
  while ((from = out.find("password=", from)) != std::string::npos) {
    const size_t start = from + 9;
    size_t end = start;
    while (end < out.size() && out[end] != '&' && !IsUrlEnd(out[end])) ++end;
    out.replace(start, end - start, "***");
    from = start + 3;
  }
  // The password itself wherever it is quoted (a libpq message, a decoded form).
  for (const std::string& secret : Passwords(url)) {
    if (secret == "***") continue;
    size_t at = 0;
    while ((at = out.find(secret, at)) != std::string::npos) {
      out.replace(at, secret.size(), "***");
      at += 3;
    }
  }
  return out;
}

std::string DescribeStoreLocation(const StoreLocation& location) {
  if (location.kind == StoreLocation::Kind::kSqlite) return location.path;
  return RedactSecrets(location.url, location.url);
}

}  // namespace codex::core
