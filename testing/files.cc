#include "testing/files.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>

namespace codex::testing {

std::string ReadFile(const std::filesystem::path& path) {
  // A read can fail midway (a /proc file of a process that just ended:
  // ESRCH), and libstdc++'s filebuf throws then: the contract is "".
  try {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return "";
  }
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
