// view_image: a local image file becomes an `input_image` content part of the
// tool's output (a data URL), so the model sees the picture.
#pragma once

#include <string>

#include "base/status.h"

namespace codex::core {

inline constexpr size_t kMaxViewImageBytes = 20u << 20;

// The `tools` entry.
std::string ViewImageToolJson();

// The function_call_output `output` for the image at `path` (relative to
// `cwd`): the JSON array [{"type":"input_image","image_url":"data:<mime>;base64,..."}].
// Errors (one line, for the model): kNotFound (no such file), kInvalidArgument
// (a directory, not PNG/JPEG/GIF/WebP, larger than kMaxViewImageBytes).
Result<std::string> ViewImageOutputJson(const std::string& path, const std::string& cwd);

}  // namespace codex::core
