// The wire format between SandboxServer (the client, in codex) and the
// sandbox server (sandbox_server.h), both built from this tree: no versioning.
#pragma once

#include <cstdint>

#include "sandbox/process.h"

namespace codex::sandbox::server_protocol {

inline constexpr uint32_t kMagic = 0x63735631;  // "csV1"
inline constexpr char kReady = 'R';             // the server applied its layers
inline constexpr uint32_t kMaxPayload = 64u << 20;

enum class RequestType : uint32_t { kSpawn = 1, kSignal = 2 };
inline constexpr uint32_t kFlagPty = 1;

// A request: the header, then `payload` bytes. kSpawn carries four
// descriptors (SCM_RIGHTS, with the header): stdin, stdout, stderr and the
// status pipe's write end; its payload is NUL-terminated strings: the working
// directory ("" = stay), the argument count in decimal, the arguments, then
// the environment ("NAME=value").
struct RequestHeader {
  uint32_t magic = kMagic;
  uint32_t type = 0;
  uint64_t id = 0;
  int32_t sig = 0;  // kSignal: the signal; SIGKILL = the command's whole tree
  uint32_t flags = 0;
  uint32_t payload = 0;
  uint16_t rows = 0;  // kFlagPty: the terminal size
  uint16_t cols = 0;
};

// What the keeper writes on a command's status pipe.
enum class StatusType : uint32_t { kStarted = 1, kStartFailed = 2, kExited = 3 };
struct StatusMessage {
  uint32_t type = 0;
  int32_t value = 0;             // kStarted: the pid; kExited: the wait status
  internal::ChildReport report;  // kStartFailed
};

}  // namespace codex::sandbox::server_protocol
