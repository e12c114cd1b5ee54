#include "base/path.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "base/scratch_dir_test.h"

using namespace codex;
namespace fs = std::filesystem;
using codex::base_test::ScratchDir;

TEST_CASE("CanonicalPath resolves symlinks, dots and trailing slashes to one text") {
  ScratchDir tmp;
  const fs::path real = tmp.path / "real" / "proj";
  fs::create_directories(real);
  fs::create_directory_symlink(real, tmp.path / "abs-link");
  fs::create_directory_symlink("real/proj/", tmp.path / "rel-link");
  fs::create_directory_symlink(tmp.path / "rel-link", tmp.path / "chain");
  const std::string want = real.string();
  for (const std::string& p :
       {real.string(), (tmp.path / "abs-link").string(), (tmp.path / "rel-link/").string(),
        (tmp.path / "chain" / ".").string(), (tmp.path / "real" / ".." / "abs-link" / "").string(),
        (tmp.path / "." / "real" / "proj").string() + "//"}) {
    INFO(p);
    CHECK(CanonicalPath(p) == want);
  }
  // A path below a symlink that does not exist (yet): the existing part resolves.
  CHECK(CanonicalPath((tmp.path / "abs-link" / "new" / "").string()) == want + "/new");
}

TEST_CASE("CanonicalPath: relative paths, another machine's path, the root, empty") {
  ScratchDir tmp;
  const fs::path old = fs::current_path();
  fs::create_directories(tmp.path / "d");
  fs::current_path(tmp.path);
  CHECK(CanonicalPath("d/") == (tmp.path / "d").string());
  CHECK(CanonicalPath(".") == tmp.path.string());
  fs::current_path(old);
  CHECK(CanonicalPath("/no/such/dir/../x/") == "/no/such/x");
  CHECK(CanonicalPath("/") == "/");
  CHECK(CanonicalPath("") == "");
}
