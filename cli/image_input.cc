#include "cli/image_input.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/file.h"

namespace codex::cli {

std::string_view SniffImageMime(std::string_view b) {
  if (b.starts_with("\x89PNG\r\n\x1a\n")) return "image/png";
  if (b.starts_with("\xff\xd8\xff")) return "image/jpeg";
  if (b.starts_with("GIF87a") || b.starts_with("GIF89a")) return "image/gif";
  if (b.size() >= 12 && b.starts_with("RIFF") && b.substr(8, 4) == "WEBP") return "image/webp";
  return "";
}

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n = (static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16) |
                       (static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                       static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 2]));
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::string> ImageDataUrl(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    // -i takes FILE... as Codex's does, so a prompt right after it is read as a file.
    return InvalidArgumentError("--image " + path +
                                ": no such file; check the path (a prompt after -i FILE... "
                                "needs '--' before it)");
  }
  if (!std::filesystem::is_regular_file(path, ec)) {
    return InvalidArgumentError("--image " + path + ": not a regular file; give an image file");
  }
  auto read = ReadWholeFile(path);
  if (!read.ok()) {
    return InvalidArgumentError("--image " + read.status().message() + "; check its permissions");
  }
  const std::string bytes = std::move(*read);
  const std::string_view mime = SniffImageMime(bytes);
  if (mime.empty()) {
    return InvalidArgumentError("--image " + path +
                                ": not a PNG, JPEG, GIF or WebP image; attach one of those");
  }
  return "data:" + std::string(mime) + ";base64," + Base64Encode(bytes);
}

}  // namespace codex::cli
