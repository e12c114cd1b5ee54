// Images attached with `-i/--image FILE`: read and sent as an input_image
// part whose image_url is a base64 data: URL, as Codex does. The MIME type
// comes from the file's content (PNG, JPEG, GIF, WebP), not its name.
// Pure functions except for reading the file; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace codex::cli {

// "image/png", "image/jpeg", "image/gif", "image/webp", or "" when `bytes`
// do not start like one of those.
std::string_view SniffImageMime(std::string_view bytes);

// Standard base64 with padding.
std::string Base64Encode(std::string_view bytes);

// "data:<mime>;base64,<data>" for the image at `path`. kInvalidArgument,
// naming the file, when it is missing, unreadable, not a regular file or not
// an image of a supported type.
Result<std::string> ImageDataUrl(const std::string& path);

}  // namespace codex::cli
