#include "core/view_image.h"

#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "base/file.h"

namespace codex::core {
namespace {

using Json = nlohmann::ordered_json;

std::string Base64(const std::string& data) {
  static constexpr char kChars[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(data[i]) << 16) |
                       (static_cast<uint8_t>(data[i + 1]) << 8) | static_cast<uint8_t>(data[i + 2]);
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += kChars[(v >> 6) & 63];
    out += kChars[v & 63];
  }
  if (i < data.size()) {
    uint32_t v = static_cast<uint8_t>(data[i]) << 16;
    if (i + 1 < data.size()) v |= static_cast<uint8_t>(data[i + 1]) << 8;
    out += kChars[(v >> 18) & 63];
    out += kChars[(v >> 12) & 63];
    out += i + 1 < data.size() ? kChars[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// The MIME type from the file's first bytes; "" when not an image we send.
std::string SniffMime(const std::string& data) {
  auto starts = [&](std::string_view magic, size_t at = 0) {
    return data.size() >= at + magic.size() && data.compare(at, magic.size(), magic) == 0;
  };
  if (starts("\x89PNG\r\n\x1a\n")) return "image/png";
  if (starts("\xff\xd8\xff")) return "image/jpeg";
  if (starts("GIF87a") || starts("GIF89a")) return "image/gif";
  if (starts("RIFF") && starts("WEBP", 8)) return "image/webp";
  return "";
}

}  // namespace

std::string ViewImageToolJson() {
  Json j = {{"type", "function"},
            {"name", "view_image"},
            {"description",
             "Shows you a local image file (PNG, JPEG, GIF or WebP) from the user's machine."},
            {"strict", false},
            {"parameters",
             {{"type", "object"},
              {"properties",
               {{"path",
                 {{"type", "string"},
                  {"description",
                   "The image's path, absolute or relative to the session's "
                   "directory."}}}}},
              {"required", Json::array({"path"})},
              {"additionalProperties", false}}}};
  return j.dump();
}

Result<std::string> ViewImageOutputJson(const std::string& path, const std::string& cwd) {
  if (path.empty()) return InvalidArgumentError("view_image: `path` must name an image file");
  const std::string full = path[0] == '/' ? path : cwd + "/" + path;
  struct stat st;
  if (::stat(full.c_str(), &st) != 0) {
    return Status(StatusCode::kNotFound, "unable to locate image at `" + full + "`");
  }
  if (!S_ISREG(st.st_mode)) {
    return InvalidArgumentError("image path `" + full + "` is not a file");
  }
  if (static_cast<size_t>(st.st_size) > kMaxViewImageBytes) {
    return InvalidArgumentError("image `" + full + "` is larger than 20 MiB");
  }
  auto read = ReadWholeFile(full, kMaxViewImageBytes);
  if (!read.ok()) return Status(StatusCode::kNotFound, "unable to read image at `" + full + "`");
  const std::string data = std::move(*read);
  const std::string mime = SniffMime(data);
  if (mime.empty()) {
    return InvalidArgumentError("`" + full + "` is not a PNG, JPEG, GIF or WebP image");
  }
  Json out = Json::array(
      {{{"type", "input_image"}, {"image_url", "data:" + mime + ";base64," + Base64(data)}}});
  return out.dump();
}

}  // namespace codex::core
