#include "testing/files.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "base/file.h"

namespace codex::testing {

std::string ReadFile(const std::filesystem::path& path) {
  // Any file (a /proc file, a FIFO...), any size; "" when it cannot be read.
  auto bytes = ReadWholeFile(path.string(), std::numeric_limits<size_t>::max(),
                             /*regular_only=*/false);
  return bytes.ok() ? std::move(*bytes) : std::string();
}

void WriteFile(const std::filesystem::path& path, std::string_view content) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "error: a test cannot write %s\n", path.c_str());
    std::abort();
  }
}

}  // namespace codex::testing
