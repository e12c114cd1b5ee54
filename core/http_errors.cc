#include "core/http_errors.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "core/http_endpoint.h"
#include "core/model_client.h"
#include "core/response_stream.h"
#include "core/retry_policy.h"

namespace codex::core::http_internal {
namespace {

// The server's error {code, message} from an error body (JSON or text).
struct ServerError {
  std::string code;
  std::string message;
};

ServerError ParseServerError(const std::string& body) {
  ServerError e;
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object()) {
    const nlohmann::json* err = &j;
    if (auto it = j.find("error"); it != j.end()) {
      if (it->is_object()) {
        err = &*it;
      } else if (it->is_string()) {
        e.message = it->get<std::string>();
      }
    }
    if (auto it = err->find("code"); it != err->end() && it->is_string()) {
      e.code = it->get<std::string>();
    }
    if (e.code.empty()) {
      if (auto it = err->find("type"); it != err->end() && it->is_string()) {
        e.code = it->get<std::string>();
      }
    }
    if (auto it = err->find("message"); it != err->end() && it->is_string()) {
      e.message = it->get<std::string>();
    }
  }
  if (e.message.empty()) {
    for (char c : std::string_view(body).substr(0, 300)) {
      e.message.push_back(c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
    }
    e.message = std::string(TrimHttpWhitespace(e.message));
  }
  return e;
}

// Retry-After in seconds (integer or decimal); HTTP dates are ignored.
std::optional<long long> ParseRetryAfterHeader(std::string_view value) {
  value = TrimHttpWhitespace(value);
  if (value.empty()) return std::nullopt;
  for (char c : value) {
    if ((c < '0' || c > '9') && c != '.') return std::nullopt;
  }
  const double seconds = std::strtod(std::string(value).c_str(), nullptr);
  if (!std::isfinite(seconds) || seconds < 0) return std::nullopt;
  return static_cast<long long>(std::min(seconds * 1000.0, static_cast<double>(kMaxRetryDelayMs)));
}

// The status (and Retry-After) of a reply; whether to retry is IsRetryable's.
AttemptResult ClassifyHttpReply(int http_status, const std::string& body,
                                std::string_view retry_after_header, const std::string& url,
                                const ProviderInfo& provider) {
  AttemptResult a;
  const ServerError server = ParseServerError(body);
  const std::string http = "HTTP " + std::to_string(http_status);
  if (http_status == 401 || http_status == 403) {
    if (provider.env_key.empty()) {
      a.status = UnauthenticatedError("the server refused the request (" + http +
                                      ") and model provider '" + provider.id +
                                      "' sends no API key; set env_key in config.toml");
    } else {
      a.status = UnauthenticatedError("the API key was rejected (" + http + "); check " +
                                      provider.env_key);
    }
    return a;
  }
  if (server.code == "context_length_exceeded" || server.code == "insufficient_quota" ||
      server.code == "usage_not_included") {
    a.status = ClassifyResponseError(server.code, server.message);
    return a;
  }
  const std::string detail = server.message.empty() ? "" : ": " + server.message;
  if (http_status == 429) {
    a.status = ResourceExhaustedError("rate limited by " + url + " (" + http + ")" + detail)
                   .WithReason(core::reason::kRateLimitExceeded);
    std::optional<long long> ms = ParseRetryAfterHeader(retry_after_header);
    if (!ms) ms = ParseRetryAfterMs(server.message);
    if (ms) {
      a.retry_after_ms = std::min<long long>(*ms, kMaxRetryDelayMs);
      a.status.WithRetryAfterMs(a.retry_after_ms);
    }
    return a;
  }
  if (http_status >= 500) {
    a.status = UnavailableError("server error from " + url + " (" + http + ")" + detail)
                   .WithReason(core::reason::kServerError);
    return a;
  }
  if (http_status >= 400) {
    a.status = InvalidArgumentError("the server rejected the request (" + http + ")" + detail)
                   .WithReason(core::reason::kRejectedByServer);
    return a;
  }
  a.status = UnavailableError("unexpected " + http + " from " + url)
                 .WithReason(core::reason::kServerError);
  return a;
}

}  // namespace

AttemptResult ClassifyHttpError(int http_status, const std::string& body,
                                std::string_view retry_after_header, const std::string& url,
                                const ProviderInfo& provider) {
  AttemptResult a = ClassifyHttpReply(http_status, body, retry_after_header, url, provider);
  a.retry = IsRetryable(a.status);
  return a;
}

}  // namespace codex::core::http_internal
