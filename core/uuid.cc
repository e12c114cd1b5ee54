#include "core/uuid.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>

#include "base/time.h"

namespace codex::core {

std::string NewUuidV7(int64_t unix_ms) {
  static std::mutex mu;
  static std::mt19937_64 rng{std::random_device{}()};
  if (unix_ms == 0) {
    unix_ms = NowMs();
  }
  uint64_t r1, r2;
  {
    std::lock_guard<std::mutex> lock(mu);
    r1 = rng();
    r2 = rng();
  }
  unsigned char b[16];
  const auto ms = static_cast<uint64_t>(unix_ms);
  for (int i = 0; i < 6; ++i) b[i] = static_cast<unsigned char>(ms >> (8 * (5 - i)));
  for (int i = 0; i < 8; ++i) b[6 + i] = static_cast<unsigned char>(r1 >> (8 * i));
  b[14] = static_cast<unsigned char>(r2);
  b[15] = static_cast<unsigned char>(r2 >> 8);
  b[6] = static_cast<unsigned char>((b[6] & 0x0F) | 0x70);  // version 7
  b[8] = static_cast<unsigned char>((b[8] & 0x3F) | 0x80);  // RFC 4122 variant
  char out[37];
  std::snprintf(out, sizeof out,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return out;
}

bool LooksLikeUuid(const std::string& text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!std::isxdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return true;
}

}  // namespace codex::core
