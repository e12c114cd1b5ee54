// Reading a whole file: the one home (a config file, an image, AGENTS.md, a
// rollout, /proc). It never throws: std::ifstream read through
// istreambuf_iterator throws from libstdc++ when a read fails midway (a
// directory: EISDIR; a /proc file of a process that just ended: ESRCH).
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

#include "base/status.h"

namespace codex {

// The bytes of `path`. kNotFound when it does not exist; kInvalidArgument
// when it is not a regular file (a directory, a FIFO...) and `regular_only`;
// kResourceExhausted when it holds more than `max_bytes`; kFailedPrecondition
// for any other failure to open or read. Each message is "<path>: <cause>",
// for the caller to say what the file was for and what to do.
Result<std::string> ReadWholeFile(const std::string& path,
                                  size_t max_bytes = std::numeric_limits<size_t>::max(),
                                  bool regular_only = true);

// Every byte readable from the open descriptor `fd` until end of file (a
// pipe, a terminal, a file: stdin). kFailedPrecondition "<name>: <cause>"
// when a read fails (a directory: EISDIR; a closed descriptor: EBADF);
// kResourceExhausted past `max_bytes`. `fd` stays open.
Result<std::string> ReadToEnd(int fd, const std::string& name,
                              size_t max_bytes = std::numeric_limits<size_t>::max());

// Writes `bytes` to `path` (created 0666 less the umask, or truncated),
// each failure named: "<path>: <cause>" (No space left on device, Is a
// directory, No such file or directory), kFailedPrecondition. Not atomic: for
// a file the user names (`-o FILE`), which may be a device or a pipe.
Status WriteWholeFile(const std::string& path, std::string_view bytes);

// Replaces `path` with `bytes` so that no reader, and no crash at any moment
// (SIGKILL, power loss), finds anything under the name but the old file or the
// whole new one: the one home of every whole-file write codex makes to a file
// that may already hold something (`sessions export -o`, `exec
// --output-last-message`, `/export`, config.toml edits). The bytes go to an
// unnamed file in the same directory (O_TMPFILE; a named ".NAME.tmp-PID-N"
// where the file system has none), which gets the old file's mode, is
// fdatasync'd and renamed over the name; the directory is then fsync'd. A
// symlink is followed (the file it points to is replaced, the link stays). A
// name that is not a regular file (a FIFO, /dev/stdout, a terminal) is written
// in place as WriteWholeFile does, and so is an existing file in a directory
// this user cannot write to. Errors as WriteWholeFile ("<path>: <cause>").
Status ReplaceWholeFile(const std::string& path, std::string_view bytes);

}  // namespace codex
