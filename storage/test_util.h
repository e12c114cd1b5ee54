// Test support for storage tests: a temporary directory removed on scope
// exit, and small item builders. Test-only; not linked into codex_storage.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "core/item.h"

namespace codex::storage::testing {

// A fresh directory under $TMPDIR (or /tmp), deleted with its contents.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "codex-storage-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace codex::storage::testing
