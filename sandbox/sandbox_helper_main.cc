// codex-sandbox-helper: the helper bubblewrap runs inside the sandbox's
// namespaces (sandbox/launcher.h), as a small executable that loads quickly.
// Installed beside `codex`; not meant to be run by hand.
#include <cstdio>
#include <cstring>

#include "sandbox/launcher.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], codex::sandbox::kHelperArg) == 0) {
    codex::sandbox::RunHelper(argc, argv);
  }
  std::fprintf(stderr,
               "error: codex-sandbox-helper is run by codex inside its sandbox, not by hand\n");
  return 2;
}
