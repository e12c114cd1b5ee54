#include "base/sha.h"

#include <array>
#include <cstdint>

namespace codex {
namespace {

constexpr char kShaHexDigits[] = "0123456789abcdef";

uint32_t RotateLeft(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }
uint32_t RotateRight(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// Calls `block(p)` for each 64-byte block of `data` padded as FIPS 180-4
// says (0x80, zeros, the bit length big-endian); only the tail is copied.
template <typename Fn>
void ForEachShaBlock(std::string_view data, Fn block) {
  const size_t whole = data.size() / 64 * 64;
  for (size_t at = 0; at < whole; at += 64) {
    block(reinterpret_cast<const unsigned char*>(data.data() + at));
  }
  std::string tail(data.substr(whole));
  const uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  tail += static_cast<char>(0x80);
  while (tail.size() % 64 != 56) tail += '\0';
  for (int i = 7; i >= 0; --i) tail += static_cast<char>((bits >> (i * 8)) & 0xff);
  for (size_t at = 0; at < tail.size(); at += 64) {
    block(reinterpret_cast<const unsigned char*>(tail.data() + at));
  }
}

uint32_t BigEndianWord(const unsigned char* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

template <size_t N>
std::string WordsHex(const std::array<uint32_t, N>& h) {
  std::string out;
  out.reserve(N * 8);
  for (uint32_t w : h) {
    for (int shift = 28; shift >= 0; shift -= 4) out += kShaHexDigits[(w >> shift) & 15];
  }
  return out;
}

constexpr std::array<uint32_t, 64> kSha256K = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

}  // namespace

std::string Sha1Hex(std::string_view data) {
  std::array<uint32_t, 5> h = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
  std::array<uint32_t, 80> w{};
  ForEachShaBlock(data, [&](const unsigned char* block) {
    for (size_t i = 0; i < 16; ++i) w[i] = BigEndianWord(block + i * 4);
    for (size_t i = 16; i < 80; ++i)
      w[i] = RotateLeft(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (size_t i = 0; i < 80; ++i) {
      uint32_t f = 0, k = 0;
      if (i < 20) {
        f = (b & c) | (~b & d);
        k = 0x5a827999;
      } else if (i < 40) {
        f = b ^ c ^ d;
        k = 0x6ed9eba1;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8f1bbcdc;
      } else {
        f = b ^ c ^ d;
        k = 0xca62c1d6;
      }
      const uint32_t t = RotateLeft(a, 5) + f + e + k + w[i];
      e = d;
      d = c;
      c = RotateLeft(b, 30);
      b = a;
      a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
  });
  return WordsHex(h);
}

std::string Sha256Hex(std::string_view data) {
  std::array<uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<uint32_t, 64> w{};
  ForEachShaBlock(data, [&](const unsigned char* block) {
    for (size_t i = 0; i < 16; ++i) w[i] = BigEndianWord(block + i * 4);
    for (size_t i = 16; i < 64; ++i) {
      const uint32_t s0 = RotateRight(w[i - 15], 7) ^ RotateRight(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = RotateRight(w[i - 2], 17) ^ RotateRight(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::array<uint32_t, 8> v = h;
    for (size_t i = 0; i < 64; ++i) {
      const uint32_t s1 = RotateRight(v[4], 6) ^ RotateRight(v[4], 11) ^ RotateRight(v[4], 25);
      const uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
      const uint32_t t1 = v[7] + s1 + ch + kSha256K[i] + w[i];
      const uint32_t s0 = RotateRight(v[0], 2) ^ RotateRight(v[0], 13) ^ RotateRight(v[0], 22);
      const uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
      const uint32_t t2 = s0 + maj;
      v = {t1 + t2, v[0], v[1], v[2], v[3] + t1, v[4], v[5], v[6]};
    }
    for (size_t i = 0; i < 8; ++i) h[i] += v[i];
  });
  return WordsHex(h);
}

}  // namespace codex
