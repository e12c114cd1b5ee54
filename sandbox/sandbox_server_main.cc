// codex-sandbox-server: the per-session sandbox server (sandbox_server.h) as
// a small executable that loads quickly. Installed beside `codex`; not meant
// to be run by hand.
#include <cstdio>
#include <cstring>

#include "sandbox/sandbox_server.h"

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], codex::sandbox::kServerArg) == 0) {
    codex::sandbox::RunSandboxServer(argc, argv);
  }
  std::fprintf(stderr,
               "error: codex-sandbox-server is started by codex for its sandbox, not by hand\n");
  return 2;
}
